#include "libs/blas/level3_operation_cuda.hpp"

#include <type_traits>

#include "libs/blas/blas_checks.hpp"
#include "libs/blas/blas_kernels.hpp"

namespace accel {

using blas::CublasRoutines;
using blas::Geam;
using blas::Symm;
using blas::Syrk;
using blas::to_cublas;
using blas::to_int;
using blas::Trmm;
using blas::Trsm;

namespace {

// C = alpha op_x(X) op_y(Y) + beta C by cuBLAS's GEMM on the stream's handle, the scalars the host's: what Symm and
// Trmm by GEMM and Trsm by blocks run.
template <class T>
Status cublas_gemm(const blas::CublasPlan& plan, CudaRun& run, cublasOperation_t op_x, cublasOperation_t op_y,
                   std::int64_t rows, std::int64_t cols, std::int64_t depth, const T& alpha, const T* x,
                   std::int64_t ldx, const T* y, std::int64_t ldy, const T& beta, T* c, std::int64_t ldc) {
  return blas::cublas_launched(
      run,
      (plan.api->*CublasRoutines<T>::gemm)(plan.handle, op_x, op_y, to_int(rows), to_int(cols), to_int(depth), &alpha,
                                           x, to_int(ldx), y, to_int(ldy), &beta, c, to_int(ldc)),
      blas::routine<T>("gemm"));
}

// One member of a Trsm by blocks: op(A) X = alpha B on the left, X op(A) = alpha B on the right, split in two along
// A's order again and again (at a multiple of triangular_solve_order) down to diagonal blocks that
// launch_triangular_solve takes. Each split solves the half that does not depend on the other first (top or left
// where op(A)'s coupling block lies below or right of the diagonal, else bottom or right), takes op(A)'s coupling
// block times that solution out of the other half of B by one GEMM, which scales it by alpha too, then solves the
// other half. The GEMMs read only op(A)'s blocks off the diagonal in the triangle `fill`.
template <class T>
class TrsmByBlocks {
 public:
  TrsmByBlocks(const blas::CublasPlan& plan, CudaRun& run, const Trsm& r, const T* a, T* b)
      : plan_(plan),
        run_(run),
        r_(r),
        a_(a),
        b_(b),
        left_(r.side == blas::Side::left),
        transposed_(r.transpose == Transpose::transpose),
        op_lower_((r.fill == blas::Fill::lower) != transposed_) {}

  Status solve() { return solve(0, left_ ? r_.m : r_.n, static_cast<T>(r_.alpha)); }

 private:
  // f32 splits down to 128 rows: half the diagonal blocks and GEMMs of 64 rows, 1.15-1.35x faster at orders 512-2,048
  // (§90); an f64 block of T in registers would spill with 16 warps.
  static constexpr std::int64_t kLeaf = blas::triangular_solve_order(sizeof(T) == 8);
  // The f32 coupling products launch_small_gemm takes: sums of at most 128 terms and at most 512 x 64 outputs, where
  // ours took 2.8 µs in a graph against cuBLASLt's 3.4; at 1,024 x 64 they were level, at 2,048 x 64 and 512 x 128 x
  // 128 cuBLAS's were faster (§90).
  static constexpr std::int64_t kSmallCouplingSum = 128;
  static constexpr std::int64_t kSmallCouplingOutputs = 512 * 64;

  // Rows (left) or columns (right) [lo, hi) of B, solved with op(A)'s diagonal block there, scaled by `scale` first.
  Status solve(std::int64_t lo, std::int64_t hi, T scale) {
    const std::int64_t width = hi - lo;
    if (width <= kLeaf) return solve_block(lo, width, scale);
    const std::int64_t mid = lo + (width / 2 + kLeaf - 1) / kLeaf * kLeaf;
    // Forward where the coupling block op(A)[second, first] lies below the diagonal on the left (op(A) lower), right
    // of it on the right (op(A) upper).
    const bool forward = left_ == op_lower_;
    const std::int64_t first = forward ? lo : mid, first_end = forward ? mid : hi;
    const std::int64_t second = forward ? mid : lo, second_end = forward ? hi : mid;
    ACCEL_RETURN_IF_ERROR(solve(first, first_end, scale));
    ACCEL_RETURN_IF_ERROR(take_out(first, first_end - first, second, second_end - second, scale));
    return solve(second, second_end, T(1));
  }

