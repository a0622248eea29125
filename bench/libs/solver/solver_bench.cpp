// Dense factorisations on the GPU through the accel device actor, beside the raw cuSOLVER call a user would write
// (same process, same GPU, same inputs, a handle on a stream of its own): getrf, potrf (lower), syevd (values and
// vectors), QR (geqrf + orgqr), ormqr (Qᵀ C of an n x n C, A factored once) and gels (least squares of an n x n/2 A
// and one right-hand side; the raw call is cuSOLVER's own <t><t>gels, which needs no cuBLAS of its caller) at n = 256,
// 1024 and 4096, gesvd and gesvdj (thin) at 256 and 1024, a batch of 64 potrf of 32 x 32 (potrfBatched) and batches
// of 4096 gesvdj of 16 x 16 and 32 x 32 (gesvdjBatched), in f32 and f64. Factorisations overwrite their input, so
// every call factors a fresh copy (ormqr: C, gels: A and B), restored by a device-to-device copy that is not timed.
// What is timed is one call's round trip: for accel, the request until its future is ready (the infos read back and
// turned into its status); for cuSOLVER, the call, the copy of devInfo to the host that a correct caller makes, and
// cudaStreamSynchronize. One JSON line per routine, dtype, size and variant:
//   {"bench":"solver","routine":"getrf","dtype":"f32","n":256,"batch":1,"variant":"accel","median_us":…,"min_us":…,
//    "reps":…}
// Usage: solver_bench [routines, default getrf,potrf,syevd,qr,ormqr,gels,gesvd,potrf_batched; also gesvdj,
//                     gesvdj_batched]
//                     [sizes, default 256,1024,4096]
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/libs/solver/dense.hpp"
#include "common/csv_report.hpp"
#include "common/cuda_checks.hpp"

namespace {

using namespace accel;
using Clock = std::chrono::steady_clock;
using bench::micros;
using bench::percentile;
using bench::require;

using bench::check_cuda;
void check_solver(cusolverStatus_t s, const char* what) {
  bench::check_library(s, CUSOLVER_STATUS_SUCCESS, "cuSOLVER", what);
}

// qr is geqrf then orgqr (Q and R, as torch.linalg.qr); gesvd and gesvdj the thin U, S and Vᵀ or V (as
// torch.linalg.svd with full_matrices=False).
enum class Routine { getrf, potrf, syevd, qr, ormqr, gels, gesvd, gesvdj };

const char* name(Routine r) {
  switch (r) {
    case Routine::getrf: return "getrf";
    case Routine::potrf: return "potrf";
    case Routine::syevd: return "syevd";
    case Routine::qr: return "geqrf+orgqr";
    case Routine::ormqr: return "ormqr";
    case Routine::gels: return "gels";
    case Routine::gesvd: return "gesvd";
    case Routine::gesvdj: return "gesvdj";
  }
  return "?";
}

// getrf, qr, ormqr, gels, gesvd: uniform in [-1, 1]; potrf and syevd: symmetric, with n on the diagonal for potrf
// (positive definite by Gershgorin, and cheap to make at n = 4096, unlike M Mᵀ).
template <class T>
std::vector<T> input(Routine routine, std::int64_t n, std::mt19937_64& rng) {
  const bool general = routine != Routine::potrf && routine != Routine::syevd;
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<T> a(static_cast<std::size_t>(n * n));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = general ? 0 : j; i < n; ++i) {
      const T v = static_cast<T>(i == j && routine == Routine::potrf ? static_cast<double>(n) : uniform(rng));
      a[j * n + i] = v;
      a[i * n + j] = general ? a[i * n + j] : v;
    }
  return a;
}

// The raw library calls, as a user would write them for one shape.
template <class T>
struct Direct {
  static constexpr bool kF64 = std::is_same_v<T, double>;
  Routine routine;
  int n;
  int batch;
  cudaStream_t stream{};
  cusolverDnHandle_t handle{};
  T *a{}, *pristine{}, *work{}, *w{}, *u{}, *vt{}, *rwork{};
  int *ipiv{}, *info{}, *host_info{};
  T** matrices{};  // potrfBatched's array of addresses
  gesvdjInfo_t params{};
  int lwork = 0;
  std::size_t gels_bytes = 0;  // <t><t>gels's workspace, in bytes

