#include "libs/tensor/cpu_tensor.hpp"

#include <cblas.h>
#include <fmt/format.h>

#include <Eigen/Core>
#include <climits>
#include <cstdint>

#include "libs/tensor/tensor_checks.hpp"
#include "libs/tensor/tensor_gather.hpp"

namespace accel::tensor {
namespace {

template <class T>
using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
template <class T>
using Rows = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <class T>
Eigen::Map<Array<T>> as_array(std::vector<T>& values) {
  return {values.data(), static_cast<Eigen::Index>(values.size())};
}

template <class Expression>
auto unary(Unary op, const Expression& x) -> typename Expression::PlainObject {
  using T = typename Expression::Scalar;
  switch (op) {
    case Unary::identity: return x;
    case Unary::sqrt: return x.sqrt();
    case Unary::relu: return x.max(T(0));
    case Unary::rcp: return x.inverse();
    case Unary::sigmoid: return (T(1) + (-x).exp()).inverse();
    case Unary::tanh: return x.tanh();
    case Unary::exp: return x.exp();
    case Unary::log: return x.log();
    case Unary::abs: return x.abs();
    case Unary::neg: return -x;
  }
  return x;
}

template <class T>
Array<T> binary(Binary op, const Array<T>& x, const Array<T>& y) {
  switch (op) {
    case Binary::add: return x + y;
    case Binary::mul: return x * y;
    case Binary::max: return x.max(y);
    case Binary::min: return x.min(y);
  }
  return x;
}

// scale op(T) of a tensor gathered into D's modes; 0 when the scale is (the tensor is then not read).
template <class T>
Array<T> term(double scale, Unary op, const BufferView& view, DType dtype, const Tensor& tensor, const Tensor& d) {
  if (scale == 0) return Array<T>::Zero(static_cast<Eigen::Index>(element_count(d)));
  std::vector<T> values;
  gather(view.data, dtype, tensor, d, values);
  return static_cast<T>(scale) * unary(op, as_array(values));
}

// C, of D's layout: the buffer `c`, or D's own contents.
template <class T>
Array<T> addend(double scale, Unary op, const BufferView& c, const BufferView& d, DType dtype, const Tensor& layout) {
  return term<T>(scale, op, c.data != nullptr ? c : d, dtype, layout, layout);
}

template <class T>
void write(const Array<T>& result, DType dtype, const BufferView& d) {
  std::vector<T> values(result.data(), result.data() + result.size());
  store(values, dtype, d.data);
}

template <class T>
void gemm(int m, int n, int k, const T* a, const T* b, T* c) {
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
  } else {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, k, b, n, 0.0, c, n);
  }
}

template <class T>
Status contract(const Contract& r, const BufferView& a, const BufferView& b, const BufferView& c, const BufferView& d) {
  // The modes by role: batched (in A, B and D), A's free modes (m), B's free modes (n), summed (k).
  const Tensor batch = select_modes(r.d, [&](char x) { return has_mode(r.a, x) && has_mode(r.b, x); });
  const Tensor m = select_modes(r.d, [&](char x) { return has_mode(r.a, x) && !has_mode(r.b, x); });
  const Tensor n = select_modes(r.d, [&](char x) { return !has_mode(r.a, x) && has_mode(r.b, x); });
  const Tensor k = select_modes(r.a, [&](char x) { return has_mode(r.b, x) && !has_mode(r.d, x); });
  const std::uint64_t batches = element_count(batch), rows = element_count(m), cols = element_count(n),
                      depth = element_count(k);
  if (rows > INT_MAX || cols > INT_MAX || depth > INT_MAX) {
    return not_supported(
        fmt::format("{}: the CPU device's GEMM takes at most {} rows, columns and summed elements; "
                    "this contraction has {} x {} x {}",
                    Contract::kName, INT_MAX, rows, cols, depth));
  }
  Array<T> result = Array<T>::Zero(static_cast<Eigen::Index>(element_count(r.d)));
  if (r.alpha != 0) {
    std::vector<T> packed_a, packed_b, product(batches * rows * cols);
    gather(a.data, r.dtype, r.a, concat(concat(batch, m), k), packed_a);
    gather(b.data, r.dtype, r.b, concat(concat(batch, k), n), packed_b);
    for (std::uint64_t i = 0; i < batches; ++i) {
      gemm<T>(static_cast<int>(rows), static_cast<int>(cols), static_cast<int>(depth),
              packed_a.data() + i * rows * depth, packed_b.data() + i * depth * cols, product.data() + i * rows * cols);
    }
    std::vector<T> permuted;
    gather(product.data(), dtype_of<T>(), concat(concat(batch, m), n), r.d, permuted);
    result = static_cast<T>(r.alpha) * as_array(permuted);
  }
  if (r.beta != 0) result += addend<T>(r.beta, Unary::identity, c, d, r.dtype, r.d);
  write(result, r.dtype, d);
  return Status();
}

