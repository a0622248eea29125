// Dense factorisations on the GPU through the accel device actor, beside the raw cuSOLVER call a user would write
// (same process, same GPU, same inputs, a handle on a stream of its own): getrf, potrf (lower), syevd (values and
// vectors), QR (geqrf + orgqr), ormqr (Qᵀ C of an n x n C, A factored once) and gels (least squares of an n x n/2 A
// and one right-hand side; the raw call is cuSOLVER's own <t><t>gels, which needs no cuBLAS of its caller) at n = 256,
// 1024 and 4096, gesvd (thin) at 256 and 1024 and gesvdj (thin) at every size asked, batches of 64 potrf of 32 x 32 and
// 64 x 64 and of 8 of 256 x 256 (potrfBatched), batches of 64 getrf of 32 x 32 and 64 x 64 (getrf_batched: cuSOLVER has
// no batched getrf, so the raw call is cuBLAS's <t>getrfBatched, which PyTorch also takes for batches), batches of 64
// QR of 32 x 32 and 64 x 64 (qr_batched: cuSOLVER has no batched QR, so the raw call is a loop of geqrf and orgqr, as
// PyTorch's) and batches of 4096 gesvdj of 16 x 16 and 32 x 32 and of 64 of 32 x 32 (gesvdjBatched), in f32 and f64,
// getrf of a c64 matrix at n = 1024 (cusolverDnCgetrf; getrf_c64, uniform [-1, 1] in both parts) and syevd of a
// Hermitian c64 matrix at 256 and 1024 (cusolverDnCheevd; syevd_c64). Factorisations overwrite their input, so every
// call factors a fresh copy (ormqr: C, gels: A and B), restored by a device-to-device copy that is not timed. What is
// timed is one call's round trip: for accel, the request until its future is ready (the infos read back and turned into
// its status); for cuSOLVER, the call, the copy of devInfo to the host that a correct caller makes, and
// cudaStreamSynchronize. One JSON line per routine, dtype, size and variant:
//   {"bench":"solver","routine":"getrf","dtype":"f32","n":256,"batch":1,"variant":"accel","median_us":…,"min_us":…,
//    "reps":…}
// Usage: solver_bench [routines, default getrf,potrf,syevd,qr,ormqr,gels,gesvd,potrf_batched,getrf_c64; also gesvdj,
//                     gesvdj_batched, getrf_batched, qr_batched, syevd_c64]
//                     [sizes, default 256,1024,4096]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <random>
#include <string>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/libs/solver/dense.hpp"
#include "common/csv_report.hpp"
#include "common/open_gpu.hpp"
#include "solver_bench_direct.hpp"

namespace {

using namespace accel;
using Clock = std::chrono::steady_clock;
using bench::micros;
using bench::percentile;
using bench::require;
using solver_bench::Direct;
using solver_bench::name;
using solver_bench::Routine;

using c64 = std::complex<float>;

// getrf, qr, ormqr, gels, gesvd: uniform in [-1, 1]; potrf and syevd: symmetric, with n on the diagonal for potrf
// (positive definite by Gershgorin, and cheap to make at n = 4096, unlike M Mᵀ). c64: uniform in both parts, made
// Hermitian for syevd (cuSOLVER's heevd).
template <class T>
std::vector<T> input(Routine routine, std::int64_t n, std::mt19937_64& rng) {
  const bool general = routine != Routine::potrf && routine != Routine::syevd;
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<T> a(static_cast<std::size_t>(n * n));
  if constexpr (std::is_same_v<T, c64>) {
    for (T& v : a) {
      const auto re = static_cast<float>(uniform(rng));
      v = T(re, static_cast<float>(uniform(rng)));
    }
    if (!general) {
      for (std::int64_t j = 0; j < n; ++j) {
        a[j * n + j] = a[j * n + j].real();
        for (std::int64_t i = j + 1; i < n; ++i) a[i * n + j] = std::conj(a[j * n + i]);
      }
    }
    return a;
  }
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = general ? 0 : j; i < n; ++i) {
      const T v = static_cast<T>(i == j && routine == Routine::potrf ? static_cast<double>(n) : uniform(rng));
      a[j * n + i] = v;
      a[i * n + j] = general ? a[i * n + j] : v;
    }
  return a;
}

// The same call through the device actor.
// The eigenvalues' type: real for a Hermitian matrix too.
template <class T>
using Value = std::conditional_t<std::is_same_v<T, c64>, float, T>;

template <class T>
struct Actor {
  Device device;
  Buffer<T> a, pristine, u, vt;  // ormqr: C in u; gels: B in u
  Buffer<Value<T>> w;            // syevd's eigenvalues, gesvd's singular values, QR's tau
  Buffer<std::int32_t> ipiv, info;
  Routine routine;
  std::int64_t n;
  std::int64_t batch;

