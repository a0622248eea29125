// BLAS levels 1-3 beyond GEMM on the GPU through the accel device actor, beside the raw cuBLAS call a user would write
// (same process, same GPU, same inputs, a handle on a stream of its own); the PyTorch peer is
// bench/peers/torch_blas.py, run in the same call. Routines and shapes (n from the sizes argument):
//   gemv          y = A x, n x n column-major A, f32 (torch.mv)
//   gemvt         y = Aᵀ x, the same A: each element of y a contiguous column's sum, the walk torch.mv makes of its
//                 row-major A (torch.mv)
//   gemv_batched  1000 x (32 x 32) and 64 x (256 x 256), f32, one gemvStridedBatched (torch.matmul of a batch)
//   trsm          L X = B, n x n lower-triangular L and n x n B, left, f32 and f64 (torch.linalg.solve_triangular);
//                 L is the identity so that solving in place again and again leaves B as it was (neither cuBLAS's
//                 time nor accel's depends on the values)
//   trsm_right    X L = B, the same on the right (solve_triangular with left=False)
//   syrk          C = A Aᵀ, lower triangle, n x n C and A, f32 (PyTorch has no syrk: its peer is torch.mm(A, A.T))
//   dot           xᵀ y over n² elements, f32, the result written on the device (torch.dot)
//   and copy, swap, rot, iamin, ger, trsv, symv, symm, trmm, geam: see blas_bench_routines.cpp
//   and axpy16, dot16, asum16, gemv16, gemv16t (f16 and bf16): see blas_bench_narrow.cpp
// What is timed: latency is one call's round trip (accel: the request until its future is ready; cuBLAS: the call and
// cudaStreamSynchronize), the median of many made back to back; pipelined is the time per call of a run of calls and
// one wait (accel: the futures of every call), the median of five runs. accel's stream takes the requests queued behind
// each other as a burst, and a burst's 16-bit axpys run as one launch (Note [Linked bursts], PERFORMANCE.md §108). One
// JSON line per routine, dtype, shape and variant:
//   {"bench":"blas","routine":"gemv","dtype":"f32","n":1024,"batch":1,"variant":"accel","latency_us":…,
//    "pipelined_us":…,"reps":…}
// Usage: blas_bench [routines, comma-separated, default all twenty-two above] [sizes, comma-separated n in
// [1, 46340], default 256,1024,4096] [the device's completion strategy: poller (default), host_callback or blocking];
// an unknown routine, a bad size or strategy is refused (exit 2) before the GPU is opened.
// Every routine runs at every size but gemv_batched, which has its two shapes of its own.
#include <cublas_v2.h>
#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "accel/libs/blas/level1.hpp"
#include "accel/libs/blas/level2.hpp"
#include "accel/libs/blas/level3.hpp"
#include "common/completion_option.hpp"
#include "common/csv_report.hpp"
#include "common/open_gpu.hpp"
#include "libs/blas/blas_bench.hpp"

namespace {

using namespace accel;
using bench::blas_bench::check_blas;
using bench::blas_bench::DevicePointerMode;
using bench::blas_bench::Operand;
using bench::blas_bench::Problem;
using bench::blas_bench::Raw;

void gemv(Problem& p, std::int64_t n, std::int64_t batch, Transpose transpose = Transpose::none) {
  const std::uint64_t square = static_cast<std::uint64_t>(n * n * batch),
                      vector = static_cast<std::uint64_t>(n * batch);
  Operand<float> a = p.operand<float>(square), x = p.operand<float>(vector), y = p.operand<float>(vector);
  const blas::Gemv request{.dtype = DType::f32,
                           .transpose = transpose,
                           .m = n,
                           .n = n,
                           .batch = batch,
                           .a = a.accel,
                           .x = x.accel,
                           .y = y.accel};
  const cublasHandle_t h = p.raw().handle;
  const int size = static_cast<int>(n);
  const float one = 1, zero = 0;
  const bool t = transpose == Transpose::transpose;
  p.measure(batch == 1 ? (t ? "gemvt" : "gemv") : "gemv_batched", DType::f32, n, batch, request, [=] {
    if (batch == 1) {
      check_blas(
          cublasSgemv(h, t ? CUBLAS_OP_T : CUBLAS_OP_N, size, size, &one, a.raw, size, x.raw, 1, &zero, y.raw, 1),
          "gemv");
    } else {
      check_blas(cublasSgemvStridedBatched(h, CUBLAS_OP_N, size, size, &one, a.raw, size, n * n, x.raw, 1, n, &zero,
                                           y.raw, 1, n, static_cast<int>(batch)),
                 "gemvStridedBatched");
    }
  });
}

template <class T>
void trsm(Problem& p, std::int64_t n, blas::Side side) {
  Operand<T> a = p.operand<T>(static_cast<std::uint64_t>(n * n), n),
             b = p.operand<T>(static_cast<std::uint64_t>(n * n));
  const blas::Trsm request{.dtype = dtype_of<T>(), .side = side, .m = n, .n = n, .a = a.accel, .b = b.accel};
  const cublasHandle_t h = p.raw().handle;
  const int size = static_cast<int>(n);
  const cublasSideMode_t raw_side = side == blas::Side::left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
  p.measure(side == blas::Side::left ? "trsm" : "trsm_right", dtype_of<T>(), n, 1, request, [=] {
    const T one = 1;
    if constexpr (std::is_same_v<T, double>) {
      check_blas(cublasDtrsm(h, raw_side, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, size, size, &one,
                             a.raw, size, b.raw, size),
                 "trsm");
    } else {
      check_blas(cublasStrsm(h, raw_side, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, size, size, &one,
                             a.raw, size, b.raw, size),
                 "trsm");
    }
  });
}

void syrk(Problem& p, std::int64_t n) {
  Operand<float> a = p.operand<float>(static_cast<std::uint64_t>(n * n)),
                 c = p.operand<float>(static_cast<std::uint64_t>(n * n));
  const blas::Syrk request{.dtype = DType::f32, .n = n, .k = n, .a = a.accel, .c = c.accel};
  const cublasHandle_t h = p.raw().handle;
  const int size = static_cast<int>(n);
  p.measure("syrk", DType::f32, n, 1, request, [=] {
    const float one = 1, zero = 0;
    check_blas(cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, size, size, &one, a.raw, size, &zero, c.raw, size),
               "syrk");
  });
}

