// The routines of blas_bench added with the rest of BLAS (issue 47), each through accel beside the raw cuBLAS call,
// f32, n from the sizes argument (the PyTorch peer of each in bench/peers/torch_blas.py in parentheses):
//   copy   y = x over n² elements (y.copy_(x))
//   swap   x, y = y, x over n² elements (three copies through a temporary: PyTorch has no swap of contents)
//   rot    x, y = c x + s y, c y - s x over n² elements, c = cos 0.3, s = sin 0.3 (the two expressions, each a
//          multiply and an add into tensors made once)
//   iamin  the 1-based index of the smallest |x_i| over n² elements, written on the device as an i32
//          (torch.argmin of torch.abs, into tensors made once)
//   ger    A = x yᵀ + A, n x n (A.addr_(x, y))
//   trsv   L x = b, n x n lower-triangular L, non-unit, x replacing b; L is the identity, as trsm's, so that solving
//          in place again and again leaves b as it was (torch.linalg.solve_triangular with one column)
//   symv   y = A x, n x n symmetric A, its lower triangle read (torch.mv on the full symmetric matrix)
//   symm   C = A B, left, n x n symmetric A (lower triangle read), B and C (torch.mm on the full symmetric A)
//   trmm   B = L B in place, left, n x n lower-triangular L, non-unit; L is the identity so that B stays as it was
//          (torch.mm(torch.tril(A), B) into another tensor)
//   geam   C = A + 0.5 Bᵀ, n x n (torch.add(A, B.T, alpha=0.5))
// The level 1 rows print n² as "n" (the element count, as dot's); the others print n. Scalar results (iamin) are
// written in device pointer mode on both sides.
#include <cublas_v2.h>

#include <cmath>
#include <cstdint>
#include <string_view>

#include "accel/libs/blas/level1.hpp"
#include "accel/libs/blas/level2.hpp"
#include "accel/libs/blas/level3.hpp"
#include "libs/blas/blas_bench.hpp"

