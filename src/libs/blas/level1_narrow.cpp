#include "libs/blas/level1_narrow.hpp"

#include <cmath>
#include <cstdint>
#include <utility>

#include "core/vector_versions.hpp"
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

// y = fma(alpha, x, y) over n floats: one instruction an element in the AVX2 and AVX-512 copies, the same correctly
// rounded result as the baseline's fmaf call, which cost 2.7 ns an element on the development VM.
ACCEL_VECTOR_BODY void fused_axpy_body(float alpha, const float* x, float* y, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) y[k] = std::fma(alpha, x[k], y[k]);
}

void fused_axpy(float alpha, const float* x, float* y, std::int64_t n) {
  detail::at_cpu_vector_width<fused_axpy_body>(alpha, x, y, n);
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
  float values[kChunk];
  for_each_chunk(x.n, [&](std::int64_t first, std::int64_t count) {
    widen(x, first, count, values);
    for (std::int64_t k = 0; k < count; ++k) {
      const float magnitude = std::fabs(values[k]);
      if (better(magnitude, best)) best = magnitude, found = first + k;
    }
  });
  return static_cast<std::int32_t>(found + 1);
}

// Σ over x (or x and y) in double (EightSums), by `add` (add_squares, add_magnitudes, add_products) over chunks
// widened at once.
template <class N, class Add>
double sum_of(const Strided<const N>& x, Add add) {
  EightSums sums;
  float xs[kChunk];
  for_each_chunk(x.n, [&](std::int64_t first, std::int64_t count) {
    widen(x, first, count, xs);
    add(sums, xs, count);
  });
  return sums.total();
}
template <class N>
double sum_of_products(const Strided<const N>& x, const Strided<const N>& y) {
  EightSums sums;
  float xs[kChunk], ys[kChunk];
  for_each_chunk(x.n, [&](std::int64_t first, std::int64_t count) {
    widen(x, first, count, xs);
    widen(y, first, count, ys);
    add_products(sums, xs, ys, count);
  });
  return sums.total();
}

// x = f(x) element by element in f32, each rounded once: f writes the element's new value in place.
template <class N, class Update>
void update(const Strided<N>& x, Update f) {
  float xs[kChunk];
  for_each_chunk(x.n, [&](std::int64_t first, std::int64_t count) {
    widen(x, first, count, xs);
    for (std::int64_t k = 0; k < count; ++k) f(xs[k]);
    store(x, first, std::span<const float>(xs, static_cast<std::size_t>(count)));
  });
}

}  // namespace

void run_narrow(const Axpy& r, std::span<const BufferView> views) {
  using Op = Operation<Axpy>;
  with_narrow_type(r.dtype, [&]<class N>(std::type_identity<N>) {
    const auto x = read_vector<N>(r, views, Op::x, r.incx);
    const auto y = written_vector<N>(r, views, Op::y, r.incy);
    const auto alpha = static_cast<float>(r.alpha);
    float xs[kChunk], ys[kChunk];
    for_each_chunk(r.n, [&](std::int64_t first, std::int64_t count) {
      widen(x, first, count, xs);
      widen(y, first, count, ys);
      fused_axpy(alpha, xs, ys, count);
      store(y, first, std::span<const float>(ys, static_cast<std::size_t>(count)));
    });
  });
}

void run_narrow(const Scal& r, std::span<const BufferView> views) {
  with_narrow_type(r.dtype, [&]<class N>(std::type_identity<N>) {
    const auto x = written_vector<N>(r, views, Operation<Scal>::x, r.incx);
    const auto alpha = static_cast<float>(r.alpha);
    update(x, [&](float& value) { value = alpha * value; });
  });
}

void run_narrow(const Dot& r, std::span<const BufferView> views) {
  using Op = Operation<Dot>;
  with_narrow_type(r.dtype, [&]<class N>(std::type_identity<N>) {
    const auto x = read_vector<N>(r, views, Op::x, r.incx);
    const auto y = read_vector<N>(r, views, Op::y, r.incy);
    store_result<N>(views[Op::result], sum_of_products(x, y));
  });
}

void run_narrow(const Nrm2& r, std::span<const BufferView> views) {
  using Op = Operation<Nrm2>;
  with_narrow_type(r.dtype, [&]<class N>(std::type_identity<N>) {
    // A bf16's square fits a double (its largest is about 3.4e38), so no scaling is needed.
    const auto x = read_vector<N>(r, views, Op::x, r.incx);
    const double sum_squares = sum_of(x, add_squares);
    store_result<N>(views[Op::result], std::sqrt(sum_squares));
  });
}

void run_narrow(const Asum& r, std::span<const BufferView> views) {
  using Op = Operation<Asum>;
  with_narrow_type(r.dtype, [&]<class N>(std::type_identity<N>) {
    const auto x = read_vector<N>(r, views, Op::x, r.incx);
    store_result<N>(views[Op::result], sum_of(x, add_magnitudes));
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
    float xs[kChunk], ys[kChunk], new_x[kChunk];
    for_each_chunk(r.n, [&](std::int64_t first, std::int64_t count) {
      widen(x, first, count, xs);
      widen(y, first, count, ys);
      for (std::int64_t k = 0; k < count; ++k) {
        new_x[k] = c * xs[k] + s * ys[k];
        ys[k] = c * ys[k] - s * xs[k];
      }
      const auto length = static_cast<std::size_t>(count);
      store(x, first, std::span<const float>(new_x, length));
      store(y, first, std::span<const float>(ys, length));
    });
  });
}

}  // namespace accel::blas
