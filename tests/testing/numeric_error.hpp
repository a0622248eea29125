// The error measures every numeric test uses. Each is infinite when a value it compares is not finite where its
// reference is, so a NaN or an infinity in an output fails every `error < tolerance` check (std::max and `>`
// comparisons ignore NaN; these never do).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

namespace accel::testing {

// Whether `out` is finite wherever `ref` is (a reference that is itself infinite or NaN asks for the same).
template <class Out, class Ref>
[[nodiscard]] bool finite_where_reference_is(Out out, Ref ref) {
  const double o = static_cast<double>(out), r = static_cast<double>(ref);
  if (std::isfinite(r)) return std::isfinite(o);
  if (std::isnan(r)) return std::isnan(o);
  return o == r;  // the same infinity
}

// max |out − ref|; infinity if `out` is not finite where `ref` is, or the sizes differ.
template <class Out, class Ref>
[[nodiscard]] double max_abs_error(std::span<const Out> out, std::span<const Ref> ref) {
  if (out.size() != ref.size()) return INFINITY;
  double worst = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!finite_where_reference_is(out[i], ref[i])) return INFINITY;
    if (!std::isfinite(static_cast<double>(ref[i]))) continue;
    worst = std::max(worst, std::abs(static_cast<double>(out[i]) - static_cast<double>(ref[i])));
  }
  return worst;
}
template <class Out, class Ref>
[[nodiscard]] double max_abs_error(const std::vector<Out>& out, const std::vector<Ref>& ref) {
  return max_abs_error(std::span<const Out>(out), std::span<const Ref>(ref));
}

// max |out − ref| / scale, element by element (scale: what each element's rounding error is relative to, such as
// Σ|a·b| of a dot product); infinity as max_abs_error.
[[nodiscard]] inline double max_scaled_error(const std::vector<double>& out, const std::vector<double>& ref,
                                             const std::vector<double>& scale) {
  if (out.size() != ref.size() || scale.size() != ref.size()) return INFINITY;
  double worst = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(out[i]) || !std::isfinite(ref[i])) return INFINITY;
    worst = std::max(worst, std::abs(out[i] - ref[i]) / std::max(scale[i], 1e-30));
  }
  return worst;
}

// ‖out − ref‖ / ‖scale‖ over the elements of `ref`; infinity if `out` is not finite where `ref` is, or the sizes
// differ.
[[nodiscard]] inline double error_relative_to(const std::vector<double>& out, const std::vector<double>& ref,
                                              const std::vector<double>& scale) {
  if (out.size() != ref.size() || scale.size() != ref.size()) return INFINITY;
  double difference = 0, norm = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(out[i]) || !std::isfinite(ref[i])) return INFINITY;
    difference += (out[i] - ref[i]) * (out[i] - ref[i]);
    norm += scale[i] * scale[i];
  }
  return std::sqrt(difference) / std::max(std::sqrt(norm), 1e-30);
}

// ‖out − ref‖ / ‖ref‖ over the elements of `ref`; infinity as error_relative_to.
[[nodiscard]] inline double relative_error(const std::vector<double>& out, const std::vector<double>& ref) {
  return error_relative_to(out, ref, ref);
}

// Whether |difference| ≤ bound, false for a NaN difference or bound (unlike `difference > bound`, which lets NaN
// through as "not greater").
[[nodiscard]] inline bool within(double difference, double bound) { return std::abs(difference) <= bound; }

}  // namespace accel::testing