  // gels: A is the first n/2 columns of the input, B its last column (in u); X goes to vt.
  int columns() const { return routine == Routine::gels ? n / 2 : n; }

  Direct(Routine r, const std::vector<T>& host, int size, int count) : routine(r), n(size), batch(count) {
    const std::size_t bytes = host.size() * sizeof(T);
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    check_solver(cusolverDnCreate(&handle), "cusolverDnCreate");
    check_solver(cusolverDnSetStream(handle, stream), "cusolverDnSetStream");
    check_cuda(cudaMalloc(&a, bytes), "a");
    check_cuda(cudaMalloc(&pristine, bytes), "pristine");
    check_cuda(cudaMalloc(&w, std::size_t(batch) * n * sizeof(T)), "w");
    check_cuda(cudaMalloc(&u, bytes), "u");
    check_cuda(cudaMalloc(&vt, bytes), "vt");
    check_cuda(cudaMalloc(&rwork, n * sizeof(T)), "rwork");
    check_cuda(cudaMalloc(&ipiv, n * sizeof(int)), "ipiv");
    check_cuda(cudaMalloc(&info, batch * sizeof(int)), "info");
    check_cuda(cudaMallocHost(&host_info, batch * sizeof(int)), "host info");
    check_cuda(cudaMemcpy(pristine, host.data(), bytes, cudaMemcpyHostToDevice), "upload");
    std::vector<T*> addresses;
    for (int i = 0; i < batch; ++i) addresses.push_back(a + static_cast<std::size_t>(i) * n * n);
    check_cuda(cudaMalloc(&matrices, batch * sizeof(T*)), "matrices");
    check_cuda(cudaMemcpy(matrices, addresses.data(), batch * sizeof(T*), cudaMemcpyHostToDevice), "addresses");
    if (routine == Routine::getrf) {
      check_solver(kF64 ? cusolverDnDgetrf_bufferSize(handle, n, n, reinterpret_cast<double*>(a), n, &lwork)
                        : cusolverDnSgetrf_bufferSize(handle, n, n, reinterpret_cast<float*>(a), n, &lwork),
                   "getrf_bufferSize");
    } else if (routine == Routine::potrf) {
      check_solver(
          kF64 ? cusolverDnDpotrf_bufferSize(handle, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<double*>(a), n, &lwork)
               : cusolverDnSpotrf_bufferSize(handle, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<float*>(a), n, &lwork),
          "potrf_bufferSize");
    } else if (routine == Routine::qr) {
      int orgqr_lwork = 0;
      if constexpr (kF64) {
        check_solver(cusolverDnDgeqrf_bufferSize(handle, n, n, a, n, &lwork), "geqrf_bufferSize");
        check_solver(cusolverDnDorgqr_bufferSize(handle, n, n, n, a, n, w, &orgqr_lwork), "orgqr_bufferSize");
      } else {
        check_solver(cusolverDnSgeqrf_bufferSize(handle, n, n, a, n, &lwork), "geqrf_bufferSize");
        check_solver(cusolverDnSorgqr_bufferSize(handle, n, n, n, a, n, w, &orgqr_lwork), "orgqr_bufferSize");
      }
      lwork = std::max(lwork, orgqr_lwork);
    } else if (routine == Routine::ormqr) {  // A factored here once: the calls apply its Qᵀ to fresh copies of C
      check_cuda(cudaMemcpy(a, pristine, bytes, cudaMemcpyDeviceToDevice), "a");
      int geqrf_lwork = 0;
      if constexpr (kF64) {
        check_solver(cusolverDnDgeqrf_bufferSize(handle, n, n, a, n, &geqrf_lwork), "geqrf_bufferSize");
        check_solver(cusolverDnDormqr_bufferSize(handle, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, n, n, n, a, n, w, u, n, &lwork),
                     "ormqr_bufferSize");
      } else {
        check_solver(cusolverDnSgeqrf_bufferSize(handle, n, n, a, n, &geqrf_lwork), "geqrf_bufferSize");
        check_solver(cusolverDnSormqr_bufferSize(handle, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, n, n, n, a, n, w, u, n, &lwork),
                     "ormqr_bufferSize");
      }
      check_cuda(cudaMalloc(&work, std::max({lwork, geqrf_lwork, 1}) * sizeof(T)), "work");
      if constexpr (kF64) {
        check_solver(cusolverDnDgeqrf(handle, n, n, a, n, w, work, geqrf_lwork, info), "geqrf");
      } else {
        check_solver(cusolverDnSgeqrf(handle, n, n, a, n, w, work, geqrf_lwork, info), "geqrf");
      }
      check_cuda(cudaStreamSynchronize(stream), "geqrf");
      return;
    } else if (routine == Routine::gels) {
      if constexpr (kF64) {
        check_solver(
            cusolverDnDDgels_bufferSize(handle, n, columns(), 1, a, n, u, n, vt, columns(), nullptr, &gels_bytes),
            "gels_bufferSize");
      } else {
        check_solver(
            cusolverDnSSgels_bufferSize(handle, n, columns(), 1, a, n, u, n, vt, columns(), nullptr, &gels_bytes),
            "gels_bufferSize");
      }
      lwork = static_cast<int>((gels_bytes + sizeof(T) - 1) / sizeof(T));
    } else if (routine == Routine::gesvdj) {
      const auto jobz = CUSOLVER_EIG_MODE_VECTOR;
      check_solver(cusolverDnCreateGesvdjInfo(&params), "cusolverDnCreateGesvdjInfo");
      if constexpr (kF64) {
        check_solver(
            batch > 1
                ? cusolverDnDgesvdjBatched_bufferSize(handle, jobz, n, n, a, n, w, u, n, vt, n, &lwork, params, batch)
                : cusolverDnDgesvdj_bufferSize(handle, jobz, 1, n, n, a, n, w, u, n, vt, n, &lwork, params),
            "gesvdj_bufferSize");
      } else {
        check_solver(
            batch > 1
                ? cusolverDnSgesvdjBatched_bufferSize(handle, jobz, n, n, a, n, w, u, n, vt, n, &lwork, params, batch)
                : cusolverDnSgesvdj_bufferSize(handle, jobz, 1, n, n, a, n, w, u, n, vt, n, &lwork, params),
            "gesvdj_bufferSize");
      }
    } else if (routine == Routine::gesvd) {
      check_solver(
          kF64 ? cusolverDnDgesvd_bufferSize(handle, n, n, &lwork) : cusolverDnSgesvd_bufferSize(handle, n, n, &lwork),
          "gesvd_bufferSize");
    } else {
      check_solver(
          kF64 ? cusolverDnDsyevd_bufferSize(handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n,
                                             reinterpret_cast<double*>(a), n, reinterpret_cast<double*>(w), &lwork)
               : cusolverDnSsyevd_bufferSize(handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n,
                                             reinterpret_cast<float*>(a), n, reinterpret_cast<float*>(w), &lwork),
          "syevd_bufferSize");
    }
    check_cuda(cudaMalloc(&work, std::max(lwork, 1) * sizeof(T)), "work");
  }
  ~Direct() {
    cudaStreamSynchronize(stream);
    cusolverDnDestroy(handle);
    if (params != nullptr) cusolverDnDestroyGesvdjInfo(params);
    for (void* p : {static_cast<void*>(a), static_cast<void*>(pristine), static_cast<void*>(work),
                    static_cast<void*>(w), static_cast<void*>(u), static_cast<void*>(vt), static_cast<void*>(rwork),
                    static_cast<void*>(ipiv), static_cast<void*>(info), static_cast<void*>(matrices)})
      cudaFree(p);
    cudaFreeHost(host_info);
    cudaStreamDestroy(stream);
  }
  void restore() {
    const std::size_t elements = std::size_t(batch) * n * n;
    check_cuda(cudaMemcpyAsync(routine == Routine::ormqr ? u : a, pristine, elements * sizeof(T),
                               cudaMemcpyDeviceToDevice, stream),
               "restore");
    if (routine == Routine::gels) {
      check_cuda(
          cudaMemcpyAsync(u, pristine + std::size_t(n) * (n - 1), n * sizeof(T), cudaMemcpyDeviceToDevice, stream),
          "restore b");
    }
    check_cuda(cudaStreamSynchronize(stream), "sync");
  }
  void call() {
    const auto jobz = CUSOLVER_EIG_MODE_VECTOR;
    int iterations = 0;  // gels's
    if (routine == Routine::ormqr) {
      if constexpr (kF64) {
        check_solver(cusolverDnDormqr(handle, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, n, n, n, a, n, w, u, n, work, lwork, info),
                     "ormqr");
      } else {
        check_solver(cusolverDnSormqr(handle, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, n, n, n, a, n, w, u, n, work, lwork, info),
                     "ormqr");
      }
    } else if (routine == Routine::gels) {
      if constexpr (kF64) {
        check_solver(
            cusolverDnDDgels(handle, n, columns(), 1, a, n, u, n, vt, columns(), work, gels_bytes, &iterations, info),
            "gels");
      } else {
        check_solver(
            cusolverDnSSgels(handle, n, columns(), 1, a, n, u, n, vt, columns(), work, gels_bytes, &iterations, info),
            "gels");
      }
    } else if (routine == Routine::gesvdj) {
      if constexpr (kF64) {
        check_solver(
            batch > 1
                ? cusolverDnDgesvdjBatched(handle, jobz, n, n, a, n, w, u, n, vt, n, work, lwork, info, params, batch)
                : cusolverDnDgesvdj(handle, jobz, 1, n, n, a, n, w, u, n, vt, n, work, lwork, info, params),
            "gesvdj");
      } else {
        check_solver(
            batch > 1
                ? cusolverDnSgesvdjBatched(handle, jobz, n, n, a, n, w, u, n, vt, n, work, lwork, info, params, batch)
                : cusolverDnSgesvdj(handle, jobz, 1, n, n, a, n, w, u, n, vt, n, work, lwork, info, params),
            "gesvdj");
      }
    } else if (batch > 1) {
      if constexpr (kF64) {
        check_solver(cusolverDnDpotrfBatched(handle, CUBLAS_FILL_MODE_LOWER, n, matrices, n, info, batch),
                     "potrfBatched");
      } else {
        check_solver(cusolverDnSpotrfBatched(handle, CUBLAS_FILL_MODE_LOWER, n, matrices, n, info, batch),
                     "potrfBatched");
      }
    } else if constexpr (kF64) {
      if (routine == Routine::getrf) check_solver(cusolverDnDgetrf(handle, n, n, a, n, work, ipiv, info), "getrf");
      if (routine == Routine::potrf)
        check_solver(cusolverDnDpotrf(handle, CUBLAS_FILL_MODE_LOWER, n, a, n, work, lwork, info), "potrf");
      if (routine == Routine::syevd)
        check_solver(
            cusolverDnDsyevd(handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a, n, w, work, lwork, info),
            "syevd");
      if (routine == Routine::qr) {
        check_solver(cusolverDnDgeqrf(handle, n, n, a, n, w, work, lwork, info), "geqrf");
        check_solver(cusolverDnDorgqr(handle, n, n, n, a, n, w, work, lwork, info), "orgqr");
      }
      if (routine == Routine::gesvd)
        check_solver(cusolverDnDgesvd(handle, 'S', 'S', n, n, a, n, w, u, n, vt, n, work, lwork, rwork, info), "gesvd");
    } else {
      if (routine == Routine::getrf) check_solver(cusolverDnSgetrf(handle, n, n, a, n, work, ipiv, info), "getrf");
      if (routine == Routine::potrf)
        check_solver(cusolverDnSpotrf(handle, CUBLAS_FILL_MODE_LOWER, n, a, n, work, lwork, info), "potrf");
      if (routine == Routine::syevd)
        check_solver(
            cusolverDnSsyevd(handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a, n, w, work, lwork, info),
            "syevd");
      if (routine == Routine::qr) {
        check_solver(cusolverDnSgeqrf(handle, n, n, a, n, w, work, lwork, info), "geqrf");
        check_solver(cusolverDnSorgqr(handle, n, n, n, a, n, w, work, lwork, info), "orgqr");
      }
      if (routine == Routine::gesvd)
        check_solver(cusolverDnSgesvd(handle, 'S', 'S', n, n, a, n, w, u, n, vt, n, work, lwork, rwork, info), "gesvd");
    }
    check_cuda(cudaMemcpyAsync(host_info, info, batch * sizeof(int), cudaMemcpyDeviceToHost, stream), "info");
    check_cuda(cudaStreamSynchronize(stream), "sync");
    for (int i = 0; i < batch; ++i) {
      if (host_info[i] != 0) {
        fmt::print(stderr, "{}: info {} of matrix {}\n", name(routine), host_info[i], i);
        std::exit(1);
      }
    }
  }
};

