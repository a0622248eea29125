#include "libs/solver/lapacke_dense.hpp"

#include <fmt/format.h>

#include <complex>
// LAPACKE's complex pointers as std::complex, the layout of c64 and c128, rather than C99's _Complex, which C++ has
// only as an extension.
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>

#include <algorithm>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "libs/solver/dense_checks.hpp"
#include "libs/solver/dense_info.hpp"
#include "operation/complex_dtypes.hpp"
#include "operation/host_slack.hpp"

namespace accel::solver {
namespace {

static_assert(sizeof(lapack_int) == sizeof(std::int32_t), "pivots and infos are i32: LAPACKE must use 32-bit ints");

template <class T>
struct Lapacke;
template <>
struct Lapacke<float> {
  static constexpr auto getrf = LAPACKE_sgetrf;
  static constexpr auto getrs = LAPACKE_sgetrs;
  static constexpr auto potrf = LAPACKE_spotrf;
  static constexpr auto potrs = LAPACKE_spotrs;
  static constexpr auto syevd_work = LAPACKE_ssyevd_work;
  static constexpr auto geqrf = LAPACKE_sgeqrf;
  static constexpr auto orgqr = LAPACKE_sorgqr;
  static constexpr auto ormqr = LAPACKE_sormqr;
  static constexpr auto gels = LAPACKE_sgels;
  static constexpr auto gesvd_work = LAPACKE_sgesvd_work;
};
template <>
struct Lapacke<double> {
  static constexpr auto getrf = LAPACKE_dgetrf;
  static constexpr auto getrs = LAPACKE_dgetrs;
  static constexpr auto potrf = LAPACKE_dpotrf;
  static constexpr auto potrs = LAPACKE_dpotrs;
  static constexpr auto syevd_work = LAPACKE_dsyevd_work;
  static constexpr auto geqrf = LAPACKE_dgeqrf;
  static constexpr auto orgqr = LAPACKE_dorgqr;
  static constexpr auto ormqr = LAPACKE_dormqr;
  static constexpr auto gels = LAPACKE_dgels;
  static constexpr auto gesvd_work = LAPACKE_dgesvd_work;
};

// Eigen of Hermitian matrices (heevd), QR with unitary Q (ungqr, unmqr), least squares solving A X = B (gels, 'N') and
// the SVD's real values and Vᴴ. syevd/heevd and gesvd go through their _work forms, with workspaces of ours.
template <>
struct Lapacke<std::complex<float>> {
  static constexpr auto getrf = LAPACKE_cgetrf;
  static constexpr auto getrs = LAPACKE_cgetrs;
  static constexpr auto potrf = LAPACKE_cpotrf;
  static constexpr auto potrs = LAPACKE_cpotrs;
  static constexpr auto syevd_work = LAPACKE_cheevd_work;
  static constexpr auto geqrf = LAPACKE_cgeqrf;
  static constexpr auto orgqr = LAPACKE_cungqr;
  static constexpr auto ormqr = LAPACKE_cunmqr;
  static constexpr auto gels = LAPACKE_cgels;
  static constexpr auto gesvd_work = LAPACKE_cgesvd_work;
};
template <>
struct Lapacke<std::complex<double>> {
  static constexpr auto getrf = LAPACKE_zgetrf;
  static constexpr auto getrs = LAPACKE_zgetrs;
  static constexpr auto potrf = LAPACKE_zpotrf;
  static constexpr auto potrs = LAPACKE_zpotrs;
  static constexpr auto syevd_work = LAPACKE_zheevd_work;
  static constexpr auto geqrf = LAPACKE_zgeqrf;
  static constexpr auto orgqr = LAPACKE_zungqr;
  static constexpr auto ormqr = LAPACKE_zunmqr;
  static constexpr auto gels = LAPACKE_zgels;
  static constexpr auto gesvd_work = LAPACKE_zgesvd_work;
};

template <class T>
T conjugate(T x) {
  if constexpr (!kComplex<T>) {
    return x;
  } else {
    return std::conj(x);
  }
}

// The element type of a validated dtype, for the requests that take complex ones.
template <class F>
Status with_type(DType dtype, F&& f) {
  return with_element_type<std::complex<float>, std::complex<double>>(dtype, std::forward<F>(f));
}

lapack_int to_int(std::int64_t value) { return static_cast<lapack_int>(value); }  // validated: fits

// LAPACK workspace with kHostSlackBytes on each side (operation/host_slack.hpp: OpenBLAS 0.3.21's complex gemv reads
// past its vectors, and heevd and gesvd hand it pieces of their workspaces), sized by a workspace query's answer.
template <class T>
class Workspace {
 public:
  explicit Workspace(double count) : count_(std::max<std::size_t>(1, static_cast<std::size_t>(count))) {
    storage_.resize(count_ + 2 * kSlack);
  }
  T* data() { return storage_.data() + kSlack; }
  [[nodiscard]] lapack_int size() const { return static_cast<lapack_int>(count_); }

