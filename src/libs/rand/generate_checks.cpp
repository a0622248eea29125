#include "libs/rand/generate_checks.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace accel::rand {
namespace {

constexpr std::uint8_t kGenerators = static_cast<std::uint8_t>(Generator::sobol32) + 1;
constexpr std::uint8_t kDistributions = static_cast<std::uint8_t>(Distribution::bits) + 1;

// What the distribution makes in `dtype`; invalid_argument naming what it makes otherwise.
Result<OutputKind> output_kind(Distribution distribution, DType dtype) {
  const bool f32 = dtype == DType::f32, f64 = dtype == DType::f64;
  switch (distribution) {
    case Distribution::uniform:
      if (f32 || f64) return f32 ? OutputKind::uniform_f32 : OutputKind::uniform_f64;
      break;
    case Distribution::normal:
      if (f32 || f64) return f32 ? OutputKind::normal_f32 : OutputKind::normal_f64;
      break;
    case Distribution::log_normal:
      if (f32 || f64) return f32 ? OutputKind::log_normal_f32 : OutputKind::log_normal_f64;
      break;
    case Distribution::poisson:
      if (dtype == DType::u32) return OutputKind::poisson;
      return invalid_argument(fmt::format("rand::Generate: poisson makes u32 counts, not {}", to_string(dtype)));
    case Distribution::bits:
      if (dtype == DType::u32) return OutputKind::bits;
      return invalid_argument(fmt::format("rand::Generate: bits makes u32 words, not {}", to_string(dtype)));
  }
  return invalid_argument(
      fmt::format("rand::Generate: {} makes f32 or f64, not {}", to_string(distribution), to_string(dtype)));
}

Status check_parameters(const Generate& request) {
  switch (request.distribution) {
    case Distribution::normal:
    case Distribution::log_normal:
      if (!std::isfinite(request.mean))
        return invalid_argument(fmt::format("rand::Generate: mean must be finite, got {}", request.mean));
      if (!(request.stddev > 0) || !std::isfinite(request.stddev))
        return invalid_argument(fmt::format("rand::Generate: stddev must be finite and > 0, got {}", request.stddev));
      return Status();
    case Distribution::poisson:
      if (!(request.lambda > 0) || !(request.lambda <= kMaxLambda))
        return invalid_argument(
            fmt::format("rand::Generate: lambda must be > 0 and at most {}, got {}", kMaxLambda, request.lambda));
      return Status();
    case Distribution::uniform:
    case Distribution::bits: return Status();
  }
  return Status();
}

}  // namespace

std::string_view to_string(Generator generator) noexcept {
  switch (generator) {
    case Generator::philox4x32_10: return "philox4x32_10";
    case Generator::xorwow: return "xorwow";
    case Generator::mrg32k3a: return "mrg32k3a";
    case Generator::sobol32: return "sobol32";
  }
  return "unknown generator";
}

std::string_view to_string(Distribution distribution) noexcept {
  switch (distribution) {
    case Distribution::uniform: return "uniform";
    case Distribution::normal: return "normal";
    case Distribution::log_normal: return "log_normal";
    case Distribution::poisson: return "poisson";
    case Distribution::bits: return "bits";
  }
  return "unknown distribution";
}

Result<CheckedGenerate> check_generate(const Generate& request) {
  if (static_cast<std::uint8_t>(request.generator) >= kGenerators)
    return invalid_argument(
        fmt::format("rand::Generate: generator {} is not one of philox4x32_10, xorwow, mrg32k3a, "
                    "sobol32",
                    static_cast<int>(request.generator)));
  if (static_cast<std::uint8_t>(request.distribution) >= kDistributions)
    return invalid_argument(
        fmt::format("rand::Generate: distribution {} is not one of uniform, normal, log_normal, "
                    "poisson, bits",
                    static_cast<int>(request.distribution)));
  if (!is_dtype(static_cast<std::uint8_t>(request.dtype)))
    return invalid_argument(
        fmt::format("rand::Generate: dtype {} is not an element type", static_cast<int>(request.dtype)));
  ACCEL_ASSIGN_OR_RETURN(const OutputKind kind, output_kind(request.distribution, request.dtype));
  ACCEL_RETURN_IF_ERROR(check_parameters(request));

  const std::string_view generator = to_string(request.generator);
  if (request.generator == Generator::sobol32 && request.seed != 0)
    return invalid_argument(
        fmt::format("rand::Generate: sobol32 is quasi-random and takes no seed (got seed {})", request.seed));
  const bool box_muller_pairs =
      request.distribution == Distribution::normal || request.distribution == Distribution::log_normal;
  if (box_muller_pairs && request.count % 2 != 0 &&
      (request.generator == Generator::xorwow || request.generator == Generator::mrg32k3a))
    return invalid_argument(
        fmt::format("rand::Generate: {} makes {} numbers in Box-Muller pairs, so count must be even (got {})",
                    generator, to_string(request.distribution), request.count));
  if (request.offset > std::numeric_limits<std::uint64_t>::max() - request.count)
    return invalid_argument(
        fmt::format("rand::Generate: offset {} + count {} overflows 64 bits", request.offset, request.count));
  if (request.generator == Generator::philox4x32_10 && request.offset + request.count > kPhiloxStreamElements)
    return invalid_argument(
        fmt::format("rand::Generate: philox4x32_10 streams hold 2^62 elements; offset {} + count "
                    "{} goes past them",
                    request.offset, request.count));
  return CheckedGenerate{.generator = request.generator, .kind = kind, .dtype = request.dtype, .count = request.count};
}

PhiloxArgs philox_args(const Generate& request, const CheckedGenerate& checked, void* output) noexcept {
  return {.output = output,
          .count = checked.count,
          .seed = request.seed,
          .offset = request.offset,
          .kind = checked.kind,
          .mean = request.mean,
          .stddev = request.stddev,
          .lambda = request.lambda};
}

}  // namespace accel::rand