  // B's part `second` = scale B's part `second` - the coupling block times the solution in part `first`.
  Status take_out(std::int64_t first, std::int64_t first_width, std::int64_t second, std::int64_t second_width,
                  T scale) {
    if constexpr (std::is_same_v<T, float>) {
      const std::int64_t outputs = left_ ? second_width * r_.n : r_.m * second_width;
      if (first_width <= kSmallCouplingSum && outputs <= kSmallCouplingOutputs) {
        return take_out_small(first, first_width, second, second_width, scale);
      }
    }
    const T minus_one = -1;
    const cublasOperation_t op_a = blas::to_cublas(r_.transpose);
    if (left_) {  // B[second, :] -= op(A)[second, first] X[first, :]
      return cublas_gemm<T>(plan_, run_, op_a, CUBLAS_OP_N, second_width, r_.n, first_width, minus_one,
                            op_a_at(second, first), r_.lda, b_ + first, r_.ldb, scale, b_ + second, r_.ldb);
    }
    // B[:, second] -= X[:, first] op(A)[first, second]
    return cublas_gemm<T>(plan_, run_, CUBLAS_OP_N, op_a, r_.m, second_width, first_width, minus_one,
                          b_ + first * r_.ldb, r_.ldb, op_a_at(first, second), r_.lda, scale, b_ + second * r_.ldb,
                          r_.ldb);
  }

  // take_out on launch_small_gemm: a coupling product this small is a few round trips to memory, which cuBLAS's GEMM
  // ran as 32 x 32 tiles 8 terms a stage, 7.4 µs under Nsight Compute for 512 x 64 x 64 (PERFORMANCE.md §90).
  Status take_out_small(std::int64_t first, std::int64_t first_width, std::int64_t second, std::int64_t second_width,
                        T scale) {
    // How far in A one row and one column of op(A) are apart.
    const std::int64_t a_step_row = transposed_ ? r_.lda : 1, a_step_col = transposed_ ? 1 : r_.lda;
    blas::SmallGemmLaunch launch{.k = first_width, .alpha = -1.0, .beta = static_cast<double>(scale)};
    if (left_) {  // B[second, :] -= op(A)[second, first] X[first, :]
      launch.a = op_a_at(second, first);
      launch.a_row = a_step_row;
      launch.a_col = a_step_col;
      launch.b = b_ + first;
      launch.b_row = 1;
      launch.b_col = r_.ldb;
      launch.c = b_ + second;
      launch.m = second_width;
      launch.n = r_.n;
    } else {  // B[:, second] -= X[:, first] op(A)[first, second]
      launch.a = b_ + first * r_.ldb;
      launch.a_row = 1;
      launch.a_col = r_.ldb;
      launch.b = op_a_at(first, second);
      launch.b_row = a_step_row;
      launch.b_col = a_step_col;
      launch.c = b_ + second * r_.ldb;
      launch.m = r_.m;
      launch.n = second_width;
    }
    launch.c_row = 1;
    launch.c_col = r_.ldb;
    return run_.target.check(blas::launch_small_gemm(launch, run_.target.stream()),
                             "launching a Trsm's coupling product");
  }

  // The diagonal block at `lo`, as launch_triangular_solve's T: op(A)'s block on the left, its transpose on the right
  // (X op(A) = B is op(A)ᵀ Xᵀ = Bᵀ, B's rows its right-hand sides).
  Status solve_block(std::int64_t lo, std::int64_t width, T scale) {
    const bool t_is_a = left_ != transposed_;  // T's (i, j) is A's (i, j), else A's (j, i)
    const blas::TriangularSolveLaunch launch{.f64 = sizeof(T) == 8,
                                             .t = a_ + lo + lo * r_.lda,
                                             .t_row = t_is_a ? 1 : r_.lda,
                                             .t_col = t_is_a ? r_.lda : 1,
                                             .lower = left_ == op_lower_,
                                             .unit = r_.diagonal == blas::Diagonal::unit,
                                             .c = left_ ? b_ + lo : b_ + lo * r_.ldb,
                                             .c_element = left_ ? 1 : r_.ldb,
                                             .c_rhs = left_ ? r_.ldb : 1,
                                             .order = width,
                                             .rhs = left_ ? r_.n : r_.m,
                                             .alpha = static_cast<double>(scale)};
    return run_.target.check(blas::launch_triangular_solve(launch, run_.target.stream()),
                             "launching a Trsm's triangular solve of a diagonal block");
  }

