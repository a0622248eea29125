#include "serve/histogram.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace accel::serve {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds_.size() + 1)) {}

std::vector<double> Histogram::exponential(double start, double factor, int count) {
  std::vector<double> bounds;
  for (double bound = start; count-- > 0; bound *= factor) bounds.push_back(bound);
  return bounds;
}

void Histogram::observe(double value) noexcept {
  // Prometheus buckets are `le`: a value equal to a bound falls in that bound's bucket.
  const auto bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  buckets_[static_cast<std::size_t>(bucket)].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

void Histogram::write(std::string& out, std::string_view name, std::string_view labels) const {
  const std::string_view comma = labels.empty() ? "" : ",";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    const std::string le = i < bounds_.size() ? fmt::format("{}", bounds_[i]) : "+Inf";
    fmt::format_to(std::back_inserter(out), "{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, comma, le, cumulative);
  }
  // The count is the +Inf bucket's, not count_: a scrape racing an observe() must stay self-consistent.
  const std::string braced = labels.empty() ? std::string() : fmt::format("{{{}}}", labels);
  fmt::format_to(std::back_inserter(out), "{}_sum{} {}\n{}_count{} {}\n", name, braced,
                 sum_.load(std::memory_order_relaxed), name, braced, cumulative);
}

}  // namespace accel::serve
