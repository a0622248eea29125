/// @file
/// The BLAS family's entry points: one function per request (accel/libs/blas/*.hpp), each sent to `device` and
/// answered by its future, as Device::ask would; for contiguous vectors, level 1 also takes typed buffers and reads
/// the element type and length from them.
///
/// @code
///   accel::Buffer<double> x = ..., y = ..., sum = *device.allocate<double>(1).wait();
///   accel::blas::axpy(device, 2.0, x, y);           // y = 2 x + y
///   accel::blas::dot(device, x, y, sum).wait();     // sum = xᵀ y, on the device
///   double value = *accel::blas::dot(device, x, y).wait();  // xᵀ y as a host value (dot, nrm2, asum, iamax)
///   accel::blas::gemv(device, {.dtype = accel::DType::f64, .m = m, .n = n, .a = a, .x = x, .y = y});  // y = A x
/// @endcode
///
/// The typed forms take complex vectors too (`std::complex<float>` or `std::complex<double>`: a complex alpha; dot
/// is xᵀ y, dotc xᴴ y; nrm2 and asum answer the real part's type), and 16-bit floats (`Half`, `BFloat16`: a float
/// alpha; computed in f32, each result rounded once to the element type, as accel/libs/blas/level1.hpp says).
///
/// A request is checked whole before anything runs; a bad one answers its future with an error naming what was
/// wrong. Typed vectors must hold equally many elements where a request takes two (else `invalid_argument`).
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <span>

#include "accel/device/device.hpp"
#include "accel/libs/blas/requests.hpp"