// The same call through the device actor.
template <class T>
struct Actor {
  Device device;
  Buffer<T> a, pristine, w, u, vt;  // ormqr: C in u; gels: B in u
  Buffer<std::int32_t> ipiv, info;
  Routine routine;
  std::int64_t n;
  std::int64_t batch;

  Actor(Device d, Routine r, const std::vector<T>& host, std::int64_t size, std::int64_t count)
      : device(std::move(d)), routine(r), n(size), batch(count) {
    a = require(device.allocate<T>(host.size()).wait(), "a");
    pristine = require(device.allocate<T>(host.size()).wait(), "pristine");
    w = require(device.allocate<T>(static_cast<std::uint64_t>(n * batch)).wait(), "w");
    u = require(device.allocate<T>(host.size()).wait(), "u");
    vt = require(device.allocate<T>(host.size()).wait(), "vt");
    ipiv = require(device.allocate<std::int32_t>(static_cast<std::uint64_t>(n)).wait(), "ipiv");
    info = require(device.allocate<std::int32_t>(static_cast<std::uint64_t>(batch)).wait(), "info");
    require(device.upload(std::span<const T>(host), pristine).wait(), "upload");
    if (routine == Routine::ormqr) {  // A factored here once, as for the raw calls
      require(device.ask(CopyOnDevice{.source = pristine, .destination = a, .count = a.size()}).wait(), "a");
      require(device.ask(solver::Geqrf{.dtype = dtype_of<T>(), .m = n, .n = n, .a = a, .tau = w}).wait(), "geqrf");
    }
  }
  void restore() {
    require(
        device
            .ask(CopyOnDevice{.source = pristine, .destination = routine == Routine::ormqr ? u : a, .count = a.size()})
            .wait(),
        "restore");
    if (routine == Routine::gels) {
      const auto b = static_cast<std::uint64_t>(n);
      require(device.ask(CopyOnDevice{.source = pristine, .source_offset = b * (b - 1), .destination = u, .count = b})
                  .wait(),
              "restore b");
    }
  }
  void call() {
    const DType dtype = dtype_of<T>();
    Future<Done> done;
    if (routine == Routine::getrf)
      done = device.ask(solver::Getrf{.dtype = dtype, .n = n, .a = a, .ipiv = ipiv, .info = info});
    if (routine == Routine::potrf)
      done = device.ask(solver::Potrf{.dtype = dtype, .n = n, .batch = batch, .a = a, .info = info});
    if (routine == Routine::syevd) {
      done = device.ask(solver::Syevd{
          .dtype = dtype, .job = solver::EigenJob::values_and_vectors, .n = n, .a = a, .w = w, .info = info});
    }
    if (routine == Routine::qr) {
      (void)device.ask(solver::Geqrf{.dtype = dtype, .m = n, .n = n, .a = a, .tau = w});
      done = device.ask(solver::Orgqr{.dtype = dtype, .m = n, .n = n, .k = n, .a = a, .tau = w});
    }
    if (routine == Routine::ormqr) {
      done = device.ask(solver::Ormqr{
          .dtype = dtype, .transpose = Transpose::transpose, .m = n, .n = n, .k = n, .a = a, .tau = w, .c = u});
    }
    if (routine == Routine::gels)
      done = device.ask(
          solver::Gels{.dtype = dtype, .m = n, .n = n / 2, .nrhs = 1, .lda = n, .a = a, .b = u, .info = info});
    if (routine == Routine::gesvd)
      done = device.ask(solver::Gesvd{.dtype = dtype, .m = n, .n = n, .a = a, .s = w, .u = u, .vt = vt, .info = info});
    if (routine == Routine::gesvdj) {
      done = device.ask(solver::Gesvdj{
          .dtype = dtype, .m = n, .n = n, .batch = batch, .a = a, .s = w, .u = u, .v = vt, .info = info});
    }
    require(done.wait(), name(routine));
  }
};

