#include "libs/blas/cpu_gemm.hpp"

#include <cblas.h>
#include <fmt/format.h>

#include <limits>

#include "libs/blas/openblas_kernels.hpp"

namespace accel::blas {
namespace {

template <class T>
void apply_epilogue(const GemmGeometry& g, T* c, const T* bias) {
  const GemmShape& s = g.shape;
  const bool row_major = s.order == MatrixOrder::row_major;
  const std::int64_t outer = row_major ? s.m : s.n;
  const std::int64_t inner = row_major ? s.n : s.m;
  for (std::int64_t batch = 0; batch < s.batch; ++batch) {
    T* matrix = c + batch * s.stride_c;
    for (std::int64_t o = 0; o < outer; ++o) {
      T* line = matrix + o * s.ldc;
      for (std::int64_t i = 0; i < inner; ++i) {
        T v = line[i];
        if (bias) v += bias[i];
        line[i] = static_cast<T>(activate(s.epilogue.activation, v));
      }
    }
  }
}

template <class T>
void scale_c(const GemmGeometry& g, T* c, T beta) {
  const GemmShape& s = g.shape;
  const bool row_major = s.order == MatrixOrder::row_major;
  const std::int64_t outer = row_major ? s.m : s.n;
  const std::int64_t inner = row_major ? s.n : s.m;
  for (std::int64_t batch = 0; batch < s.batch; ++batch)
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i = 0; i < inner; ++i) {
        T& v = c[batch * s.stride_c + o * s.ldc + i];
        v = beta == T(0) ? T(0) : v * beta;  // beta == 0 overwrites, as BLAS does (NaNs in C do not survive)
      }
}

template <class T, class Gemm>
void run_typed(const GemmGeometry& g, const GemmOperands& ops, double alpha, double beta, Gemm gemm) {
  const GemmShape& s = g.shape;
  auto* a = static_cast<const T*>(ops.a);
  auto* b = static_cast<const T*>(ops.b);
  auto* c = static_cast<T*>(ops.c);
  if (s.m == 0 || s.n == 0) return;
  if (s.k == 0) {
    scale_c(g, c, static_cast<T>(beta));
  } else {
    const CBLAS_ORDER order = s.order == MatrixOrder::row_major ? CblasRowMajor : CblasColMajor;
    const CBLAS_TRANSPOSE ta = s.transpose_a == Transpose::transpose ? CblasTrans : CblasNoTrans;
    const CBLAS_TRANSPOSE tb = s.transpose_b == Transpose::transpose ? CblasTrans : CblasNoTrans;
    for (std::int64_t batch = 0; batch < s.batch; ++batch) {
      gemm(order, ta, tb, static_cast<blasint>(s.m), static_cast<blasint>(s.n), static_cast<blasint>(s.k),
           static_cast<T>(alpha), a + batch * s.stride_a, static_cast<blasint>(s.lda), b + batch * s.stride_b,
           static_cast<blasint>(s.ldb), static_cast<T>(beta), c + batch * s.stride_c, static_cast<blasint>(s.ldc));
    }
  }
  if (s.epilogue != Epilogue{}) apply_epilogue(g, c, static_cast<const T*>(ops.bias));
}

}  // namespace

Status check_cpu_gemm_support(const GemmGeometry& g) {
  const GemmShape& s = g.shape;
  if (s.input_type != s.output_type || (s.input_type != DType::f32 && s.input_type != DType::f64)) {
    return not_supported(
        fmt::format("the CPU device runs GEMM on f32 and f64 only (input {}, output {}); use a CUDA "
                    "device for 16-bit and 8-bit types",
                    to_string(s.input_type), to_string(s.output_type)));
  }
  constexpr std::int64_t kMax = std::numeric_limits<blasint>::max();
  for (std::int64_t v : {s.m, s.n, s.k, s.lda, s.ldb, s.ldc}) {
    if (v > kMax) {
      return not_supported(fmt::format("OpenBLAS takes {}-bit sizes; {} exceeds them", sizeof(blasint) * 8, v));
    }
  }
  return Status();
}

void run_cpu_gemm(const GemmGeometry& g, const GemmOperands& ops, double alpha, double beta) {
  ensure_openblas_kernels();
  if (g.shape.input_type == DType::f64) {
    run_typed<double>(g, ops, alpha, beta, cblas_dgemm);
  } else {
    run_typed<float>(g, ops, alpha, beta, cblas_sgemm);
  }
}

LibraryVersion cpu_blas_library() { return {.name = "OpenBLAS", .version = openblas_get_config()}; }

}  // namespace accel::blas