 private:
  static constexpr std::size_t kSlack = kHostSlackBytes / sizeof(T) + 1;
  std::size_t count_;
  std::vector<T> storage_;
};

// What a workspace query (lwork = -1) answered, as a count.
template <class T>
double queried(const T& answer) {
  if constexpr (std::is_arithmetic_v<T>) {
    return static_cast<double>(answer);
  } else {
    return static_cast<double>(answer.real());
  }
}
char uplo(Fill fill) { return fill == Fill::upper ? 'U' : 'L'; }

// What LAPACKE returned for matrix `index`. Beyond LAPACK's INFO it returns its own codes: failed allocations,
// and, for a matrix holding NaN, the argument's position (it checks its matrices before calling LAPACK), which is
// the only argument it can refuse once the request was validated.
Status lapacke_status(Routine routine, lapack_int code, std::int64_t index, std::int64_t batch) {
  if (code == LAPACK_WORK_MEMORY_ERROR || code == LAPACK_TRANSPOSE_MEMORY_ERROR) {
    return Status(Code::resource_exhausted, "LAPACKE could not allocate its workspace", Source::openblas, code);
  }
  if (code < 0) {
    return Status(
        Code::invalid_argument,
        fmt::format("{}: LAPACKE refused argument {}: a matrix holds NaN", error_prefix(routine, index, batch), -code),
        Source::openblas, code);
  }
  return info_status(routine, code, index, batch, Source::openblas);
}

// Runs `call(index)` on every matrix of a batch, keeping each info; the first failure is the batch's status, but
// the other matrices are still solved (as cuSOLVER does), unless memory ran out.
template <class Call>
Status each_matrix(Routine routine, std::int64_t batch, std::int32_t* infos, Call&& call) {
  Status first;
  for (std::int64_t i = 0; i < batch; ++i) {
    const lapack_int code = call(i);
    if (infos != nullptr) infos[i] = code;
    Status status = lapacke_status(routine, code, i, batch);
    if (status.code() == Code::resource_exhausted) return status;
    first.update(status);
  }
  return first;
}

template <class T>
T* matrix(void* base, std::int64_t index, std::int64_t stride) {
  return static_cast<T*>(base) + matrix_offset(index, stride);
}
template <class T>
const T* matrix(const void* base, std::int64_t index, std::int64_t stride) {
  return static_cast<const T*>(base) + matrix_offset(index, stride);
}

template <class T>
Status getrf(const Getrf& r, void* a, std::int32_t* ipiv, std::int32_t* info) {
  return each_matrix(Routine::getrf, r.batch, info, [&](std::int64_t i) {
    return Lapacke<T>::getrf(LAPACK_COL_MAJOR, to_int(r.n), to_int(r.n), matrix<T>(a, i, r.stride_a), to_int(r.lda),
                             ipiv + matrix_offset(i, r.n));
  });
}

// LAPACK trusts its pivots: one outside 1..n would have it swap rows outside B.
Status check_pivots(const Getrs& r, const std::int32_t* ipiv) {
  for (std::int64_t i = 0; i < r.batch * r.n; ++i) {
    if (ipiv[i] < 1 || ipiv[i] > r.n) return bad_pivot(r.n, r.batch, i, ipiv[i]);
  }
  return Status();
}

template <class T>
Status getrs(const Getrs& r, const void* a, const std::int32_t* ipiv, void* b) {
  ACCEL_RETURN_IF_ERROR(check_pivots(r, ipiv));
  // 'T' is Aᵀ for complex A too, not Aᴴ ('C'), as CUBLAS_OP_T is on CUDA.
  const char trans = r.transpose == Transpose::transpose ? 'T' : 'N';
  return each_matrix(Routine::getrs, r.batch, nullptr, [&](std::int64_t i) {
    return Lapacke<T>::getrs(LAPACK_COL_MAJOR, trans, to_int(r.n), to_int(r.nrhs), matrix<T>(a, i, r.stride_a),
                             to_int(r.lda), ipiv + matrix_offset(i, r.n), matrix<T>(b, i, r.stride_b), to_int(r.ldb));
  });
}

template <class T>
Status potrf(const Potrf& r, void* a, std::int32_t* info) {
  return each_matrix(Routine::potrf, r.batch, info, [&](std::int64_t i) {
    return Lapacke<T>::potrf(LAPACK_COL_MAJOR, uplo(r.fill), to_int(r.n), matrix<T>(a, i, r.stride_a), to_int(r.lda));
  });
}

template <class T>
Status potrs(const Potrs& r, const void* a, void* b) {
  return each_matrix(Routine::potrs, r.batch, nullptr, [&](std::int64_t i) {
    return Lapacke<T>::potrs(LAPACK_COL_MAJOR, uplo(r.fill), to_int(r.n), to_int(r.nrhs), matrix<T>(a, i, r.stride_a),
                             to_int(r.lda), matrix<T>(b, i, r.stride_b), to_int(r.ldb));
  });
}

// syevd (heevd for complex T, which also takes a real workspace) of one matrix with the workspaces given; -1 sizes
// ask for the sizes instead.
template <class T>
lapack_int syevd_with(const Syevd& r, T* a, part_t<T>* w, T* work, lapack_int lwork, part_t<T>* rwork,
                      lapack_int lrwork, lapack_int* iwork, lapack_int liwork) {
  const char jobz = r.job == EigenJob::values_and_vectors ? 'V' : 'N';
  if constexpr (std::is_arithmetic_v<T>) {
    (void)rwork, (void)lrwork;
    return Lapacke<T>::syevd_work(LAPACK_COL_MAJOR, jobz, uplo(r.fill), to_int(r.n), a, to_int(r.lda), w, work, lwork,
                                  iwork, liwork);
  } else {
    return Lapacke<T>::syevd_work(LAPACK_COL_MAJOR, jobz, uplo(r.fill), to_int(r.n), a, to_int(r.lda), w, work, lwork,
                                  rwork, lrwork, iwork, liwork);
  }
}

template <class T>
Status syevd(const Syevd& r, void* a, void* w, std::int32_t* info) {
  using Real = part_t<T>;
  T work_size{};
  Real rwork_size{};
  lapack_int iwork_size = 0;
  const lapack_int query = syevd_with<T>(r, matrix<T>(a, 0, r.stride_a), matrix<Real>(w, 0, r.n), &work_size, -1,
                                         &rwork_size, -1, &iwork_size, -1);
  if (query != 0) return lapacke_status(Routine::syevd, query, 0, r.batch);
  Workspace<T> work(queried(work_size));
  Workspace<Real> rwork(queried(rwork_size));
  Workspace<lapack_int> iwork(iwork_size);
  return each_matrix(Routine::syevd, r.batch, info, [&](std::int64_t i) {
    return syevd_with<T>(r, matrix<T>(a, i, r.stride_a), matrix<Real>(w, i, r.n), work.data(), work.size(),
                         rwork.data(), rwork.size(), iwork.data(), iwork.size());
  });
}

template <class T>
Status geqrf(const Geqrf& r, void* a, void* tau) {
  const std::int64_t k = std::min(r.m, r.n);
  return each_matrix(Routine::geqrf, r.batch, nullptr, [&](std::int64_t i) {
    return Lapacke<T>::geqrf(LAPACK_COL_MAJOR, to_int(r.m), to_int(r.n), matrix<T>(a, i, r.stride_a), to_int(r.lda),
                             matrix<T>(tau, i, k));
  });
}

template <class T>
Status orgqr(const Orgqr& r, void* a, const void* tau) {
  return each_matrix(Routine::orgqr, r.batch, nullptr, [&](std::int64_t i) {
    return Lapacke<T>::orgqr(LAPACK_COL_MAJOR, to_int(r.m), to_int(r.n), to_int(r.k), matrix<T>(a, i, r.stride_a),
                             to_int(r.lda), matrix<T>(tau, i, r.k));
  });
}

template <class T>
Status ormqr(const Ormqr& r, const void* a, const void* tau, void* c) {
  const char side = r.side == Side::right ? 'R' : 'L';
  // Qᴴ for a complex Q, as unmqr takes it (it refuses 'T').
  const char trans = r.transpose == Transpose::none ? 'N' : !kComplex<T> ? 'T' : 'C';
  return each_matrix(Routine::ormqr, r.batch, nullptr, [&](std::int64_t i) {
    return Lapacke<T>::ormqr(LAPACK_COL_MAJOR, side, trans, to_int(r.m), to_int(r.n), to_int(r.k),
                             matrix<T>(a, i, r.stride_a), to_int(r.lda), matrix<T>(tau, i, r.k),
                             matrix<T>(c, i, r.stride_c), to_int(r.ldc));
  });
}

// LAPACK's gels zeroes B when n or nrhs is 0; cuSOLVER is not called then either, and B stays as it is on both.
template <class T>
Status gels(const Gels& r, void* a, void* b, std::int32_t* info) {
  const bool empty = r.n == 0 || r.nrhs == 0;
  return each_matrix(Routine::gels, r.batch, info, [&](std::int64_t i) {
    if (empty) return lapack_int{0};
    return Lapacke<T>::gels(LAPACK_COL_MAJOR, 'N', to_int(r.m), to_int(r.n), to_int(r.nrhs),
                            matrix<T>(a, i, r.stride_a), to_int(r.lda), matrix<T>(b, i, r.stride_b), to_int(r.ldb));
  });
}

char svd_job(SvdJob job) { return job == SvdJob::full ? 'A' : job == SvdJob::thin ? 'S' : 'N'; }

// LAPACK's gesvd of one matrix after another, with workspaces of ours (see Workspace), the work's size asked once.
template <class T>
class SvdRun {
 public:
  using Value = part_t<T>;  // the singular values'
  SvdRun(char job_u, char job_vt, std::int64_t m, std::int64_t n) : job_u_(job_u), job_vt_(job_vt), m_(m), n_(n) {}