template <class Runner>
std::vector<double> time_calls(Runner& runner, int warm, int reps) {
  std::vector<double> us;
  for (int i = 0; i < warm + reps; ++i) {
    runner.restore();
    const auto t0 = Clock::now();
    runner.call();
    if (i >= warm) us.push_back(micros(Clock::now() - t0));
  }
  return us;
}

void report(Routine routine, DType dtype, std::int64_t n, std::int64_t batch, const char* variant,
            const std::vector<double>& us) {
  fmt::print(
      "{{\"bench\":\"solver\",\"routine\":\"{}\",\"dtype\":\"{}\",\"n\":{},\"batch\":{},\"variant\":\"{}\","
      "\"median_us\":{:.1f},\"min_us\":{:.1f},\"reps\":{}}}\n",
      name(routine), to_string(dtype), n, batch, variant, percentile(us, 0.5), percentile(us, 0.0), us.size());
  std::fflush(stdout);
}

template <class T>
void measure(Device& device, Routine routine, std::int64_t n, std::int64_t batch, std::mt19937_64& rng) {
  std::vector<T> a;
  for (std::int64_t i = 0; i < batch; ++i) {
    const std::vector<T> one = input<T>(routine, n, rng);
    a.insert(a.end(), one.begin(), one.end());
  }
  const bool slow = routine == Routine::syevd || routine == Routine::gesvd || routine == Routine::gesvdj;
  const int reps = n <= 256 ? (slow ? 40 : 200) : n <= 1024 ? (slow ? 10 : 40) : slow ? 4 : 10;
  const int warm = n <= 1024 ? 5 : 1;
  {
    Actor<T> actor(device, routine, a, n, batch);
    report(routine, dtype_of<T>(), n, batch, "accel", time_calls(actor, warm, reps));
  }
  Direct<T> direct(routine, a, static_cast<int>(n), static_cast<int>(batch));
  report(routine, dtype_of<T>(), n, batch, batch > 1 ? "cusolver_batched" : "cusolver", time_calls(direct, warm, reps));
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> routines =
      split(argc > 1 ? argv[1] : "getrf,potrf,syevd,qr,ormqr,gels,gesvd,potrf_batched");
  const std::vector<std::string> sizes = split(argc > 2 ? argv[2] : "256,1024,4096");
  System system;
  Result<Device> device = Device::open(system, {.kind = DeviceKind::cuda});
  if (!device.ok()) {
    fmt::print(stderr, "solver_bench needs a GPU: {}\n", device.status().to_string());
    return 77;
  }
  std::mt19937_64 rng(42);
  for (const std::string& r : routines) {
    if (r == "potrf_batched") {  // the batched shape: 64 x (32 x 32)
      measure<float>(*device, Routine::potrf, 32, 64, rng);
      measure<double>(*device, Routine::potrf, 32, 64, rng);
      continue;
    }
    if (r == "gesvdj_batched") {  // batches of small matrices, as torch.linalg.svd takes them
      for (std::int64_t n : {16, 32}) {
        measure<float>(*device, Routine::gesvdj, n, 4096, rng);
        measure<double>(*device, Routine::gesvdj, n, 4096, rng);
      }
      continue;
    }
    const Routine routine = r == "potrf"    ? Routine::potrf
                            : r == "syevd"  ? Routine::syevd
                            : r == "qr"     ? Routine::qr
                            : r == "ormqr"  ? Routine::ormqr
                            : r == "gels"   ? Routine::gels
                            : r == "gesvd"  ? Routine::gesvd
                            : r == "gesvdj" ? Routine::gesvdj
                                            : Routine::getrf;
    for (const std::string& size : sizes) {
      const std::int64_t n = std::stoll(size);
      if ((routine == Routine::gesvd || routine == Routine::gesvdj) && n > 1024)
        continue;  // an SVD at 4096 takes seconds a call (PyTorch's peer stops at 1024 too)
      measure<float>(*device, routine, n, 1, rng);
      measure<double>(*device, routine, n, 1, rng);
    }
  }
  return 0;
}
