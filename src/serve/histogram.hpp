// accel::serve::Histogram — a Prometheus histogram: fixed upper bounds, counts updated lock-free by the request
// threads, written out in the text exposition format.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace accel::serve {

class Histogram {
 public:
  // `bounds` ascending; the +Inf bucket is implied.
  explicit Histogram(std::vector<double> bounds);

  // Bounds start, start * factor, ... (count of them): latencies and sizes span orders of magnitude.
  static std::vector<double> exponential(double start, double factor, int count);

  void observe(double value) noexcept;

  // `name`_bucket{labels,le="..."} (cumulative), `name`_sum and `name`_count lines; `labels` is empty or
  // `key="value",...` without braces.
  void write(std::string& out, std::string_view name, std::string_view labels) const;

  [[nodiscard]] std::uint64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // per bucket, not cumulative; the last is +Inf
  std::atomic<std::uint64_t> count_{0};
  std::atomic<double> sum_{0.0};
};

}  // namespace accel::serve
