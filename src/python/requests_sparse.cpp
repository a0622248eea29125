// The sparse requests (include/accel/libs/sparse/: SpMV, SpMM, SpSV, conversions, SDDMM, SpGEMM, dense to CSR) as
// Device methods, their keyword arguments the request structs' members. A sparse::Matrix or sparse::DenseMatrix
// operand is a dict of its members; python/accel/sparse.py makes them (csr(), coo(), dense(), ...) with the sizes and
// types from the buffers, and adds the requests' defaults.
#include "python/request_fields.hpp"

#include "accel/libs/sparse/requests.hpp"

namespace accel::python {

template <>
struct EnumNames<sparse::Format> {
  static constexpr const char* python_name = "SparseFormat";
  static constexpr std::array values{std::pair{sparse::Format::csr, "csr"}, std::pair{sparse::Format::csc, "csc"},
                                     std::pair{sparse::Format::coo, "coo"},
                                     std::pair{sparse::Format::blocked_ell, "blocked_ell"}};
};
template <>
struct EnumNames<sparse::Structure> {
  static constexpr const char* python_name = "SparseStructure";
  static constexpr std::array values{std::pair{sparse::Structure::checked_each_use, "checked_each_use"},
                                     std::pair{sparse::Structure::fixed, "fixed"}};
};
template <>
struct EnumNames<sparse::Fill> {
  static constexpr const char* python_name = "Fill";
  static constexpr std::array values{std::pair{sparse::Fill::lower, "lower"}, std::pair{sparse::Fill::upper, "upper"}};
};
template <>
struct EnumNames<sparse::Diagonal> {
  static constexpr const char* python_name = "Diagonal";
  static constexpr std::array values{std::pair{sparse::Diagonal::non_unit, "non_unit"},
                                     std::pair{sparse::Diagonal::unit, "unit"}};
};

template <>
struct FromPython<sparse::Matrix> : FromDict<sparse::Matrix> {
  static std::vector<Field<sparse::Matrix>> fields() {
    using M = sparse::Matrix;
    return {member("format", &M::format),
            member("index", &M::index),
            member("dtype", &M::dtype),
            member("structure", &M::structure),
            member("ell_block_size", &M::ell_block_size),
            member("rows", &M::rows),
            member("cols", &M::cols),
            member("nnz", &M::nnz),
            member("offsets", &M::offsets),
            member("indices", &M::indices),
            member("values", &M::values)};
  }
};

template <>
struct FromPython<sparse::DenseMatrix> : FromDict<sparse::DenseMatrix> {
  static std::vector<Field<sparse::DenseMatrix>> fields() {
    using D = sparse::DenseMatrix;
    return {member("order", &D::order), member("rows", &D::rows), member("cols", &D::cols), member("ld", &D::ld),
            member("data", &D::data)};
  }
};

void bind_sparse_requests(nb::module_& module) {
  auto device = nb::borrow<nb::class_<PyDevice>>(module.attr("Device"));
  using namespace sparse;
  bind_request<SpMV>(device, "spmv",
                     {member("op", &SpMV::op), member("alpha", &SpMV::alpha), member("beta", &SpMV::beta),
                      member("a", &SpMV::a), member("x", &SpMV::x), member("y", &SpMV::y)});
  bind_request<SpMM>(
      device, "spmm",
      {member("op_a", &SpMM::op_a), member("op_b", &SpMM::op_b), member("alpha", &SpMM::alpha),
       member("beta", &SpMM::beta), member("a", &SpMM::a), member("b", &SpMM::b), member("c", &SpMM::c)});
  bind_request<SpSV>(
      device, "spsv",
      {member("op", &SpSV::op), member("fill", &SpSV::fill), member("diagonal", &SpSV::diagonal),
       member("alpha", &SpSV::alpha), member("a", &SpSV::a), member("x", &SpSV::x), member("y", &SpSV::y)});
  bind_request<ToDense>(device, "to_dense", {member("a", &ToDense::a), member("out", &ToDense::out)});
  bind_request<CsrToCoo>(device, "csr_to_coo", {member("csr", &CsrToCoo::csr), member("rows", &CsrToCoo::rows)});
  bind_request<CooToCsr>(device, "coo_to_csr", {member("coo", &CooToCsr::coo), member("offsets", &CooToCsr::offsets)});
  bind_request<SDDMM>(
      device, "sddmm",
      {member("op_a", &SDDMM::op_a), member("op_b", &SDDMM::op_b), member("alpha", &SDDMM::alpha),
       member("beta", &SDDMM::beta), member("a", &SDDMM::a), member("b", &SDDMM::b), member("c", &SDDMM::c)});
  bind_request<SpGemmCount>(
      device, "spgemm_count",
      {member("a", &SpGemmCount::a), member("b", &SpGemmCount::b), member("c_offsets", &SpGemmCount::c_offsets)});
  bind_request<SpGemm>(
      device, "spgemm",
      {member("alpha", &SpGemm::alpha), member("a", &SpGemm::a), member("b", &SpGemm::b), member("c", &SpGemm::c)});
  bind_request<DenseToCsrCount>(
      device, "dense_to_csr_count",
      {member("a", &DenseToCsrCount::a), member("dtype", &DenseToCsrCount::dtype),
       member("index", &DenseToCsrCount::index), member("offsets", &DenseToCsrCount::offsets)});
  bind_request<DenseToCsr>(device, "dense_to_csr", {member("a", &DenseToCsr::a), member("out", &DenseToCsr::out)});
  export_enums<Format, Structure, Fill, Diagonal>(module);
}

}  // namespace accel::python
