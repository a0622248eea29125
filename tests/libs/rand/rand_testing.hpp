// What the random-number tests share: running a Generate on a device into fresh memory, and the statistical checks
// of a sample (mean, variance, and the Kolmogorov-Smirnov statistic against the distribution's CDF).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <numbers>
#include <span>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/libs/rand/generate.hpp"

namespace accel::rand::testing {

// `request` run on `device` into a new buffer of request.count elements of T, read back.
template <class T>
Result<std::vector<T>> generate(const Device& device, Generate request) {
  ACCEL_ASSIGN_OR_RETURN(Buffer<T> buffer, device.allocate<T>(std::max<std::uint64_t>(request.count, 1)).wait());
  request.output = buffer;
  ACCEL_RETURN_IF_ERROR(device.ask(request).wait().status());
  std::vector<T> out(request.count);
  if (out.empty()) return out;
  ACCEL_RETURN_IF_ERROR(device.download(buffer, std::span<T>(out)).wait().status());
  return out;
}

template <class T>
std::vector<double> as_doubles(const std::vector<T>& values) {
  return std::vector<double>(values.begin(), values.end());
}

struct Moments {
  double mean = 0;
  double variance = 0;
};

inline Moments moments(std::span<const double> sample) {
  double sum = 0;
  for (double x : sample) sum += x;
  const double mean = sum / static_cast<double>(sample.size());
  double squares = 0;
  for (double x : sample) squares += (x - mean) * (x - mean);
  return {mean, squares / static_cast<double>(sample.size() - 1)};
}

// sqrt(n) times the largest distance between the sample's empirical CDF and `cdf`.
inline double ks_statistic(std::vector<double> sample, const std::function<double(double)>& cdf) {
  std::sort(sample.begin(), sample.end());
  const double n = static_cast<double>(sample.size());
  double largest = 0;
  for (std::size_t i = 0; i < sample.size(); ++i) {
    const double f = cdf(sample[i]);
    largest = std::max({largest, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  return largest * std::sqrt(n);
}

// The Kolmogorov distribution's quantile at 1 - 1e-3: a correct generator exceeds it once in a thousand seeds,
// and the seeds here are fixed.
inline constexpr double kKsLimit = 1.95;
// Moments are allowed six standard errors.
inline constexpr double kSigmas = 6;

inline double normal_cdf(double x, double mean, double stddev) {
  return 0.5 * std::erfc(-(x - mean) / (stddev * std::numbers::sqrt2));
}

// Uniform on (0, 1]: mean 1/2, variance 1/12, the identity CDF.
inline void expect_uniform(std::span<const double> sample) {
  const double n = static_cast<double>(sample.size());
  const Moments m = moments(sample);
  EXPECT_NEAR(m.mean, 0.5, kSigmas * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(m.variance, 1.0 / 12, kSigmas * std::sqrt((1.0 / 80 - 1.0 / 144) / n));
  EXPECT_TRUE(std::all_of(sample.begin(), sample.end(), [](double x) { return x > 0 && x <= 1; }));
  const double ks = ks_statistic({sample.begin(), sample.end()}, [](double x) { return x; });
  EXPECT_LT(ks, kKsLimit) << "Kolmogorov-Smirnov statistic of a uniform sample of " << sample.size();
  std::cout << "uniform: n " << sample.size() << " mean " << m.mean << " variance " << m.variance << " KS " << ks
            << "\n";
}

inline void expect_normal(std::span<const double> sample, double mean, double stddev) {
  const double n = static_cast<double>(sample.size());
  const Moments m = moments(sample);
  EXPECT_NEAR(m.mean, mean, kSigmas * stddev / std::sqrt(n));
  EXPECT_NEAR(m.variance, stddev * stddev, kSigmas * stddev * stddev * std::sqrt(2 / n));
  const double ks = ks_statistic({sample.begin(), sample.end()}, [&](double x) { return normal_cdf(x, mean, stddev); });
  EXPECT_LT(ks, kKsLimit) << "Kolmogorov-Smirnov statistic of a normal sample of " << sample.size();
  std::cout << "normal(" << mean << ", " << stddev << "): n " << sample.size() << " mean " << m.mean << " variance "
            << m.variance << " KS " << ks << "\n";
}

// Log-normal: its logarithm is normal.
inline void expect_log_normal(std::span<const double> sample, double mean, double stddev) {
  std::vector<double> logs(sample.size());
  for (std::size_t i = 0; i < sample.size(); ++i) {
    ASSERT_GT(sample[i], 0) << "element " << i;
    logs[i] = std::log(sample[i]);
  }
  expect_normal(logs, mean, stddev);
}

// Poisson: mean and variance lambda (the sample variance's variance is about (lambda + 2 lambda^2) / n), or the
// variance within `variance_share` of lambda where the generator's method is known to be approximate.
inline void expect_poisson(std::span<const double> sample, double lambda, double variance_share = 0) {
  const double n = static_cast<double>(sample.size());
  const Moments m = moments(sample);
  EXPECT_NEAR(m.mean, lambda, kSigmas * std::sqrt(lambda / n));
  EXPECT_NEAR(m.variance, lambda,
              std::max(kSigmas * std::sqrt((lambda + 2 * lambda * lambda) / n), variance_share * lambda));
  std::cout << "poisson(" << lambda << "): n " << sample.size() << " mean " << m.mean << " variance " << m.variance
            << "\n";
}

}  // namespace accel::rand::testing