  // op(A)'s element (row, col) as stored: A's (row, col), or (col, row) for Aᵀ.
  const T* op_a_at(std::int64_t row, std::int64_t col) const {
    return transposed_ ? a_ + col + row * r_.lda : a_ + row + col * r_.lda;
  }

  const blas::CublasPlan& plan_;
  CudaRun& run_;
  const Trsm& r_;
  const T* a_;
  T* b_;
  bool left_, transposed_, op_lower_;
};

}  // namespace

bool CudaOperation<Trsm>::by_blocks(const Trsm& r) noexcept {
  const bool left = r.side == blas::Side::left;
  // alpha 0 stays cuBLAS's: B set to zeros without reading A or B, where a solve would carry a NaN of B.
  return (left ? r.m : r.n) >= kByBlocksFrom && (left ? r.n : r.m) >= kByBlocksRhsFrom && r.alpha != 0;
}

Result<CudaOperation<Trsm>::Plan> CudaOperation<Trsm>::plan(const Trsm&, const Checked& checked, CudaTarget& target) {
  if (by_blocks(checked.request)) {
    ACCEL_RETURN_IF_ERROR(target.check(blas::prepare_triangular_solve(checked.request.dtype == DType::f64),
                                       "allowing a Trsm's triangular solves their shared memory"));
  }
  return blas::plan_cublas(target);
}

Status CudaOperation<Trsm>::run(const Trsm&, const Checked& checked, const Plan& plan,
                                std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Trsm>;
  const Trsm& r = checked.request;
  if (r.m == 0 || r.n == 0) return Status();
  ACCEL_RETURN_IF_ERROR(blas::set_pointer_mode(plan, run, CUBLAS_POINTER_MODE_HOST));
  const bool blocked = by_blocks(r);
  return blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) -> Status {
    const T alpha = static_cast<T>(r.alpha);
    for (std::int64_t i = 0; i < r.batch; ++i) {
      const T* a = blas::batch_member<const T>(views[Op::a].data, i, r.stride_a);
      T* b = blas::batch_member<T>(views[Op::b].data, i, r.stride_b);
      if (blocked) {
        ACCEL_RETURN_IF_ERROR(TrsmByBlocks<T>(plan, run, r, a, b).solve());
        continue;
      }
      ACCEL_RETURN_IF_ERROR(blas::cublas_launched(
          run,
          (plan.api->*CublasRoutines<T>::trsm)(plan.handle, to_cublas(r.side), to_cublas(r.fill),
                                               to_cublas(r.transpose), to_cublas(r.diagonal), to_int(r.m), to_int(r.n),
                                               &alpha, a, to_int(r.lda), b, to_int(r.ldb)),
          blas::routine<T>("trsm")));
    }
    return Status();
  });
}

Status CudaOperation<Syrk>::run(const Syrk&, const Checked& checked, const Plan& plan,
                                std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Syrk>;
  const Syrk& r = checked.request;
  if (r.n == 0) return Status();
  ACCEL_RETURN_IF_ERROR(blas::set_pointer_mode(plan, run, CUBLAS_POINTER_MODE_HOST));
  return blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) -> Status {
    const T alpha = static_cast<T>(r.alpha), beta = static_cast<T>(r.beta);
    for (std::int64_t i = 0; i < r.batch; ++i) {
      ACCEL_RETURN_IF_ERROR(blas::cublas_launched(
          run,
          (plan.api->*CublasRoutines<T>::syrk)(
              plan.handle, to_cublas(r.fill), to_cublas(r.transpose), to_int(r.n), to_int(r.k), &alpha,
              blas::batch_member<const T>(views[Op::a].data, i, r.stride_a), to_int(r.lda), &beta,
              blas::batch_member<T>(views[Op::c].data, i, r.stride_c), to_int(r.ldc)),
          blas::routine<T>("syrk")));
    }
    return Status();
  });
}

