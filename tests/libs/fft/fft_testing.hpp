// What the FFT tests share: host copies of buffers under any layout, a naive DFT in double as the reference, and
// one run of a request on a device from dense logical inputs to dense logical outputs.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <complex>
#include <cstring>
#include <numbers>
#include <random>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/libs/fft/fft.hpp"
#include "testing/status_matchers.hpp"

namespace accel::testing::fft {

using Complex = std::complex<double>;
using Sizes = std::array<std::int64_t, 3>;

inline std::int64_t product(const Sizes& sizes) { return sizes[0] * sizes[1] * sizes[2]; }

// A buffer's contents as scalars of the transform's precision (a complex element is two), whatever element type
// the buffer holds: in place, one side reads it as real and the other as complex. `real` is f32, f64 or f16 (set
// rounds to it).
struct HostScalars {
  DType buffer_type;
  DType real;
  std::vector<std::byte> bytes;

  HostScalars(DType type, std::uint64_t count, DType real_type)
      : buffer_type(type), real(real_type), bytes(count * size_of(type)) {}

  [[nodiscard]] std::uint64_t count() const { return bytes.size() / size_of(buffer_type); }
  [[nodiscard]] std::uint64_t scalars() const { return bytes.size() / size_of(real); }
  [[nodiscard]] double get(std::uint64_t i) const {
    const std::byte* at = bytes.data() + i * size_of(real);
    switch (real) {
      case DType::f64: return load<double>(at);
      case DType::f16: return to_float(load<Half>(at));
      default: return load<float>(at);
    }
  }
  void set(std::uint64_t i, double value) {
    std::byte* at = bytes.data() + i * size_of(real);
    switch (real) {
      case DType::f64: return store(at, value);
      case DType::f16: return store(at, to_half(static_cast<float>(value)));
      default: return store(at, static_cast<float>(value));
    }
  }
  template <class T>
  static T load(const std::byte* at) {
    T value;
    std::memcpy(&value, at, sizeof(T));
    return value;
  }
  template <class T>
  static void store(std::byte* at, T value) {
    std::memcpy(at, &value, sizeof(T));
  }
  [[nodiscard]] HostSource source() const { return {bytes.data(), count(), buffer_type}; }
  [[nodiscard]] HostDestination destination() { return {bytes.data(), count(), buffer_type}; }
};

// Calls f(b, x, dense index) for every element of a batch of `sizes`-shaped arrays, in row-major order.
template <class F>
void for_each_element(const Sizes& sizes, std::int64_t batch, F&& f) {
  std::int64_t dense = 0;
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < sizes[0]; ++i)
      for (std::int64_t j = 0; j < sizes[1]; ++j)
        for (std::int64_t k = 0; k < sizes[2]; ++k) f(b, Sizes{i, j, k}, dense++);
}

// Where element (b, x) of one side lies, in that side's elements.
inline std::int64_t position(const Sizes& strides, std::int64_t distance, std::int64_t b, const Sizes& x) {
  return b * distance + x[0] * strides[0] + x[1] * strides[1] + x[2] * strides[2];
}

// The dense input written into its layout (the rest of `buffer` left as it is).
inline void write_input(const FftGeometry& g, const std::vector<Complex>& dense, HostScalars& buffer) {
  const bool complex = g.input_type == g.complex_type;
  for_each_element(g.input_sizes, g.shape.batch, [&](std::int64_t b, const Sizes& x, std::int64_t i) {
    const std::int64_t at = position(g.input_strides, g.shape.input.distance, b, x);
    if (complex) {
      buffer.set(2 * at, dense[i].real());
      buffer.set(2 * at + 1, dense[i].imag());
    } else {
      buffer.set(at, dense[i].real());
    }
  });
}

// The output read out of its layout, dense.
inline std::vector<Complex> read_output(const FftGeometry& g, const HostScalars& buffer) {
  const bool complex = g.output_type == g.complex_type;
  std::vector<Complex> dense(g.shape.batch * product(g.output_sizes));
  for_each_element(g.output_sizes, g.shape.batch, [&](std::int64_t b, const Sizes& x, std::int64_t i) {
    const std::int64_t at = position(g.output_strides, g.shape.output.distance, b, x);
    dense[i] = complex ? Complex(buffer.get(2 * at), buffer.get(2 * at + 1)) : Complex(buffer.get(at), 0);
  });
  return dense;
}

