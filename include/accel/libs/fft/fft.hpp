/// @file
/// FFT requests: batched 1-D, 2-D and 3-D discrete Fourier transforms, complex-to-complex (forward or inverse),
/// real-to-complex and complex-to-real, in f32 (buffers of f32 and c64), f64 (f64 and c128) or f16 (f16 and c32).
///
/// The same request runs on every device (FFTW on the CPU, cuFFT on CUDA):
///
/// @code
///   accel::Fft fft{.shape = {.type = accel::FftType::c2c, .rank = 2, .n = {64, 48}, .batch = 8},
///                  .input = in, .output = out};     // in and out: c64 buffers of 8 * 64 * 48 elements
///   accel::Status s = device.ask(fft).wait().status();
/// @endcode
///
/// Sizes are logical (n[0] the slowest dimension, row-major); the complex side of r2c and c2r holds n/2 + 1
/// elements in its last dimension (n[rank - 1] / 2 + 1, rounded down: an odd n = 2m + 1 and an even n = 2m both
/// have m + 1). For c2r, n is the real output's length, which the complex input alone cannot tell.
///
/// Layouts are cuFFT's and FFTW's "advanced" ones: element (b, x0, .., x_{r-1}) of a side lies at
///   b * distance + stride * (x_{r-1} + embed[r-1] * (x_{r-2} + embed[r-2] * x_{r-3}))
/// counted in that side's elements (real ones on the real side of r2c/c2r, complex ones elsewhere) from the
/// buffer's first element. Fields left zero take the contiguous layout's values: embed = the logical sizes,
/// stride 1, distance = stride * the product of embed. The buffer must reach the highest index the layout names.
///
/// In place (input and output are the same buffer):
///  - c2c: both sides have one layout; a side left zero takes the other's.
///  - r2c/c2r: the real rows must be padded so that each lies in the memory of its complex row: the real side
///    is the complex side's layout with embed[rank-1] doubled (2 * (n/2 + 1) real elements: one of padding for
///    an odd n, two for an even one), stride 1 and the distance doubled. Left zero, the real side is exactly
///    that; given, it must be. The buffer may hold the real or the complex element type.
///
/// c2r destroys its input (FFTW and cuFFT both use it as scratch): its contents are unspecified afterwards.
/// Scaling: FFTW and cuFFT compute the raw sums (FftNormalization::none); the others are applied by the request on
/// every device, after the transform, to the elements the output layout names.
///
/// Half precision (precision f16: the real side holds f16, the complex side c32) takes only what cuFFT's half
/// transforms take: sizes that are powers of two in every dimension and, for r2c and c2r, stride 1 on the real
/// side. Anything else is refused (not_supported) on every device, so that a request the CPU device runs runs on a
/// GPU too. CUDA runs cuFFT's half transforms (execution type CUDA_C_16F, compute capability 5.3 or later; older
/// GPUs refuse it before any launch). cuFFT's documentation names the execution type as the precision the
/// transform is computed in and promises no wider accumulation, so expect errors of a few f16 units (2^-11)
/// times log2 N relative to the signal's norm. Mind f16's range too: cuFFT stores the raw sums (up to N times the
/// input) in f16 before the normalisation runs, so they overflow past 65504 even where the normalised result would
/// fit. The CPU device has no half FFT: it widens the input to f32, runs FFTW's f32 transform, scales in f32 and
/// rounds the output to f16 once, so its result is the f32 one rounded to f16, more accurate than cuFFT's (and
/// normalised before it is narrowed).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/result.hpp"