Result<CudaOperation<Symm>::Plan> CudaOperation<Symm>::plan(const Symm&, const Checked& checked, CudaTarget& target) {
  const Symm& r = checked.request;
  const std::int64_t order = r.side == blas::Side::left ? r.m : r.n;
  ACCEL_ASSIGN_OR_RETURN(blas::CublasPlan cublas, blas::plan_cublas(target));
  if (order < kByGemmFrom) return Plan{.cublas = cublas};
  return Plan{.cublas = cublas,
              .by_gemm = true,
              .workspace_bytes = static_cast<std::uint64_t>(order * order) * size_of(r.dtype)};
}

Status CudaOperation<Symm>::run(const Symm&, const Checked& checked, const Plan& plan,
                                std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Symm>;
  const Symm& r = checked.request;
  if (r.m == 0 || r.n == 0) return Status();
  ACCEL_RETURN_IF_ERROR(blas::set_pointer_mode(plan.cublas, run, CUBLAS_POINTER_MODE_HOST));
  const bool left = r.side == blas::Side::left;
  const std::int64_t order = left ? r.m : r.n;
  return blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) -> Status {
    const T alpha = static_cast<T>(r.alpha), beta = static_cast<T>(r.beta);
    const T* full = static_cast<const T*>(run.workspace);
    for (std::int64_t i = 0; i < r.batch; ++i) {
      if (!plan.by_gemm) {
        ACCEL_RETURN_IF_ERROR(blas::cublas_launched(
            run,
            (plan.cublas.api->*CublasRoutines<T>::symm)(
                plan.cublas.handle, to_cublas(r.side), to_cublas(r.fill), to_int(r.m), to_int(r.n), &alpha,
                blas::batch_member<const T>(views[Op::a].data, i, r.stride_a), to_int(r.lda),
                blas::batch_member<const T>(views[Op::b].data, i, r.stride_b), to_int(r.ldb), &beta,
                blas::batch_member<T>(views[Op::c].data, i, r.stride_c), to_int(r.ldc)),
            blas::routine<T>("symm")));
        continue;
      }
      ACCEL_RETURN_IF_ERROR(run.target.check(
          blas::launch_whole_matrix(blas::batch_member<const T>(views[Op::a].data, i, r.stride_a), r.lda, order,
                                    r.fill == blas::Fill::lower, blas::StoredTriangle::symmetric, r.dtype == DType::f64,
                                    run.workspace, run.target.stream()),
          "launching the kernel that mirrors Symm's A"));
      const T* b = blas::batch_member<const T>(views[Op::b].data, i, r.stride_b);
      // C = alpha A B (left) or alpha B A (right) with A whole: one GEMM.
      ACCEL_RETURN_IF_ERROR(cublas_gemm<T>(plan.cublas, run, CUBLAS_OP_N, CUBLAS_OP_N, r.m, r.n, order, alpha,
                                           left ? full : b, left ? order : r.ldb, left ? b : full, left ? r.ldb : order,
                                           beta, blas::batch_member<T>(views[Op::c].data, i, r.stride_c), r.ldc));
    }
    return Status();
  });
}

Result<CudaOperation<Trmm>::Plan> CudaOperation<Trmm>::plan(const Trmm&, const Checked& checked, CudaTarget& target) {
  const Trmm& r = checked.request;
  const std::int64_t order = r.side == blas::Side::left ? r.m : r.n;
  ACCEL_ASSIGN_OR_RETURN(blas::CublasPlan cublas, blas::plan_cublas(target));
  if (order >= kByGemmBelow) return Plan{.cublas = cublas};
  const auto elements = static_cast<std::uint64_t>(order * order + r.m * r.n);
  return Plan{.cublas = cublas, .by_gemm = true, .workspace_bytes = elements * size_of(r.dtype)};
}

