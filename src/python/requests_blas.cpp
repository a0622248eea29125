// BLAS levels 1-3 beyond GEMM (include/accel/libs/blas/level1.hpp, level2.hpp, level3.hpp) as Device methods, their
// keyword arguments the request structs' members. python/accel/_blas.py adds defaults from the buffers' shapes.
#include "python/blas_enums.hpp"

#include "accel/libs/blas/level1.hpp"

namespace accel::python {

namespace {

// Scal, Nrm2, Asum, Iamax and Iamin: one vector x (and, but for Scal, a result buffer).
template <class R>
std::vector<Field<R>> one_vector_fields() {
  std::vector<Field<R>> fields{member("dtype", &R::dtype), member("n", &R::n), member("incx", &R::incx),
                               member("x", &R::x)};
  if constexpr (requires { &R::result; }) fields.push_back(member("result", &R::result));
  return fields;
}

// Copy, Swap and Rot: two vectors x and y of n elements.
template <class R>
std::vector<Field<R>> two_vector_fields() {
  return {member("dtype", &R::dtype), member("n", &R::n), member("incx", &R::incx),
          member("incy", &R::incy),   member("x", &R::x), member("y", &R::y)};
}

}  // namespace

void bind_blas_requests(nb::module_& module) {
  auto device = nb::borrow<nb::class_<PyDevice>>(module.attr("Device"));
  using namespace blas;
  bind_request<Axpy>(device, "axpy",
                     {member("dtype", &Axpy::dtype), member("n", &Axpy::n), member("incx", &Axpy::incx),
                      member("incy", &Axpy::incy), member("alpha", &Axpy::alpha),
                      member("alpha_imag", &Axpy::alpha_imag), member("x", &Axpy::x), member("y", &Axpy::y)});
  std::vector<Field<Scal>> scal = one_vector_fields<Scal>();
  scal.push_back(member("alpha", &Scal::alpha));
  scal.push_back(member("alpha_imag", &Scal::alpha_imag));
  bind_request<Scal>(device, "scal", std::move(scal));
  bind_request<Dot>(device, "dot",
                    {member("dtype", &Dot::dtype), member("n", &Dot::n), member("incx", &Dot::incx),
                     member("incy", &Dot::incy), member("conjugate", &Dot::conjugate), member("x", &Dot::x),
                     member("y", &Dot::y), member("result", &Dot::result)});
  bind_request<Nrm2>(device, "nrm2", one_vector_fields<Nrm2>());
  bind_request<Asum>(device, "asum", one_vector_fields<Asum>());
  bind_request<Iamax>(device, "iamax", one_vector_fields<Iamax>());
  bind_request<Iamin>(device, "iamin", one_vector_fields<Iamin>());
  bind_request<Copy>(device, "copy", two_vector_fields<Copy>());
  bind_request<Swap>(device, "swap", two_vector_fields<Swap>());
  std::vector<Field<Rot>> rot = two_vector_fields<Rot>();
  rot.push_back(member("c", &Rot::c));
  rot.push_back(member("s", &Rot::s));
  bind_request<Rot>(device, "rot", std::move(rot));

  using V = Gemv;
  bind_request<V>(device, "gemv",
                  {member("dtype", &V::dtype), member("transpose", &V::transpose), member("m", &V::m),
                   member("n", &V::n), member("lda", &V::lda), member("incx", &V::incx), member("incy", &V::incy),
                   member("batch", &V::batch), member("stride_a", &V::stride_a), member("stride_x", &V::stride_x),
                   member("stride_y", &V::stride_y), member("alpha", &V::alpha), member("beta", &V::beta),
                   member("a", &V::a), member("x", &V::x), member("y", &V::y)});
  using T = Trsm;
  bind_request<T>(
      device, "trsm",
      {member("dtype", &T::dtype), member("side", &T::side), member("fill", &T::fill),
       member("transpose", &T::transpose), member("diagonal", &T::diagonal), member("m", &T::m), member("n", &T::n),
       member("lda", &T::lda), member("ldb", &T::ldb), member("batch", &T::batch), member("stride_a", &T::stride_a),
       member("stride_b", &T::stride_b), member("alpha", &T::alpha), member("a", &T::a), member("b", &T::b)});
  using S = Syrk;
  bind_request<S>(device, "syrk",
                  {member("dtype", &S::dtype), member("fill", &S::fill), member("transpose", &S::transpose),
                   member("n", &S::n), member("k", &S::k), member("lda", &S::lda), member("ldc", &S::ldc),
                   member("batch", &S::batch), member("stride_a", &S::stride_a), member("stride_c", &S::stride_c),
                   member("alpha", &S::alpha), member("beta", &S::beta), member("a", &S::a), member("c", &S::c)});
  bind_blas_level2_3_more(device);
  export_enums<Side, Fill, Diagonal>(module);
}

}  // namespace accel::python