namespace accel {

/// Complex-to-complex, real-to-complex (always forward) or complex-to-real (always inverse).
enum class FftType : std::uint8_t { c2c, r2c, c2r };
/// forward: exp(-2πi jk/n) (FFTW's FFTW_FORWARD, cuFFT's CUFFT_FORWARD); inverse: exp(+2πi jk/n). r2c is always
/// forward and c2r always inverse: a request that says otherwise is refused.
enum class FftDirection : std::uint8_t { forward, inverse };
/// none: the raw sums, as FFTW and cuFFT compute them (forward then inverse multiplies by N);
/// inverse: the inverse transforms (c2c inverse, c2r) are scaled by 1/N, so forward then inverse returns the input;
/// orthonormal: every transform is scaled by 1/sqrt(N) (unitary). N is the product of the logical sizes.
enum class FftNormalization : std::uint8_t { none, inverse, orthonormal };

/// The enumerator's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(FftType type) noexcept;
/// The enumerator's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(FftDirection direction) noexcept;
/// The enumerator's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(FftNormalization normalization) noexcept;

/// How one side of the transform is stored; entries beyond the rank stay 0.
struct FftLayout {
  std::array<std::int64_t, 3> embed{};  ///< storage sizes, slowest first (each at least the logical size)
  std::int64_t stride = 0;              ///< between consecutive elements of the last dimension
  std::int64_t distance = 0;            ///< between consecutive transforms of the batch

  /// Equal when every field is.
  friend bool operator==(const FftLayout&, const FftLayout&) noexcept = default;
};

/// What keys an FFT's plan: type, precision, sizes, batch, direction, normalisation and both layouts.
struct FftShape {
  FftType type = FftType::c2c;  ///< c2c, r2c or c2r
  /// The real element type: f32, f64 or f16 (half precision: power-of-two sizes only, see above).
  DType precision = DType::f32;
  std::int32_t rank = 1;                           ///< dimensions transformed: 1, 2 or 3
  std::array<std::int64_t, 3> n{};                 ///< logical sizes; entries beyond the rank stay 0
  std::int64_t batch = 1;                          ///< transforms in the batch
  FftDirection direction = FftDirection::forward;  ///< forward or inverse (r2c is always forward, c2r always inverse)
  FftNormalization normalization = FftNormalization::none;  ///< which scaling the request applies after the transform
  FftLayout input;                                          ///< the input side's layout; zeros: contiguous
  FftLayout output;                                         ///< the output side's layout; zeros: contiguous

  /// Equal when every field is.
  friend bool operator==(const FftShape&, const FftShape&) noexcept = default;
};

/// A batched FFT of `input` into `output` (see the file's description).
struct Fft {
  static constexpr const char* kName = "Fft";
  using Response = Done;

  FftShape shape;       ///< the transform
  BufferHandle input;   ///< read (c2r: destroyed)
  BufferHandle output;  ///< the same buffer as input: in place
};

/// A shape with every default resolved and every extent checked, for one placement (in place or not).
struct FftGeometry {
  FftShape shape;                   ///< layouts resolved
  bool in_place = false;            ///< whether input and output are the same buffer
  DType real_type = DType::f32;     ///< f32, f64 or f16
  DType complex_type = DType::c64;  ///< c64, c128 or c32
  DType input_type = DType::c64;    ///< what the input layout counts in
  DType output_type = DType::c64;   ///< what the output layout counts in
  /// Logical sizes of each stored side (n/2 + 1 last on the complex side of r2c/c2r), 1 beyond the rank.
  std::array<std::int64_t, 3> input_sizes{};
  std::array<std::int64_t, 3> output_sizes{};    ///< logical sizes of the output side, 1 beyond the rank
  std::array<std::int64_t, 3> input_strides{};   ///< elements between neighbours of each dimension
  std::array<std::int64_t, 3> output_strides{};  ///< elements between neighbours of each dimension of the output
  std::uint64_t input_extent = 0;                ///< elements of input_type from the buffer's start the layout reaches
  std::uint64_t output_extent = 0;               ///< elements of output_type from the buffer's start the layout reaches
  std::uint64_t transform_size = 0;              ///< N, the product of the logical sizes

  /// Whether this is an inverse transform (c2c inverse, or c2r: validation makes the direction agree with the type).
  [[nodiscard]] bool inverse() const noexcept { return shape.direction == FftDirection::inverse; }
  /// The factor the normalisation multiplies the output by (1 for none).
  [[nodiscard]] double scale() const noexcept;
};

/// Checks a shape without any buffers: rank, sizes, precision, direction, layouts (padding of in-place real sides,
/// overlapping elements), overflow of every extent.
[[nodiscard]] Result<FftGeometry> plan_fft_geometry(const FftShape& shape, bool in_place);

/// The shape as text, for messages and plan descriptions.
[[nodiscard]] std::string to_string(const FftShape& shape);

}  // namespace accel