namespace accel::bench::blas_bench {
namespace {

constexpr float kOne = 1, kZero = 0;

std::uint64_t square(std::int64_t n) { return static_cast<std::uint64_t>(n * n); }

// Level 1: two vectors of n² elements.
void level1(Problem& p, std::string_view routine, std::int64_t n) {
  const std::int64_t count = n * n;
  const int size = static_cast<int>(count);
  const cublasHandle_t h = p.raw().handle;
  Operand<float> x = p.operand<float>(square(n)), y = p.operand<float>(square(n));
  if (routine == "copy") {
    const blas::Copy request{.dtype = DType::f32, .n = count, .x = x.accel, .y = y.accel};
    p.measure("copy", DType::f32, count, 1, request,
              [=] { check_blas(cublasScopy(h, size, x.raw, 1, y.raw, 1), "copy"); });
  } else if (routine == "swap") {
    const blas::Swap request{.dtype = DType::f32, .n = count, .x = x.accel, .y = y.accel};
    p.measure("swap", DType::f32, count, 1, request,
              [=] { check_blas(cublasSswap(h, size, x.raw, 1, y.raw, 1), "swap"); });
  } else if (routine == "rot") {
    const float c = std::cos(0.3f), s = std::sin(0.3f);
    const blas::Rot request{.dtype = DType::f32, .n = count, .c = c, .s = s, .x = x.accel, .y = y.accel};
    p.measure("rot", DType::f32, count, 1, request,
              [=] { check_blas(cublasSrot(h, size, x.raw, 1, y.raw, 1, &c, &s), "rot"); });
  } else if (routine == "iamin") {
    Operand<std::int32_t> result = p.operand<std::int32_t>(1);
    const blas::Iamin request{.dtype = DType::f32, .n = count, .x = x.accel, .result = result.accel};
    const DevicePointerMode device_pointers(h);
    p.measure("iamin", DType::f32, count, 1, request,
              [=] { check_blas(cublasIsamin(h, size, x.raw, 1, result.raw), "iamin"); });
  }
}

// Level 2: an n x n matrix and two vectors of n.
void level2(Problem& p, std::string_view routine, std::int64_t n) {
  const int size = static_cast<int>(n);
  const cublasHandle_t h = p.raw().handle;
  const std::uint64_t vector = static_cast<std::uint64_t>(n);
  if (routine == "ger") {
    Operand<float> a = p.operand<float>(square(n)), x = p.operand<float>(vector), y = p.operand<float>(vector);
    const blas::Ger request{.dtype = DType::f32, .m = n, .n = n, .a = a.accel, .x = x.accel, .y = y.accel};
    p.measure("ger", DType::f32, n, 1, request,
              [=] { check_blas(cublasSger(h, size, size, &kOne, x.raw, 1, y.raw, 1, a.raw, size), "ger"); });
  } else if (routine == "trsv") {
    Operand<float> a = p.operand<float>(square(n), n), x = p.operand<float>(vector);
    const blas::Trsv request{.dtype = DType::f32, .fill = blas::Fill::lower, .n = n, .a = a.accel, .x = x.accel};
    p.measure("trsv", DType::f32, n, 1, request, [=] {
      check_blas(cublasStrsv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, size, a.raw, size, x.raw, 1),
                 "trsv");
    });
  } else if (routine == "symv") {
    Operand<float> a = p.operand<float>(square(n)), x = p.operand<float>(vector), y = p.operand<float>(vector);
    const blas::Symv request{
        .dtype = DType::f32, .fill = blas::Fill::lower, .n = n, .a = a.accel, .x = x.accel, .y = y.accel};
    p.measure("symv", DType::f32, n, 1, request, [=] {
      check_blas(cublasSsymv(h, CUBLAS_FILL_MODE_LOWER, size, &kOne, a.raw, size, x.raw, 1, &kZero, y.raw, 1), "symv");
    });
  }
}

// Level 3: n x n matrices.
void level3(Problem& p, std::string_view routine, std::int64_t n) {
  const int size = static_cast<int>(n);
  const cublasHandle_t h = p.raw().handle;
  if (routine == "symm") {
    Operand<float> a = p.operand<float>(square(n)), b = p.operand<float>(square(n)), c = p.operand<float>(square(n));
    const blas::Symm request{.dtype = DType::f32,
                             .side = blas::Side::left,
                             .fill = blas::Fill::lower,
                             .m = n,
                             .n = n,
                             .a = a.accel,
                             .b = b.accel,
                             .c = c.accel};
    p.measure("symm", DType::f32, n, 1, request, [=] {
      check_blas(cublasSsymm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, size, size, &kOne, a.raw, size, b.raw, size,
                             &kZero, c.raw, size),
                 "symm");
    });
  } else if (routine == "trmm") {
    Operand<float> a = p.operand<float>(square(n), n), b = p.operand<float>(square(n));
    const blas::Trmm request{.dtype = DType::f32,
                             .side = blas::Side::left,
                             .fill = blas::Fill::lower,
                             .m = n,
                             .n = n,
                             .a = a.accel,
                             .b = b.accel};
    p.measure("trmm", DType::f32, n, 1, request, [=] {
      // cuBLAS's trmm is out of place; B given as its C too makes it BLAS's in-place trmm, as accel runs it.
      check_blas(cublasStrmm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, size, size,
                             &kOne, a.raw, size, b.raw, size, b.raw, size),
                 "trmm");
    });
  } else if (routine == "geam") {
    Operand<float> a = p.operand<float>(square(n)), b = p.operand<float>(square(n)), c = p.operand<float>(square(n));
    const float alpha = 1, beta = 0.5f;
    const blas::Geam request{.dtype = DType::f32,
                             .transpose_b = Transpose::transpose,
                             .m = n,
                             .n = n,
                             .alpha = alpha,
                             .beta = beta,
                             .a = a.accel,
                             .b = b.accel,
                             .c = c.accel};
    p.measure("geam", DType::f32, n, 1, request, [=] {
      check_blas(
          cublasSgeam(h, CUBLAS_OP_N, CUBLAS_OP_T, size, size, &alpha, a.raw, size, &beta, b.raw, size, c.raw, size),
          "geam");
    });
  }
}

}  // namespace

bool run_added_routine(Problem& p, std::string_view routine, std::int64_t n) {
  if (routine == "copy" || routine == "swap" || routine == "rot" || routine == "iamin") {
    level1(p, routine, n);
  } else if (routine == "ger" || routine == "trsv" || routine == "symv") {
    level2(p, routine, n);
  } else if (routine == "symm" || routine == "trmm" || routine == "geam") {
    level3(p, routine, n);
  } else {
    return false;
  }
  return true;
}

}  // namespace accel::bench::blas_bench
