// BLAS levels 2-3 added after the first binding (Ger, Trsv, Symv, Symm, Trmm, Geam) as Device methods, their keyword
// arguments the request structs' members; requests_blas.cpp calls this. python/accel/_blas.py adds defaults.
#include "python/blas_enums.hpp"

namespace accel::python {

void bind_blas_level2_3_more(nb::class_<PyDevice>& device) {
  using namespace blas;
  bind_request<Ger>(
      device, "ger",
      {member("dtype", &Ger::dtype), member("m", &Ger::m), member("n", &Ger::n), member("lda", &Ger::lda),
       member("incx", &Ger::incx), member("incy", &Ger::incy), member("batch", &Ger::batch),
       member("stride_a", &Ger::stride_a), member("stride_x", &Ger::stride_x), member("stride_y", &Ger::stride_y),
       member("alpha", &Ger::alpha), member("a", &Ger::a), member("x", &Ger::x), member("y", &Ger::y)});
  bind_request<Trsv>(device, "trsv",
                     {member("dtype", &Trsv::dtype), member("fill", &Trsv::fill), member("transpose", &Trsv::transpose),
                      member("diagonal", &Trsv::diagonal), member("n", &Trsv::n), member("lda", &Trsv::lda),
                      member("incx", &Trsv::incx), member("batch", &Trsv::batch), member("stride_a", &Trsv::stride_a),
                      member("stride_x", &Trsv::stride_x), member("a", &Trsv::a), member("x", &Trsv::x)});
  bind_request<Symv>(
      device, "symv",
      {member("dtype", &Symv::dtype), member("fill", &Symv::fill), member("n", &Symv::n), member("lda", &Symv::lda),
       member("incx", &Symv::incx), member("incy", &Symv::incy), member("batch", &Symv::batch),
       member("stride_a", &Symv::stride_a), member("stride_x", &Symv::stride_x), member("stride_y", &Symv::stride_y),
       member("alpha", &Symv::alpha), member("beta", &Symv::beta), member("a", &Symv::a), member("x", &Symv::x),
       member("y", &Symv::y)});
  bind_request<Symm>(
      device, "symm",
      {member("dtype", &Symm::dtype), member("side", &Symm::side), member("fill", &Symm::fill), member("m", &Symm::m),
       member("n", &Symm::n), member("lda", &Symm::lda), member("ldb", &Symm::ldb), member("ldc", &Symm::ldc),
       member("batch", &Symm::batch), member("stride_a", &Symm::stride_a), member("stride_b", &Symm::stride_b),
       member("stride_c", &Symm::stride_c), member("alpha", &Symm::alpha), member("beta", &Symm::beta),
       member("a", &Symm::a), member("b", &Symm::b), member("c", &Symm::c)});
  bind_request<Trmm>(
      device, "trmm",
      {member("dtype", &Trmm::dtype), member("side", &Trmm::side), member("fill", &Trmm::fill),
       member("transpose", &Trmm::transpose), member("diagonal", &Trmm::diagonal), member("m", &Trmm::m),
       member("n", &Trmm::n), member("lda", &Trmm::lda), member("ldb", &Trmm::ldb), member("batch", &Trmm::batch),
       member("stride_a", &Trmm::stride_a), member("stride_b", &Trmm::stride_b), member("alpha", &Trmm::alpha),
       member("a", &Trmm::a), member("b", &Trmm::b)});
  bind_request<Geam>(
      device, "geam",
      {member("dtype", &Geam::dtype), member("transpose_a", &Geam::transpose_a),
       member("transpose_b", &Geam::transpose_b), member("m", &Geam::m), member("n", &Geam::n),
       member("lda", &Geam::lda), member("ldb", &Geam::ldb), member("ldc", &Geam::ldc), member("batch", &Geam::batch),
       member("stride_a", &Geam::stride_a), member("stride_b", &Geam::stride_b), member("stride_c", &Geam::stride_c),
       member("alpha", &Geam::alpha), member("beta", &Geam::beta), member("a", &Geam::a), member("b", &Geam::b),
       member("c", &Geam::c)});
}

}  // namespace accel::python
