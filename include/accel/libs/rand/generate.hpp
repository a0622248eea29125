/// @file
/// Random numbers into a device buffer: one request, rand::Generate, on every device.
///
/// @code
///   accel::rand::Generate generate{
///       .distribution = accel::rand::Distribution::normal,   // Philox4x32-10 unless told otherwise
///       .dtype = accel::DType::f32,
///       .seed = 42, .offset = 0, .count = n,
///       .mean = 0.0, .stddev = 1.0,
///       .output = buffer};                                    // at least n elements of dtype
///   accel::Status s = device.ask(generate).wait().status();
/// @endcode
///
/// Philox4x32-10 (the default) runs through cuRAND's device API on CUDA and through our own implementation of the
/// same arithmetic on the CPU, so the CPU device reproduces a GPU run: u32 bits and uniform numbers bit for bit,
/// normal and log-normal within a few ulp of the pair's radius (the GPU's sine and cosine are the hardware's
/// approximations). Its stream, per seed, is (see src/libs/rand/philox_layout.hpp):
///   - bits, uniform f32, normal f32 and log-normal f32: element e is made from word e of the stream, where word w
///     is word w % 4 of the Philox block at counter w / 4 (subsequence 0); normals come in pairs (e even, e + 1)
///     from words e and e + 1 (curand_normal4's Box-Muller);
///   - uniform, normal and log-normal f64: element e is made from block e / 2, its words 2(e % 2) and 2(e % 2) + 1
///     for uniform, and all four for the pair of normals (e even, e + 1);
///   - Poisson: element e is curand_poisson of a state at subsequence e.
/// `offset` is the first element of that stream the request writes, so offset = k continues, element for element,
/// a run that stopped at k. Offsets up to 2^62 elements.
///
/// XORWOW, MRG32k3a and Sobol32 are cuRAND's host API on CUDA, and cuRAND's host-side generators on the CPU device
/// where accel was built with the CUDA toolkit (else not_supported). Their `offset` is cuRAND's generator offset
/// (curandSetGeneratorOffset): it resumes a run element for element where cuRAND's layout gives one element per
/// 32-bit output (bits, uniform f32, Poisson; every distribution of Sobol32), and otherwise only names a
/// reproducible stream. cuRAND's Box-Muller of XORWOW and MRG32k3a needs an even count.
///
/// Uniform numbers lie in (0, 1], as cuRAND's. Log-normal numbers are exp(mean + stddev * normal).
#pragma once

#include <cstdint>
#include <string_view>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/dtype.hpp"
#include "accel/core/result.hpp"

namespace accel::rand {

/// cuRAND's generators: Philox4x32-10 (the default, reproduced bit for bit on the CPU), XORWOW, MRG32k3a, Sobol32.
enum class Generator : std::uint8_t { philox4x32_10, xorwow, mrg32k3a, sobol32 };

/// `bits`: the generator's raw 32-bit outputs (u32). Poisson counts are u32; the others are f32 or f64.
enum class Distribution : std::uint8_t { uniform, normal, log_normal, poisson, bits };

/// The enumerator's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(Generator generator) noexcept;
/// The enumerator's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(Distribution distribution) noexcept;

/// Fills output[0, count) with random numbers (see the file's description).
struct Generate {
  static constexpr const char* kName = "rand::Generate";
  using Response = Done;

  Generator generator = Generator::philox4x32_10;     ///< which generator makes the stream
  Distribution distribution = Distribution::uniform;  ///< the distribution of the values
  DType dtype = DType::f32;                           ///< the element type written
  std::uint64_t seed = 0;                             ///< none for Sobol32, a quasi-random generator: it must stay 0
  std::uint64_t offset = 0;                           ///< the first element of the stream written (see above)
  std::uint64_t count = 0;                            ///< elements written, to output[0, count)
  double mean = 0.0;                                  ///< normal; log-normal: of the underlying normal
  double stddev = 1.0;                                ///< normal and log-normal, > 0
  double lambda = 1.0;                                ///< Poisson, > 0 and at most kMaxLambda
  BufferHandle output;                                ///< the buffer written, of dtype
};

/// Above this, a Poisson count would not fit in u32.
inline constexpr double kMaxLambda = 1e9;
/// The elements of a Philox stream that `offset + count` may reach.
inline constexpr std::uint64_t kPhiloxStreamElements = std::uint64_t{1} << 62;

}  // namespace accel::rand