namespace accel::blas {

/// Real element types: f32 and f64, as BLAS.
template <class T>
concept Real = std::same_as<T, float> || std::same_as<T, double>;
/// Complex element types: c64 and c128.
template <class T>
concept Complex = std::same_as<T, std::complex<float>> || std::same_as<T, std::complex<double>>;
/// 16-bit float element types: f16 and bf16, which level 1 computes on in f32.
template <class T>
concept Narrow = std::same_as<T, Half> || std::same_as<T, BFloat16>;
/// Element types the typed level-1 overloads take: f32, f64, c64 and c128, as BLAS, and f16 and bf16.
template <class T>
concept Element = Real<T> || Complex<T> || Narrow<T>;

namespace detail {
/// A norm's or sum's type: T itself when real or 16-bit, the part's type when complex.
template <class T>
struct Magnitude {
  using type = decltype(std::abs(T{}));
};
template <Narrow T>
struct Magnitude<T> {
  using type = T;
};
}  // namespace detail

/// The type of a norm or sum of T's: T itself when real or 16-bit, the part's type when complex.
template <Element T>
using magnitude_t = typename detail::Magnitude<T>::type;

/// C = alpha op(A) op(B) + beta C (+ bias, activation): see Gemm (the same as Device::gemm).
inline Future<Done> gemm(const Device& device, Gemm request) { return device.ask(std::move(request)); }
/// y = alpha x + y: see Axpy.
inline Future<Done> axpy(const Device& device, Axpy request) { return device.ask(request); }
/// x = alpha x: see Scal.
inline Future<Done> scal(const Device& device, Scal request) { return device.ask(request); }
/// result = xᵀ y, into a buffer: see Dot.
inline Future<Done> dot(const Device& device, Dot request) { return device.ask(request); }
/// result = ‖x‖₂, into a buffer: see Nrm2.
inline Future<Done> nrm2(const Device& device, Nrm2 request) { return device.ask(request); }
/// result = Σ |x_i|, into a buffer: see Asum.
inline Future<Done> asum(const Device& device, Asum request) { return device.ask(request); }
/// result = the 1-based index of the largest |x_i|, into an i32 buffer: see Iamax.
inline Future<Done> iamax(const Device& device, Iamax request) { return device.ask(request); }
/// y = x: see Copy.
inline Future<Done> copy(const Device& device, Copy request) { return device.ask(request); }
/// Exchanges x and y: see Swap.
inline Future<Done> swap(const Device& device, Swap request) { return device.ask(request); }
/// Applies a plane rotation to the pairs (x_i, y_i): see Rot.
inline Future<Done> rot(const Device& device, Rot request) { return device.ask(request); }
/// result = the 1-based index of the smallest |x_i|, into an i32 buffer: see Iamin.
inline Future<Done> iamin(const Device& device, Iamin request) { return device.ask(request); }
/// y = alpha op(A) x + beta y, optionally strided-batched: see Gemv.
inline Future<Done> gemv(const Device& device, Gemv request) { return device.ask(request); }
/// A = alpha x yᵀ + A, optionally strided-batched: see Ger.
inline Future<Done> ger(const Device& device, Ger request) { return device.ask(request); }
/// Solves op(A) x = b for x (A triangular), in x, optionally strided-batched: see Trsv.
inline Future<Done> trsv(const Device& device, Trsv request) { return device.ask(request); }
/// y = alpha A x + beta y with A symmetric, optionally strided-batched: see Symv.
inline Future<Done> symv(const Device& device, Symv request) { return device.ask(request); }
/// Solves op(A) X = alpha B or X op(A) = alpha B for X (A triangular), in B: see Trsm.
inline Future<Done> trsm(const Device& device, Trsm request) { return device.ask(request); }
/// C = alpha op(A) op(A)ᵀ + beta C on one triangle of C: see Syrk.
inline Future<Done> syrk(const Device& device, Syrk request) { return device.ask(request); }
/// C = alpha A B + beta C or alpha B A + beta C with A symmetric: see Symm.
inline Future<Done> symm(const Device& device, Symm request) { return device.ask(request); }
/// B = alpha op(A) B or alpha B op(A) with A triangular, in place: see Trmm.
inline Future<Done> trmm(const Device& device, Trmm request) { return device.ask(request); }
/// C = alpha op(A) + beta op(B): see Geam.
inline Future<Done> geam(const Device& device, Geam request) { return device.ask(request); }

namespace detail {
/// The length two typed vectors share, or an error naming the routine when they differ.
template <class T>
[[nodiscard]] Result<std::int64_t> common_length(const char* routine, const Buffer<T>& x, const Buffer<T>& y) {
  if (x.size() != y.size())
    return invalid_argument(std::string(routine) + ": x holds " + std::to_string(x.size()) + " elements and y " +
                            std::to_string(y.size()) + "; the typed form takes vectors of one length");
  return static_cast<std::int64_t>(x.size());
}

/// Allocates a one-element result buffer, sends `make_request(result)` and, right behind it, a download of the
/// element into host memory the returned future owns: on a CUDA device the download goes through a pinned staging
/// block copied out when it completes, so neither the device actor nor the caller blocks. The future answers the
/// request's failure if it failed, else the download's, else the value; the buffer is freed after both.
template <class Value, class MakeRequest>
Future<Value> host_value(const Device& device, MakeRequest make_request) {
  return device.allocate<Value>(1).then([device, make_request](Buffer<Value> result) -> Future<Value> {
    auto value = std::make_shared<Value>();
    auto computed = std::make_shared<Future<Done>>(device.ask(make_request(result)));
    const HostDestination into = HostDestination::of(std::span<Value>(value.get(), 1));
    return device.ask(CopyToHost{.source = result, .destination = into})
        .then([computed, value, result](Result<Done> copied) -> Future<Value> {
          return std::move(*computed).then([copied, value, result](Result<Done> ran) -> Result<Value> {
            if (!ran.ok()) return ran.status();
            if (!copied.ok()) return copied.status();
            return *value;
          });
        });
  });
}
}  // namespace detail

/// y = alpha x + y over every element of x and y (contiguous, equally long).
template <Element T>
requires(!Narrow<T>) Future<Done> axpy(const Device& device, T alpha, const Buffer<T>& x, const Buffer<T>& y) {
  Result<std::int64_t> n = detail::common_length("blas::axpy", x, y);
  if (!n.ok()) return make_ready_future<Done>(n.status());
  const std::complex<double> scale(alpha);
  return axpy(device,
              {.dtype = dtype_of<T>(), .n = *n, .alpha = scale.real(), .alpha_imag = scale.imag(), .x = x, .y = y});
}
/// y = alpha x + y over every element of 16-bit x and y (contiguous, equally long), computed in f32.
template <Narrow T>
Future<Done> axpy(const Device& device, float alpha, const Buffer<T>& x, const Buffer<T>& y) {
  Result<std::int64_t> n = detail::common_length("blas::axpy", x, y);
  if (!n.ok()) return make_ready_future<Done>(n.status());
  return axpy(device, {.dtype = dtype_of<T>(), .n = *n, .alpha = alpha, .x = x, .y = y});
}
/// x = alpha x over every element of x.
template <Element T>
requires(!Narrow<T>) Future<Done> scal(const Device& device, T alpha, const Buffer<T>& x) {
  const std::complex<double> scale(alpha);
  return scal(device, {.dtype = dtype_of<T>(),
                       .n = static_cast<std::int64_t>(x.size()),
                       .alpha = scale.real(),
                       .alpha_imag = scale.imag(),
                       .x = x});
}
/// x = alpha x over every element of 16-bit x, computed in f32.
template <Narrow T>
Future<Done> scal(const Device& device, float alpha, const Buffer<T>& x) {
  return scal(device, {.dtype = dtype_of<T>(), .n = static_cast<std::int64_t>(x.size()), .alpha = alpha, .x = x});
}
/// result[0] = xᵀ y over every element of x and y (contiguous, equally long); unconjugated for complex x (dotc
/// conjugates).
template <Element T>
Future<Done> dot(const Device& device, const Buffer<T>& x, const Buffer<T>& y, const Buffer<T>& result) {
  Result<std::int64_t> n = detail::common_length("blas::dot", x, y);
  if (!n.ok()) return make_ready_future<Done>(n.status());
  return dot(device, {.dtype = dtype_of<T>(), .n = *n, .x = x, .y = y, .result = result});
}
/// result[0] = xᴴ y over every element of complex x and y (contiguous, equally long).
template <Complex T>
Future<Done> dotc(const Device& device, const Buffer<T>& x, const Buffer<T>& y, const Buffer<T>& result) {
  Result<std::int64_t> n = detail::common_length("blas::dotc", x, y);
  if (!n.ok()) return make_ready_future<Done>(n.status());
  return dot(device, {.dtype = dtype_of<T>(), .n = *n, .conjugate = true, .x = x, .y = y, .result = result});
}
/// result[0] = ‖x‖₂ over every element of x.
template <Element T>
Future<Done> nrm2(const Device& device, const Buffer<T>& x, const Buffer<magnitude_t<T>>& result) {
  return nrm2(device, {.dtype = dtype_of<T>(), .n = static_cast<std::int64_t>(x.size()), .x = x, .result = result});
}
/// result[0] = Σ |x_i| (Σ |Re x_i| + |Im x_i| for complex x) over every element of x.
template <Element T>
Future<Done> asum(const Device& device, const Buffer<T>& x, const Buffer<magnitude_t<T>>& result) {
  return asum(device, {.dtype = dtype_of<T>(), .n = static_cast<std::int64_t>(x.size()), .x = x, .result = result});
}
/// result[0] = the 1-based index of the first largest |x_i| (|Re x_i| + |Im x_i| for complex x) over every element
/// of x (0 when x is empty).
template <Element T>
Future<Done> iamax(const Device& device, const Buffer<T>& x, const Buffer<std::int32_t>& result) {
  return iamax(device, {.dtype = dtype_of<T>(), .n = static_cast<std::int64_t>(x.size()), .x = x, .result = result});
}

/// xᵀ y over every element of x and y (contiguous, equally long), as a host value (detail::host_value: a result
/// buffer of its own, computed in device pointer mode and downloaded behind the request; nothing blocks).
template <Element T>
Future<T> dot(const Device& device, const Buffer<T>& x, const Buffer<T>& y) {
  Result<std::int64_t> n = detail::common_length("blas::dot", x, y);
  if (!n.ok()) return make_ready_future<T>(n.status());
  return detail::host_value<T>(device, [x, y, n = *n](const Buffer<T>& result) {
    return Dot{.dtype = dtype_of<T>(), .n = n, .x = x, .y = y, .result = result};
  });
}
/// xᴴ y over every element of complex x and y (contiguous, equally long), as a host value (as dot's).
template <Complex T>
Future<T> dotc(const Device& device, const Buffer<T>& x, const Buffer<T>& y) {
  Result<std::int64_t> n = detail::common_length("blas::dotc", x, y);
  if (!n.ok()) return make_ready_future<T>(n.status());
  return detail::host_value<T>(device, [x, y, n = *n](const Buffer<T>& result) {
    return Dot{.dtype = dtype_of<T>(), .n = n, .conjugate = true, .x = x, .y = y, .result = result};
  });
}
/// ‖x‖₂ over every element of x, as a host value (as dot's).
template <Element T>
Future<magnitude_t<T>> nrm2(const Device& device, const Buffer<T>& x) {
  return detail::host_value<magnitude_t<T>>(device, [x](const Buffer<magnitude_t<T>>& result) {
    return Nrm2{.dtype = dtype_of<T>(), .n = static_cast<std::int64_t>(x.size()), .x = x, .result = result};
  });
}
/// Σ |x_i| (Σ |Re x_i| + |Im x_i| for complex x) over every element of x, as a host value (as dot's).
template <Element T>
Future<magnitude_t<T>> asum(const Device& device, const Buffer<T>& x) {
  return detail::host_value<magnitude_t<T>>(device, [x](const Buffer<magnitude_t<T>>& result) {
    return Asum{.dtype = dtype_of<T>(), .n = static_cast<std::int64_t>(x.size()), .x = x, .result = result};
  });
}
/// The 1-based index of the first largest |x_i| (|Re x_i| + |Im x_i| for complex x) over every element of x (0 when x
/// is empty), as a host value (as dot's).
template <Element T>
Future<std::int32_t> iamax(const Device& device, const Buffer<T>& x) {
  return detail::host_value<std::int32_t>(device, [x](const Buffer<std::int32_t>& result) {
    return Iamax{.dtype = dtype_of<T>(), .n = static_cast<std::int64_t>(x.size()), .x = x, .result = result};
  });
}

}  // namespace accel::blas