// Each part rounded to f16 and back: an input that f16 holds exactly, so that an f16 transform and a wider one
// take the same numbers.
inline std::vector<Complex> rounded_to_half(std::vector<Complex> values) {
  auto round = [](double v) { return static_cast<double>(to_float(to_half(static_cast<float>(v)))); };
  for (Complex& v : values) v = Complex(round(v.real()), round(v.imag()));
  return values;
}

// ‖got − want‖ / ‖want‖; infinity if anything is not finite.
inline double relative_error(const std::vector<Complex>& got, const std::vector<Complex>& want) {
  double difference = 0, norm = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (!std::isfinite(got[i].real()) || !std::isfinite(got[i].imag())) return INFINITY;
    difference += std::norm(got[i] - want[i]);
    norm += std::norm(want[i]);
  }
  return std::sqrt(difference / std::max(norm, 1e-300));
}

// The multi-dimensional DFT of one dense array of `n` (1 beyond the rank), axis by axis, in double.
inline std::vector<Complex> naive_dft(std::vector<Complex> x, const Sizes& n, int sign) {
  const Sizes strides{n[1] * n[2], n[2], 1};
  for (int axis = 0; axis < 3; ++axis) {
    const std::int64_t len = n[axis];
    if (len == 1) continue;
    std::vector<Complex> twiddle(len), line(len);
    for (std::int64_t t = 0; t < len; ++t) twiddle[t] = std::polar(1.0, sign * 2 * std::numbers::pi * t / len);
    for (std::int64_t start = 0; start < product(n); ++start) {
      if ((start / strides[axis]) % len != 0) continue;  // one pass per line, from its first element
      for (std::int64_t k = 0; k < len; ++k) {
        Complex sum = 0;
        for (std::int64_t j = 0; j < len; ++j) sum += x[start + j * strides[axis]] * twiddle[(j * k) % len];
        line[k] = sum;
      }
      for (std::int64_t k = 0; k < len; ++k) x[start + k * strides[axis]] = line[k];
    }
  }
  return x;
}

// The factor the request's normalisation asks for, from FftNormalization's definition (fft.hpp), not from the
// family's FftGeometry::scale, which both devices use: N is the product of the logical sizes; c2c inverse and c2r are
// the inverse transforms.
inline double stated_scale(const FftShape& shape) {
  double n = 1;
  for (int d = 0; d < shape.rank; ++d) n *= static_cast<double>(shape.n[d]);
  const bool inverse =
      shape.type == FftType::c2r || (shape.type == FftType::c2c && shape.direction == FftDirection::inverse);
  switch (shape.normalization) {
    case FftNormalization::none: return 1;
    case FftNormalization::inverse: return inverse ? 1 / n : 1;
    case FftNormalization::orthonormal: return 1 / std::sqrt(n);
  }
  ADD_FAILURE() << "a normalisation the test does not know";
  return NAN;
}

// A random problem for `g` and its exact answer: dense input of g.input_sizes, dense expected output of
// g.output_sizes, normalisation applied. A c2r input is the half spectrum of a random real array, so that it is
// Hermitian and the answer is that array times N.
struct Problem {
  std::vector<Complex> input;
  std::vector<Complex> expected;
};

inline Problem make_problem(const FftGeometry& g, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(-1, 1);
  Sizes logical{1, 1, 1};
  for (int d = 0; d < g.shape.rank; ++d) logical[d] = g.shape.n[d];
  const std::int64_t size = product(logical);
  Problem p;
  p.input.resize(g.shape.batch * product(g.input_sizes));
  p.expected.resize(g.shape.batch * product(g.output_sizes));
  const int last = g.shape.rank - 1;
  // Dense index of x in the half-spectrum array (last dimension n/2 + 1), from a full-spectrum index.
  auto in_half = [&](const Sizes& half, const Sizes& x) { return (x[0] * half[1] + x[1]) * half[2] + x[2]; };
  for (std::int64_t b = 0; b < g.shape.batch; ++b) {
    std::vector<Complex> signal(size);
    const bool real = g.shape.type != FftType::c2c;
    for (Complex& v : signal) v = real ? Complex(uniform(rng), 0) : Complex(uniform(rng), uniform(rng));
    const Sizes& half = g.shape.type == FftType::r2c ? g.output_sizes : g.input_sizes;
    if (g.shape.type == FftType::c2r) {
      const std::vector<Complex> spectrum = naive_dft(signal, logical, -1);
      for_each_element(logical, 1, [&](std::int64_t, const Sizes& x, std::int64_t i) {
        if (x[last] < half[last]) p.input[b * product(half) + in_half(half, x)] = spectrum[i];
        p.expected[b * size + i] = signal[i] * static_cast<double>(size) * stated_scale(g.shape);
      });
      continue;
    }
    const bool inverse = g.shape.direction == FftDirection::inverse;  // c2c here: r2c is forward
    const std::vector<Complex> spectrum = naive_dft(signal, logical, inverse ? 1 : -1);
    std::copy(signal.begin(), signal.end(), p.input.begin() + b * size);
    for_each_element(logical, 1, [&](std::int64_t, const Sizes& x, std::int64_t i) {
      if (g.shape.type == FftType::c2c) {
        p.expected[b * size + i] = spectrum[i] * stated_scale(g.shape);
      } else if (x[last] < half[last]) {
        p.expected[b * product(half) + in_half(half, x)] = spectrum[i] * stated_scale(g.shape);
      }
    });
  }
  return p;
}