void dot(Problem& p, std::int64_t n) {
  const std::uint64_t count = static_cast<std::uint64_t>(n * n);
  Operand<float> x = p.operand<float>(count), y = p.operand<float>(count), result = p.operand<float>(1);
  const blas::Dot request{.dtype = DType::f32, .n = n * n, .x = x.accel, .y = y.accel, .result = result.accel};
  const cublasHandle_t h = p.raw().handle;
  const DevicePointerMode device_pointers(h);
  p.measure("dot", DType::f32, n * n, 1, request,
            [=] { check_blas(cublasSdot(h, static_cast<int>(n * n), x.raw, 1, y.raw, 1, result.raw), "dot"); });
}

constexpr std::string_view kFirstRoutines = "gemv,gemvt,gemv_batched,trsm,trsm_right,syrk,dot";

bool known(const std::string& routine) {
  for (const std::string_view list :
       {kFirstRoutines, bench::blas_bench::kAddedRoutines, bench::blas_bench::kNarrowRoutines})
    for (const std::string& r : bench::split_list(list))
      if (r == routine) return true;
  return false;
}

// The sizes (empty items skipped), each an n with n² within cuBLAS's 32-bit int (level 1 runs over n² elements);
// empty, said on stderr, if one is not or there are none.
std::vector<std::int64_t> parse_sizes(const std::string& list) {
  std::vector<std::int64_t> out;
  for (const std::string& size : bench::split_list(list)) {
    std::int64_t n = 0;
    const auto [end, error] = std::from_chars(size.data(), size.data() + size.size(), n);
    if (error != std::errc{} || end != size.data() + size.size() || n < 1 || n > 46340) {
      fmt::print(stderr, "blas_bench: size \"{}\" is not an integer in [1, 46340]\n", size);
      return {};
    }
    out.push_back(n);
  }
  if (out.empty()) fmt::print(stderr, "blas_bench: no sizes\n");
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string all =
      fmt::format("{},{},{}", kFirstRoutines, bench::blas_bench::kAddedRoutines, bench::blas_bench::kNarrowRoutines);
  const std::optional<CompletionStrategy> completion =
      bench::completion_of(argc > 3 ? argv[3] : to_string(CompletionStrategy::poller));
  if (argc > 4 || !completion ||
      (argc > 1 && (std::string_view(argv[1]) == "-h" || std::string_view(argv[1]) == "--help"))) {
    fmt::print(stderr,
               "usage: blas_bench [routines, default {}] [sizes, default 256,1024,4096] "
               "[completion: poller (default), host_callback or blocking]\n",
               all);
    return 2;
  }
  const std::vector<std::string> routines = bench::split_list(argc > 1 ? argv[1] : all);
  if (routines.empty()) {
    fmt::print(stderr, "blas_bench: no routines\n");
    return 2;
  }
  for (const std::string& r : routines) {
    if (!known(r)) {
      fmt::print(stderr, "blas_bench: unknown routine \"{}\" (known: {})\n", r, all);
      return 2;
    }
  }
  const std::vector<std::int64_t> sizes = parse_sizes(argc > 2 ? argv[2] : "256,1024,4096");
  if (sizes.empty()) return 2;
  System system;
  const Device device =
      bench::open_gpu_or_skip(system, "blas_bench", {.kind = DeviceKind::cuda, .completion = *completion});
  std::mt19937_64 rng(42);
  for (const std::string& r : routines) {
    Raw raw;  // each routine's buffers freed when it is done
    Problem p(device, raw, rng);
    if (r == "gemv_batched") {
      gemv(p, 32, 1000);
      gemv(p, 256, 64);
      continue;
    }
    for (const std::int64_t n : sizes) {
      if (r == "gemv") gemv(p, n, 1);
      if (r == "gemvt") gemv(p, n, 1, Transpose::transpose);
      if (r == "trsm" || r == "trsm_right") {
        const blas::Side side = r == "trsm" ? blas::Side::left : blas::Side::right;
        trsm<float>(p, n, side);
        trsm<double>(p, n, side);
      }
      if (r == "syrk") syrk(p, n);
      if (r == "dot") dot(p, n);
      bench::blas_bench::run_added_routine(p, r, n);
      bench::blas_bench::run_narrow_routine(p, r, n);
    }
  }
  return 0;
}
