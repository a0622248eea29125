// The dense solver requests (include/accel/libs/solver/dense.hpp: LU, Cholesky, eigen, QR, SVD, least squares) as
// Device methods, their keyword arguments the request structs' members. python/accel/_solver.py adds defaults from
// the buffers' shapes.
#include "python/request_fields.hpp"

#include "accel/libs/solver/dense.hpp"

namespace accel::python {

template <>
struct EnumNames<solver::Fill> {
  static constexpr const char* python_name = "Fill";
  static constexpr std::array values{std::pair{solver::Fill::lower, "lower"}, std::pair{solver::Fill::upper, "upper"}};
};
template <>
struct EnumNames<solver::Side> {
  static constexpr const char* python_name = "Side";
  static constexpr std::array values{std::pair{solver::Side::left, "left"}, std::pair{solver::Side::right, "right"}};
};
template <>
struct EnumNames<solver::EigenJob> {
  static constexpr const char* python_name = "EigenJob";
  static constexpr std::array values{std::pair{solver::EigenJob::values, "values"},
                                     std::pair{solver::EigenJob::values_and_vectors, "values_and_vectors"}};
};
template <>
struct EnumNames<solver::SvdJob> {
  static constexpr const char* python_name = "SvdJob";
  static constexpr std::array values{std::pair{solver::SvdJob::none, "none"}, std::pair{solver::SvdJob::thin, "thin"},
                                     std::pair{solver::SvdJob::full, "full"}};
};

namespace {

// The members every request of the family has: dtype, A with its leading dimension, the batch and A's stride.
template <class R>
std::vector<Field<R>> with_matrix_a(std::initializer_list<Field<R>> own) {
  std::vector<Field<R>> fields{member("dtype", &R::dtype), member("lda", &R::lda), member("batch", &R::batch),
                               member("stride_a", &R::stride_a), member("a", &R::a)};
  fields.insert(fields.end(), own);
  return fields;
}

}  // namespace

void bind_solver_requests(nb::module_& module) {
  auto device = nb::borrow<nb::class_<PyDevice>>(module.attr("Device"));
  using namespace solver;
  bind_request<Getrf>(
      device, "getrf",
      with_matrix_a<Getrf>({member("n", &Getrf::n), member("ipiv", &Getrf::ipiv), member("info", &Getrf::info)}));
  bind_request<Getrs>(device, "getrs",
                      with_matrix_a<Getrs>({member("transpose", &Getrs::transpose), member("n", &Getrs::n),
                                            member("nrhs", &Getrs::nrhs), member("ldb", &Getrs::ldb),
                                            member("stride_b", &Getrs::stride_b), member("ipiv", &Getrs::ipiv),
                                            member("b", &Getrs::b)}));
  bind_request<Potrf>(
      device, "potrf",
      with_matrix_a<Potrf>({member("fill", &Potrf::fill), member("n", &Potrf::n), member("info", &Potrf::info)}));
  bind_request<Potrs>(
      device, "potrs",
      with_matrix_a<Potrs>({member("fill", &Potrs::fill), member("n", &Potrs::n), member("nrhs", &Potrs::nrhs),
                            member("ldb", &Potrs::ldb), member("stride_b", &Potrs::stride_b), member("b", &Potrs::b)}));
  bind_request<Syevd>(
      device, "syevd",
      with_matrix_a<Syevd>({member("job", &Syevd::job), member("fill", &Syevd::fill), member("n", &Syevd::n),
                            member("w", &Syevd::w), member("info", &Syevd::info)}));
  bind_request<Geqrf>(
      device, "geqrf",
      with_matrix_a<Geqrf>({member("m", &Geqrf::m), member("n", &Geqrf::n), member("tau", &Geqrf::tau)}));
  bind_request<Orgqr>(device, "orgqr",
                      with_matrix_a<Orgqr>({member("m", &Orgqr::m), member("n", &Orgqr::n), member("k", &Orgqr::k),
                                            member("tau", &Orgqr::tau)}));
  bind_request<Ormqr>(device, "ormqr",
                      with_matrix_a<Ormqr>({member("side", &Ormqr::side), member("transpose", &Ormqr::transpose),
                                            member("m", &Ormqr::m), member("n", &Ormqr::n), member("k", &Ormqr::k),
                                            member("ldc", &Ormqr::ldc), member("stride_c", &Ormqr::stride_c),
                                            member("tau", &Ormqr::tau), member("c", &Ormqr::c)}));
  bind_request<Gels>(device, "gels",
                     with_matrix_a<Gels>({member("m", &Gels::m), member("n", &Gels::n), member("nrhs", &Gels::nrhs),
                                          member("ldb", &Gels::ldb), member("stride_b", &Gels::stride_b),
                                          member("b", &Gels::b), member("info", &Gels::info)}));
  bind_request<Gesvd>(
      device, "gesvd",
      with_matrix_a<Gesvd>({member("job_u", &Gesvd::job_u), member("job_vt", &Gesvd::job_vt), member("m", &Gesvd::m),
                            member("n", &Gesvd::n), member("ldu", &Gesvd::ldu), member("ldvt", &Gesvd::ldvt),
                            member("stride_u", &Gesvd::stride_u), member("stride_vt", &Gesvd::stride_vt),
                            member("s", &Gesvd::s), member("u", &Gesvd::u), member("vt", &Gesvd::vt),
                            member("info", &Gesvd::info)}));
  bind_request<Gesvdj>(
      device, "gesvdj",
      with_matrix_a<Gesvdj>({member("job", &Gesvdj::job), member("max_sweeps", &Gesvdj::max_sweeps),
                             member("tolerance", &Gesvdj::tolerance), member("m", &Gesvdj::m), member("n", &Gesvdj::n),
                             member("ldu", &Gesvdj::ldu), member("ldv", &Gesvdj::ldv),
                             member("stride_u", &Gesvdj::stride_u), member("stride_v", &Gesvdj::stride_v),
                             member("s", &Gesvdj::s), member("u", &Gesvdj::u), member("v", &Gesvdj::v),
                             member("info", &Gesvdj::info)}));
  export_enums<Fill, Side, EigenJob, SvdJob>(module);
}

}  // namespace accel::python