template <class T>
Status elementwise_binary(const ElementwiseBinary& r, const BufferView& a, const BufferView& c, const BufferView& d) {
  const Array<T> x = term<T>(r.alpha, r.op_a, a, r.dtype, r.a, r.d);
  const Array<T> y = addend<T>(r.gamma, r.op_c, c, d, r.dtype, r.d);
  write(binary(r.op, x, y), r.dtype, d);
  return Status();
}

template <class T>
Status elementwise_trinary(const ElementwiseTrinary& r, const BufferView& a, const BufferView& b, const BufferView& c,
                           const BufferView& d) {
  const Array<T> x = term<T>(r.alpha, r.op_a, a, r.dtype, r.a, r.d);
  const Array<T> y = term<T>(r.beta, r.op_b, b, r.dtype, r.b, r.d);
  const Array<T> z = addend<T>(r.gamma, r.op_c, c, d, r.dtype, r.d);
  write(binary(r.op_abc, binary(r.op_ab, x, y), z), r.dtype, d);
  return Status();
}

template <class T>
Status reduce(const Reduce& r, const BufferView& a, const BufferView& c, const BufferView& d) {
  const auto outputs = static_cast<Eigen::Index>(element_count(r.d));
  Array<T> result = Array<T>::Zero(outputs);
  if (r.alpha != 0) {
    // A as a matrix: a row per element of D, a column per combination of the reduced modes.
    const Tensor reduced = select_modes(r.a, [&](char x) { return !has_mode(r.d, x); });
    std::vector<T> values;
    gather(a.data, r.dtype, r.a, concat(r.d, reduced), values);
    const Rows<T> rows =
        unary(r.op_a, Eigen::Map<Rows<T>>(values.data(), outputs, static_cast<Eigen::Index>(element_count(reduced))));
    switch (r.op) {
      case Binary::add: result = rows.rowwise().sum(); break;
      case Binary::mul: result = rows.rowwise().prod(); break;
      case Binary::max: result = rows.rowwise().maxCoeff(); break;
      case Binary::min: result = rows.rowwise().minCoeff(); break;
    }
    result *= static_cast<T>(r.alpha);
  }
  if (r.beta != 0) result += addend<T>(r.beta, Unary::identity, c, d, r.dtype, r.d);
  write(result, r.dtype, d);
  return Status();
}

template <class T>
Status permute(const Permute& r, const BufferView& a, const BufferView& b) {
  write(term<T>(r.alpha, r.op_a, a, r.dtype, r.a, r.b), r.dtype, b);
  return Status();
}

// f64 data computes in double, the rest in float (at least the precision of any compute type cuTENSOR offers them).
bool in_double(DType dtype) noexcept { return dtype == DType::f64; }

}  // namespace

Status cpu_contract(const Contract& r, const BufferView& a, const BufferView& b, const BufferView& c,
                    const BufferView& d) {
  return in_double(r.dtype) ? contract<double>(r, a, b, c, d) : contract<float>(r, a, b, c, d);
}

Status cpu_binary(const ElementwiseBinary& r, const BufferView& a, const BufferView& c, const BufferView& d) {
  return in_double(r.dtype) ? elementwise_binary<double>(r, a, c, d) : elementwise_binary<float>(r, a, c, d);
}

Status cpu_trinary(const ElementwiseTrinary& r, const BufferView& a, const BufferView& b, const BufferView& c,
                   const BufferView& d) {
  return in_double(r.dtype) ? elementwise_trinary<double>(r, a, b, c, d) : elementwise_trinary<float>(r, a, b, c, d);
}

Status cpu_reduce(const Reduce& r, const BufferView& a, const BufferView& c, const BufferView& d) {
  return in_double(r.dtype) ? reduce<double>(r, a, c, d) : reduce<float>(r, a, c, d);
}

Status cpu_permute(const Permute& r, const BufferView& a, const BufferView& b) {
  return in_double(r.dtype) ? permute<double>(r, a, b) : permute<float>(r, a, b);
}

std::vector<LibraryVersion> cpu_tensor_libraries() {
  return {{.name = "OpenBLAS", .version = openblas_get_config()},
          {.name = "Eigen",
           .version = fmt::format("{}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION)}};
}

}  // namespace accel::tensor
