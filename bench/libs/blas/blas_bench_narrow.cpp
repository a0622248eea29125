// The f16 and bf16 routines of blas_bench (level 1 and gemv on 16-bit floats, computed in f32), each at both types
// through accel beside the raw cuBLAS call a user would write (the PyTorch peer of each in bench/peers/torch_blas.py
// in parentheses):
//   axpy16  y = -0.75 x + y over n² elements (y.add_(x, alpha=-0.75)), cublasAxpyEx
//   dot16   xᵀ y over n² elements, the result written on the device (torch.dot), cublasDotEx
//   gemv16  y = A x, n x n column-major A (torch.mv), cublasHSHgemvStridedBatched or TST for bf16, a batch of one
//   gemv16t y = Aᵀ x, the same A: each element of y a contiguous column's sum, the walk torch.mv makes of its row-major
//           A (torch.mv), the same cuBLAS routines transposed
//   asum16  Σ |x_i| over n² elements, the result written on the device (torch.linalg.vector_norm(x, 1)); cuBLAS has
//           no 16-bit asum (cublasAsumEx refuses f16 and bf16), so the raw row is cublasNrm2Ex, its nearest 16-bit
//           reduction of one vector
// As the other level-1 rows, axpy16, dot16 and asum16 print n² as "n".
#include <cublas_v2.h>

#include <cstdint>
#include <string_view>

#include "accel/libs/blas/level1.hpp"
#include "accel/libs/blas/level2.hpp"
#include "libs/blas/blas_bench.hpp"

namespace accel::bench::blas_bench {
namespace {

template <class N>
constexpr cudaDataType kCudaType = std::is_same_v<N, Half> ? CUDA_R_16F : CUDA_R_16BF;

template <class N>
void axpy16(Problem& p, std::int64_t n) {
  const std::int64_t count = n * n;
  const cublasHandle_t h = p.raw().handle;
  Operand<N> x = p.operand<N>(static_cast<std::uint64_t>(count)), y = p.operand<N>(static_cast<std::uint64_t>(count));
  const float alpha = -0.75f;
  const blas::Axpy request{.dtype = dtype_of<N>(), .n = count, .alpha = alpha, .x = x.accel, .y = y.accel};
  p.measure("axpy16", dtype_of<N>(), count, 1, request, [=] {
    check_blas(cublasAxpyEx(h, static_cast<int>(count), &alpha, CUDA_R_32F, x.raw, kCudaType<N>, 1, y.raw, kCudaType<N>,
                            1, CUDA_R_32F),
               "axpy16");
  });
}

template <class N>
void dot16(Problem& p, std::int64_t n) {
  const std::int64_t count = n * n;
  const cublasHandle_t h = p.raw().handle;
  Operand<N> x = p.operand<N>(static_cast<std::uint64_t>(count)), y = p.operand<N>(static_cast<std::uint64_t>(count));
  Operand<N> result = p.operand<N>(1);
  const blas::Dot request{.dtype = dtype_of<N>(), .n = count, .x = x.accel, .y = y.accel, .result = result.accel};
  const DevicePointerMode device_pointers(h);
  p.measure("dot16", dtype_of<N>(), count, 1, request, [=] {
    check_blas(cublasDotEx(h, static_cast<int>(count), x.raw, kCudaType<N>, 1, y.raw, kCudaType<N>, 1, result.raw,
                           kCudaType<N>, CUDA_R_32F),
               "dot16");
  });
}

template <class N>
void asum16(Problem& p, std::int64_t n) {
  const std::int64_t count = n * n;
  const cublasHandle_t h = p.raw().handle;
  Operand<N> x = p.operand<N>(static_cast<std::uint64_t>(count)), result = p.operand<N>(1);
  const blas::Asum request{.dtype = dtype_of<N>(), .n = count, .x = x.accel, .result = result.accel};
  const DevicePointerMode device_pointers(h);
  p.measure("asum16", dtype_of<N>(), count, 1, request, [=] {
    check_blas(cublasNrm2Ex(h, static_cast<int>(count), x.raw, kCudaType<N>, 1, result.raw, kCudaType<N>, CUDA_R_32F),
               "asum16 (cublasNrm2Ex)");
  });
}

// gemv16 (plain) or gemv16t (transposed).
template <class N>
void gemv16(Problem& p, std::int64_t n, Transpose transpose) {
  const cublasHandle_t h = p.raw().handle;
  const auto elements = static_cast<std::uint64_t>(n * n), length = static_cast<std::uint64_t>(n);
  Operand<N> a = p.operand<N>(elements), x = p.operand<N>(length), y = p.operand<N>(length);
  const blas::Gemv request{
      .dtype = dtype_of<N>(), .transpose = transpose, .m = n, .n = n, .a = a.accel, .x = x.accel, .y = y.accel};
  const int size = static_cast<int>(n);
  const float one = 1, zero = 0;
  const cublasOperation_t op = transpose == Transpose::transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  const char* name = transpose == Transpose::transpose ? "gemv16t" : "gemv16";
  p.measure(name, dtype_of<N>(), n, 1, request, [=] {
    if constexpr (std::is_same_v<N, Half>) {
      check_blas(cublasHSHgemvStridedBatched(h, op, size, size, &one, reinterpret_cast<const __half*>(a.raw), size,
                                             n * n, reinterpret_cast<const __half*>(x.raw), 1, n, &zero,
                                             reinterpret_cast<__half*>(y.raw), 1, n, 1),
                 name);
    } else {
      check_blas(cublasTSTgemvStridedBatched(h, op, size, size, &one, reinterpret_cast<const __nv_bfloat16*>(a.raw),
                                             size, n * n, reinterpret_cast<const __nv_bfloat16*>(x.raw), 1, n, &zero,
                                             reinterpret_cast<__nv_bfloat16*>(y.raw), 1, n, 1),
                 name);
    }
  });
}

template <class N>
void run(Problem& p, std::string_view routine, std::int64_t n) {
  if (routine == "axpy16") axpy16<N>(p, n);
  if (routine == "dot16") dot16<N>(p, n);
  if (routine == "asum16") asum16<N>(p, n);
  if (routine == "gemv16") gemv16<N>(p, n, Transpose::none);
  if (routine == "gemv16t") gemv16<N>(p, n, Transpose::transpose);
}

}  // namespace

bool run_narrow_routine(Problem& p, std::string_view routine, std::int64_t n) {
  if (routine != "axpy16" && routine != "dot16" && routine != "asum16" && routine != "gemv16" && routine != "gemv16t")
    return false;
  run<Half>(p, routine, n);
  run<BFloat16>(p, routine, n);
  return true;
}

}  // namespace accel::bench::blas_bench