  Actor(Device d, Routine r, const std::vector<T>& host, std::int64_t size, std::int64_t count)
      : device(std::move(d)), routine(r), n(size), batch(count) {
    a = require(device.allocate<T>(host.size()).wait(), "a");
    pristine = require(device.allocate<T>(host.size()).wait(), "pristine");
    w = require(device.allocate<Value<T>>(static_cast<std::uint64_t>(n * batch)).wait(), "w");
    u = require(device.allocate<T>(host.size()).wait(), "u");
    vt = require(device.allocate<T>(host.size()).wait(), "vt");
    ipiv = require(device.allocate<std::int32_t>(static_cast<std::uint64_t>(n * batch)).wait(), "ipiv");
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
      done = device.ask(solver::Getrf{.dtype = dtype, .n = n, .batch = batch, .a = a, .ipiv = ipiv, .info = info});
    if (routine == Routine::potrf)
      done = device.ask(solver::Potrf{.dtype = dtype, .n = n, .batch = batch, .a = a, .info = info});
    if (routine == Routine::syevd) {
      done = device.ask(solver::Syevd{
          .dtype = dtype, .job = solver::EigenJob::values_and_vectors, .n = n, .a = a, .w = w, .info = info});
    }
    if (routine == Routine::qr) {
      (void)device.ask(solver::Geqrf{.dtype = dtype, .m = n, .n = n, .batch = batch, .a = a, .tau = w});
      done = device.ask(solver::Orgqr{.dtype = dtype, .m = n, .n = n, .k = n, .batch = batch, .a = a, .tau = w});
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
  std::conditional_t<std::is_same_v<T, c64>, solver_bench::DirectComplex, Direct<T>> direct(
      routine, a, static_cast<int>(n), static_cast<int>(batch));
  report(routine, dtype_of<T>(), n, batch, direct.variant(), time_calls(direct, warm, reps));
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> routines =
      bench::split_list(argc > 1 ? argv[1] : "getrf,potrf,syevd,qr,ormqr,gels,gesvd,potrf_batched,getrf_c64");
  const std::vector<std::string> sizes = bench::split_list(argc > 2 ? argv[2] : "256,1024,4096");
  System system;
  Device device = bench::open_gpu_or_skip(system, "solver_bench");
  std::mt19937_64 rng(42);
  for (const std::string& r : routines) {
    if (r == "potrf_batched") {  // the batched shape, 64 x (32 x 32), and twice its n
      for (std::int64_t n : {32, 64}) {
        measure<float>(device, Routine::potrf, n, 64, rng);
        measure<double>(device, Routine::potrf, n, 64, rng);
      }
      measure<float>(device, Routine::potrf, 256, 8, rng);  // the largest n of the family's kernels
      measure<double>(device, Routine::potrf, 256, 8, rng);
      continue;
    }
    if (r == "getrf_batched") {  // the batched shape for LU, and twice its n
      for (std::int64_t n : {32, 64}) {
        measure<float>(device, Routine::getrf, n, 64, rng);
        measure<double>(device, Routine::getrf, n, 64, rng);
      }
      continue;
    }
    if (r == "qr_batched") {  // the batched shape for QR, and twice its n
      for (std::int64_t n : {32, 64}) {
        measure<float>(device, Routine::qr, n, 64, rng);
        measure<double>(device, Routine::qr, n, 64, rng);
      }
      continue;
    }
    if (r == "getrf_c64") {  // the complex case: torch.linalg.lu_factor of complex64 at 1024
      measure<c64>(device, Routine::getrf, 1024, 1, rng);
      continue;
    }
    if (r == "syevd_c64") {  // Hermitian eigen (heevd), as torch.linalg.eigh of complex64 takes it
      for (std::int64_t n : {256, 1024}) measure<c64>(device, Routine::syevd, n, 1, rng);
      continue;
    }
    if (r == "gesvdj_batched") {  // batches of small matrices, as torch.linalg.svd takes them
      for (auto [n, count] : {std::pair<std::int64_t, std::int64_t>{16, 4096}, {32, 4096}, {32, 64}}) {
        measure<float>(device, Routine::gesvdj, n, count, rng);
        measure<double>(device, Routine::gesvdj, n, count, rng);
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
      if (routine == Routine::gesvd && n > 1024) continue;  // gesvd at 4096 takes tens of seconds a call
      measure<float>(device, routine, n, 1, rng);
      measure<double>(device, routine, n, 1, rng);
    }
  }
  return 0;
}
