#include "libs/blas/level1_narrow.hpp"

#include <cmath>
#include <cstdint>
#include <utility>

#include "libs/blas/level1_operation.hpp"

namespace accel::blas {
namespace {

template <class N, class Request, class Slot>
Strided<const N> read_vector(const Request& r, std::span<const BufferView> views, Slot slot, std::int64_t inc) {
  return {static_cast<const N*>(views[slot].data), r.n, inc};
}
template <class N, class Request, class Slot>
Strided<N> written_vector(const Request& r, std::span<const BufferView> views, Slot slot, std::int64_t inc) {
  return {static_cast<N*>(views[slot].data), r.n, inc};
}

template <class N>
void store_result(const BufferView& result, double value) {
  *static_cast<N*>(result.data) = narrow<N>(static_cast<float>(value));
}

// The 1-based index of the first element whose magnitude `better` than every one before it (0 for an empty vector),
// as BLAS's reference i?amax / i?amin compare.
template <class N, class Better>
std::int32_t index_of(const Strided<const N>& x, Better better) {
  if (x.n == 0) return 0;
  std::int64_t found = 0;
  float best = std::fabs(x.value(0));
  for (std::int64_t i = 1; i < x.n; ++i) {
    const float magnitude = std::fabs(x.value(i));
    if (better(magnitude, best)) best = magnitude, found = i;
  }
  return static_cast<std::int32_t>(found + 1);
}

}  // namespace

void run_narrow(const Axpy& r, std::span<const BufferView> views) {
  using Op = Operation<Axpy>;
  with_narrow_type(r.dtype, [&]<class N>(std::type_identity<N>) {
    const auto x = read_vector<N>(r, views, Op::x, r.incx);
    const auto y = written_vector<N>(r, views, Op::y, r.incy);
    const auto alpha = static_cast<float>(r.alpha);
    for (std::int64_t i = 0; i < r.n; ++i) y[i] = narrow<N>(std::fma(alpha, x.value(i), y.value(i)));
  });
}

void run_narrow(const Scal& r, std::span<const BufferView> views) {
  with_narrow_type(r.dtype, [&]<class N>(std::type_identity<N>) {
    const auto x = written_vector<N>(r, views, Operation<Scal>::x, r.incx);
    const auto alpha = static_cast<float>(r.alpha);
    for (std::int64_t i = 0; i < r.n; ++i) x[i] = narrow<N>(alpha * x.value(i));
  });
}

void run_narrow(const Dot& r, std::span<const BufferView> views) {
  using Op = Operation<Dot>;
  with_narrow_type(r.dtype, [&]<class N>(std::type_identity<N>) {
    const auto x = read_vector<N>(r, views, Op::x, r.incx);
    const auto y = read_vector<N>(r, views, Op::y, r.incy);
    double sum = 0;
    for (std::int64_t i = 0; i < r.n; ++i) sum += static_cast<double>(x.value(i)) * y.value(i);
    store_result<N>(views[Op::result], sum);
  });
}

void run_narrow(const Nrm2& r, std::span<const BufferView> views) {
  using Op = Operation<Nrm2>;
  with_narrow_type(r.dtype, [&]<class N>(std::type_identity<N>) {
    // A bf16's square fits a double (its largest is about 3.4e38), so no scaling is needed.
    const auto x = read_vector<N>(r, views, Op::x, r.incx);
    double sum_squares = 0;
    for (std::int64_t i = 0; i < r.n; ++i) sum_squares += static_cast<double>(x.value(i)) * x.value(i);
    store_result<N>(views[Op::result], std::sqrt(sum_squares));
  });
}

void run_narrow(const Asum& r, std::span<const BufferView> views) {
  using Op = Operation<Asum>;
  with_narrow_type(r.dtype, [&]<class N>(std::type_identity<N>) {
    const auto x = read_vector<N>(r, views, Op::x, r.incx);
    double sum = 0;
    for (std::int64_t i = 0; i < r.n; ++i) sum += std::fabs(x.value(i));
    store_result<N>(views[Op::result], sum);
  });
}

void run_narrow(const Iamax& r, std::span<const BufferView> views) {
  using Op = Operation<Iamax>;
  with_narrow_type(r.dtype, [&]<class N>(std::type_identity<N>) {
    *static_cast<std::int32_t*>(views[Op::result].data) =
        index_of(read_vector<N>(r, views, Op::x, r.incx), [](float a, float b) { return a > b; });
  });
}

void run_narrow(const Iamin& r, std::span<const BufferView> views) {
  using Op = Operation<Iamin>;
  with_narrow_type(r.dtype, [&]<class N>(std::type_identity<N>) {
    *static_cast<std::int32_t*>(views[Op::result].data) =
        index_of(read_vector<N>(r, views, Op::x, r.incx), [](float a, float b) { return a < b; });
  });
}

void run_narrow(const Copy& r, std::span<const BufferView> views) {
  using Op = Operation<Copy>;
  with_narrow_type(r.dtype, [&]<class N>(std::type_identity<N>) {
    const auto x = read_vector<N>(r, views, Op::x, r.incx);
    const auto y = written_vector<N>(r, views, Op::y, r.incy);
    for (std::int64_t i = 0; i < r.n; ++i) y[i] = x[i];
  });
}

void run_narrow(const Swap& r, std::span<const BufferView> views) {
  using Op = Operation<Swap>;
  with_narrow_type(r.dtype, [&]<class N>(std::type_identity<N>) {
    const auto x = written_vector<N>(r, views, Op::x, r.incx);
    const auto y = written_vector<N>(r, views, Op::y, r.incy);
    for (std::int64_t i = 0; i < r.n; ++i) std::swap(x[i], y[i]);
  });
}

void run_narrow(const Rot& r, std::span<const BufferView> views) {
  using Op = Operation<Rot>;
  with_narrow_type(r.dtype, [&]<class N>(std::type_identity<N>) {
    const auto x = written_vector<N>(r, views, Op::x, r.incx);
    const auto y = written_vector<N>(r, views, Op::y, r.incy);
    const float c = to_float(narrow<N>(static_cast<float>(r.c))), s = to_float(narrow<N>(static_cast<float>(r.s)));
    for (std::int64_t i = 0; i < r.n; ++i) {
      const float xi = x.value(i), yi = y.value(i);
      x[i] = narrow<N>(c * xi + s * yi);
      y[i] = narrow<N>(c * yi - s * xi);
    }
  });
}

}  // namespace accel::blas
