// The Python names of the BLAS enums (blas::Side, Fill, Diagonal), shared by requests_blas.cpp and
// requests_blas_more.cpp, and the latter's entry point.
#pragma once

#include "python/request_fields.hpp"

#include "accel/libs/blas/level2.hpp"
#include "accel/libs/blas/level3.hpp"

namespace accel::python {

template <>
struct EnumNames<blas::Side> {
  static constexpr const char* python_name = "Side";
  static constexpr std::array values{std::pair{blas::Side::left, "left"}, std::pair{blas::Side::right, "right"}};
};
template <>
struct EnumNames<blas::Fill> {
  static constexpr const char* python_name = "Fill";
  static constexpr std::array values{std::pair{blas::Fill::lower, "lower"}, std::pair{blas::Fill::upper, "upper"}};
};
template <>
struct EnumNames<blas::Diagonal> {
  static constexpr const char* python_name = "Diagonal";
  static constexpr std::array values{std::pair{blas::Diagonal::non_unit, "non_unit"},
                                     std::pair{blas::Diagonal::unit, "unit"}};
};

/// Binds Ger, Trsv, Symv, Symm, Trmm and Geam on Device (requests_blas_more.cpp; bind_blas_requests calls it).
void bind_blas_level2_3_more(nb::class_<PyDevice>& device);

}  // namespace accel::python