// What one run on a device gave: the dense output, and whether every scalar of an out-of-place output buffer
// that its layout does not name kept its value.
struct Ran {
  std::vector<Complex> output;
  bool gaps_kept = true;
};

inline BufferHandle upload(Device& device, const HostScalars& host) {
  Result<BufferHandle> handle = device.ask(Allocate{.dtype = host.buffer_type, .count = host.count()}).wait();
  EXPECT_THAT(handle, IsOk());
  if (!handle.ok()) return {};
  EXPECT_THAT(device.ask(CopyToDevice{.source = host.source(), .destination = *handle}).wait(), IsOk());
  return *handle;
}

// Runs `shape` on `device` with the dense `input`, buffers filled around the layouts with random values. In place,
// the one buffer holds the complex element type, or the real one if asked.
inline Result<Ran> run_fft(Device& device, const FftShape& shape, bool in_place, const std::vector<Complex>& input,
                           std::mt19937_64& rng, bool real_in_place_buffer = false) {
  ACCEL_ASSIGN_OR_RETURN(const FftGeometry g, plan_fft_geometry(shape, in_place));
  std::uniform_real_distribution<double> uniform(-1, 1);
  auto random_scalars = [&](DType type, std::uint64_t count) {
    HostScalars host(type, count, g.real_type);
    for (std::uint64_t i = 0; i < host.scalars(); ++i) host.set(i, uniform(rng));
    return host;
  };
  const std::uint64_t in_bytes = g.input_extent * size_of(g.input_type);
  const std::uint64_t out_bytes = g.output_extent * size_of(g.output_type);
  const DType shared_type = real_in_place_buffer ? g.real_type : g.complex_type;
  HostScalars in = in_place ? random_scalars(shared_type, (std::max(in_bytes, out_bytes) + size_of(shared_type) - 1) /
                                                              size_of(shared_type))
                            : random_scalars(g.input_type, g.input_extent);
  write_input(g, input, in);
  const HostScalars out_before = in_place ? in : random_scalars(g.output_type, g.output_extent);
  Fft request{.shape = shape, .input = upload(device, in)};
  request.output = in_place ? request.input : upload(device, out_before);
  Status ran = device.ask(request).wait().status();
  HostScalars out = out_before;
  if (ran.ok())
    ran = device.ask(CopyToHost{.source = request.output, .destination = out.destination()}).wait().status();
  (void)device.free(request.input).wait();
  if (!in_place) (void)device.free(request.output).wait();
  ACCEL_RETURN_IF_ERROR(ran);
  Ran result{.output = read_output(g, out)};
  if (!in_place) {
    std::vector<bool> named(out.scalars());
    const int parts = g.output_type == g.complex_type ? 2 : 1;
    for_each_element(g.output_sizes, g.shape.batch, [&](std::int64_t b, const Sizes& x, std::int64_t) {
      for (int p = 0; p < parts; ++p)
        named[position(g.output_strides, g.shape.output.distance, b, x) * parts + p] = true;
    });
    for (std::uint64_t i = 0; i < out.scalars(); ++i)
      if (!named[i] && out.get(i) != out_before.get(i)) result.gaps_kept = false;
  }
  return result;
}

}  // namespace accel::testing::fft