  lapack_int operator()(T* a, std::int64_t lda, Value* s, T* u, std::int64_t ldu, T* vt, std::int64_t ldvt) {
    if (!work_) {
      T size{};
      const lapack_int query = call(a, lda, s, u, ldu, vt, ldvt, &size, -1);
      if (query != 0) return query;
      work_.emplace(queried(size));
    }
    return call(a, lda, s, u, ldu, vt, ldvt, work_->data(), work_->size());
  }

 private:
  lapack_int call(T* a, std::int64_t lda, Value* s, T* u, std::int64_t ldu, T* vt, std::int64_t ldvt, T* work,
                  lapack_int lwork) {
    if constexpr (std::is_arithmetic_v<T>) {
      return Lapacke<T>::gesvd_work(LAPACK_COL_MAJOR, job_u_, job_vt_, to_int(m_), to_int(n_), a, to_int(lda), s, u,
                                    to_int(ldu), vt, to_int(ldvt), work, lwork);
    } else {
      return Lapacke<T>::gesvd_work(LAPACK_COL_MAJOR, job_u_, job_vt_, to_int(m_), to_int(n_), a, to_int(lda), s, u,
                                    to_int(ldu), vt, to_int(ldvt), work, lwork, rwork_.data());
    }
  }

  char job_u_, job_vt_;
  std::int64_t m_, n_;
  std::optional<Workspace<T>> work_;
  Workspace<Value> rwork_{5.0 * static_cast<double>(std::max<std::int64_t>(std::min(m_, n_), 1))};
};

template <class T>
Status gesvd(const Gesvd& r, void* a, void* s, void* u, void* vt, std::int32_t* info) {
  const std::int64_t k = std::min(r.m, r.n);
  SvdRun<T> svd(svd_job(r.job_u), svd_job(r.job_vt), r.m, r.n);
  using Value = typename SvdRun<T>::Value;
  return each_matrix(Routine::gesvd, r.batch, info, [&](std::int64_t i) {
    return svd(matrix<T>(a, i, r.stride_a), r.lda, matrix<Value>(s, i, k),
               u == nullptr ? nullptr : matrix<T>(u, i, r.stride_u), r.ldu,
               vt == nullptr ? nullptr : matrix<T>(vt, i, r.stride_vt), r.ldvt);
  });
}

// Gesvdj on the CPU: LAPACK's gesvd into a Vᴴ of its own, conjugated and transposed into V.
template <class T>
Status gesvdj(const Gesvdj& r, void* a, void* s, void* u, void* v, std::int32_t* info) {
  const std::int64_t k = std::min(r.m, r.n);
  const std::int64_t v_cols = r.job == SvdJob::full ? r.n : r.job == SvdJob::thin ? k : 0;
  const std::int64_t ldvt = std::max<std::int64_t>(v_cols, 1);
  SvdRun<T> svd(svd_job(r.job), svd_job(r.job), r.m, r.n);
  using Value = typename SvdRun<T>::Value;
  Workspace<T> vt(static_cast<double>(ldvt * std::max<std::int64_t>(r.n, 1)));
  return each_matrix(Routine::gesvdj, r.batch, info, [&](std::int64_t i) {
    const lapack_int code =
        svd(matrix<T>(a, i, r.stride_a), r.lda, matrix<Value>(s, i, k),
            u == nullptr ? nullptr : matrix<T>(u, i, r.stride_u), r.ldu, v == nullptr ? nullptr : vt.data(), ldvt);
    if (code == 0 && v != nullptr) {
      T* out = matrix<T>(v, i, r.stride_v);
      for (std::int64_t col = 0; col < v_cols; ++col)
        for (std::int64_t row = 0; row < r.n; ++row) out[col * r.ldv + row] = conjugate(vt.data()[row * ldvt + col]);
    }
    return code;
  });
}

}  // namespace

Status lapacke_getrf(const Getrf& r, void* a, std::int32_t* ipiv, std::int32_t* info) {
  return with_type(r.dtype, [&]<class T>(std::type_identity<T>) { return getrf<T>(r, a, ipiv, info); });
}
Status lapacke_getrs(const Getrs& r, const void* a, const std::int32_t* ipiv, void* b) {
  return with_type(r.dtype, [&]<class T>(std::type_identity<T>) { return getrs<T>(r, a, ipiv, b); });
}
Status lapacke_potrf(const Potrf& r, void* a, std::int32_t* info) {
  return with_type(r.dtype, [&]<class T>(std::type_identity<T>) { return potrf<T>(r, a, info); });
}
Status lapacke_potrs(const Potrs& r, const void* a, void* b) {
  return with_type(r.dtype, [&]<class T>(std::type_identity<T>) { return potrs<T>(r, a, b); });
}
Status lapacke_syevd(const Syevd& r, void* a, void* w, std::int32_t* info) {
  return with_type(r.dtype, [&]<class T>(std::type_identity<T>) { return syevd<T>(r, a, w, info); });
}

Status lapacke_geqrf(const Geqrf& r, void* a, void* tau) {
  return with_type(r.dtype, [&]<class T>(std::type_identity<T>) { return geqrf<T>(r, a, tau); });
}
Status lapacke_orgqr(const Orgqr& r, void* a, const void* tau) {
  return with_type(r.dtype, [&]<class T>(std::type_identity<T>) { return orgqr<T>(r, a, tau); });
}
Status lapacke_ormqr(const Ormqr& r, const void* a, const void* tau, void* c) {
  return with_type(r.dtype, [&]<class T>(std::type_identity<T>) { return ormqr<T>(r, a, tau, c); });
}
Status lapacke_gels(const Gels& r, void* a, void* b, std::int32_t* info) {
  return with_type(r.dtype, [&]<class T>(std::type_identity<T>) { return gels<T>(r, a, b, info); });
}
Status lapacke_gesvd(const Gesvd& r, void* a, void* s, void* u, void* vt, std::int32_t* info) {
  return with_type(r.dtype, [&]<class T>(std::type_identity<T>) { return gesvd<T>(r, a, s, u, vt, info); });
}

Status lapacke_gesvdj(const Gesvdj& r, void* a, void* s, void* u, void* v, std::int32_t* info) {
  return with_type(r.dtype, [&]<class T>(std::type_identity<T>) { return gesvdj<T>(r, a, s, u, v, info); });
}

LibraryVersion lapack_library() {
  lapack_int major = 0, minor = 0, patch = 0;
  LAPACK_ilaver(&major, &minor, &patch);
  return {.name = "LAPACK", .version = fmt::format("{}.{}.{} (LAPACKE)", major, minor, patch)};
}

}  // namespace accel::solver