Status CudaOperation<Trmm>::run(const Trmm&, const Checked& checked, const Plan& plan,
                                std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Trmm>;
  const Trmm& r = checked.request;
  if (r.m == 0 || r.n == 0) return Status();
  ACCEL_RETURN_IF_ERROR(blas::set_pointer_mode(plan.cublas, run, CUBLAS_POINTER_MODE_HOST));
  const bool left = r.side == blas::Side::left;
  const std::int64_t order = left ? r.m : r.n;
  return blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) -> Status {
    const T alpha = static_cast<T>(r.alpha), zero = 0;
    T* whole = static_cast<T*>(run.workspace);
    T* b_copy = whole + order * order;
    for (std::int64_t i = 0; i < r.batch; ++i) {
      const T* a = blas::batch_member<const T>(views[Op::a].data, i, r.stride_a);
      T* b = blas::batch_member<T>(views[Op::b].data, i, r.stride_b);
      if (!plan.by_gemm) {
        // cuBLAS's trmm writes C = alpha op(A) B; given B as C it works in place, as BLAS's does.
        ACCEL_RETURN_IF_ERROR(blas::cublas_launched(
            run,
            (plan.cublas.api->*CublasRoutines<T>::trmm)(
                plan.cublas.handle, to_cublas(r.side), to_cublas(r.fill), to_cublas(r.transpose), to_cublas(r.diagonal),
                to_int(r.m), to_int(r.n), &alpha, a, to_int(r.lda), b, to_int(r.ldb), b, to_int(r.ldb)),
            blas::routine<T>("trmm")));
        continue;
      }
      // A made whole (zeros outside its triangle), B copied aside, then B = alpha op(A) B (or alpha B op(A)): one
      // GEMM that reads the copy and writes B.
      const auto form =
          r.diagonal == blas::Diagonal::unit ? blas::StoredTriangle::unit_triangular : blas::StoredTriangle::triangular;
      ACCEL_RETURN_IF_ERROR(
          run.target.check(blas::launch_whole_matrix(a, r.lda, order, r.fill == blas::Fill::lower, form,
                                                     r.dtype == DType::f64, whole, run.target.stream()),
                           "launching the kernel that makes Trmm's A whole"));
      ACCEL_RETURN_IF_ERROR(
          run.target.check(cudaMemcpy2DAsync(b_copy, r.m * sizeof(T), b, r.ldb * sizeof(T), r.m * sizeof(T), r.n,
                                             cudaMemcpyDeviceToDevice, run.target.stream()),
                           "copying Trmm's B aside"));
      const cublasOperation_t op_a = to_cublas(r.transpose);
      ACCEL_RETURN_IF_ERROR(cublas_gemm<T>(plan.cublas, run, left ? op_a : CUBLAS_OP_N, left ? CUBLAS_OP_N : op_a, r.m,
                                           r.n, order, alpha, left ? whole : b_copy, left ? order : r.m,
                                           left ? b_copy : whole, left ? r.m : order, zero, b, r.ldb));
    }
    return Status();
  });
}

Status CudaOperation<Geam>::run(const Geam&, const Checked& checked, const Plan& plan,
                                std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Geam>;
  const Geam& r = checked.request;
  if (r.m == 0 || r.n == 0) return Status();
  ACCEL_RETURN_IF_ERROR(blas::set_pointer_mode(plan, run, CUBLAS_POINTER_MODE_HOST));
  return blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) -> Status {
    const T alpha = static_cast<T>(r.alpha), beta = static_cast<T>(r.beta);
    for (std::int64_t i = 0; i < r.batch; ++i) {
      ACCEL_RETURN_IF_ERROR(blas::cublas_launched(
          run,
          (plan.api->*CublasRoutines<T>::geam)(
              plan.handle, to_cublas(r.transpose_a), to_cublas(r.transpose_b), to_int(r.m), to_int(r.n), &alpha,
              blas::batch_member<const T>(views[Op::a].data, i, r.stride_a), to_int(r.lda), &beta,
              blas::batch_member<const T>(views[Op::b].data, i, r.stride_b), to_int(r.ldb),
              blas::batch_member<T>(views[Op::c].data, i, r.stride_c), to_int(r.ldc)),
          blas::routine<T>("geam")));
    }
    return Status();
  });
}

}  // namespace accel
