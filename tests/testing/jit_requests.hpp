// What the tests of the JIT requests on the CPU device share: host and device arrays, stored matrices, CutlassGemm
// and CutlassGroupedGemm problems with their expected results computed here in double, and the device fixture.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/dnn/convolution.hpp"
#include "accel/jit/cutlass.hpp"
#include "accel/jit/kernel.hpp"
#include "device/isolated/staged_requests.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/status_matchers.hpp"

namespace accel::jit_testing {

using testing::HostArray;
using testing::IsOk;
using testing::relative_error;
using testing::StatusIs;

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kSentinel = 7.0;  // exact in every element type here

inline DeviceOptions options_for(Isolation isolation) {
  return DeviceOptions{.kind = DeviceKind::cpu, .isolation = isolation};
}

// -- host and device arrays ------------------------------------------------------------------------------------

inline HostArray filled(DType dtype, std::size_t count, double value) {
  HostArray host(dtype, count);
  for (std::size_t i = 0; i < count; ++i) host.set(i, value);
  return host;
}

inline HostArray random_array(DType dtype, std::size_t count, std::uint64_t seed, double low = -1.0,
                              double high = 1.0) {
  HostArray host(dtype, count);
  std::mt19937_64 rng(seed);
  host.fill_uniform(rng, low, high);
  return host;
}

inline BufferHandle to_device(const Device& dev, const HostArray& host) {
  Result<BufferHandle> handle = dev.ask(Allocate{.dtype = host.dtype, .count = host.size()}).wait();
  EXPECT_THAT(handle, IsOk());
  if (!handle.ok()) return {};
  EXPECT_THAT(dev.ask(CopyToDevice{.source = host.source(), .destination = *handle}).wait(), IsOk());
  return *handle;
}

inline HostArray from_device(const Device& dev, const BufferHandle& handle) {
  HostArray host(handle.dtype, handle.count);
  EXPECT_THAT(dev.ask(CopyToHost{.source = handle, .destination = host.destination()}).wait(), IsOk());
  host.decode();
  return host;
}

// A matrix stored in a buffer, as the requests describe it (ld already resolved).
struct Stored {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  MatrixOrder order = MatrixOrder::row_major;
  std::int64_t ld = 0;
  std::uint64_t offset = 0;

  static Stored of(std::int64_t rows, std::int64_t cols, MatrixOrder order, std::int64_t ld, std::uint64_t offset = 0) {
    const std::int64_t inner = order == MatrixOrder::row_major ? cols : rows;
    return {rows, cols, order, ld == 0 ? inner : ld, offset};
  }
  [[nodiscard]] std::size_t index(std::int64_t i, std::int64_t j) const {
    return static_cast<std::size_t>(offset) +
           static_cast<std::size_t>(order == MatrixOrder::row_major ? i * ld + j : j * ld + i);
  }
  [[nodiscard]] std::size_t extent() const {  // elements from `offset`
    const std::int64_t inner = order == MatrixOrder::row_major ? cols : rows;
    const std::int64_t outer = order == MatrixOrder::row_major ? rows : cols;
    return static_cast<std::size_t>((outer - 1) * ld + inner);
  }
  [[nodiscard]] std::size_t end() const { return static_cast<std::size_t>(offset) + extent(); }
};

// Sets the elements of `matrix` in `host` to uniform random values (the rest of `host` keeps what it holds).
inline void fill_matrix(HostArray& host, const Stored& matrix, std::mt19937_64& rng, double low = -1.0,
                        double high = 1.0) {
  std::uniform_real_distribution<double> uniform(low, high);
  for (std::int64_t i = 0; i < matrix.rows; ++i)
    for (std::int64_t j = 0; j < matrix.cols; ++j) host.set(matrix.index(i, j), uniform(rng));
}

// alpha * A B (+ beta * C) in double, m x n row-major.
inline std::vector<double> naive_gemm(const HostArray& a, const Stored& sa, const HostArray& b, const Stored& sb,
                                      double alpha) {
  std::vector<double> out(static_cast<std::size_t>(sa.rows * sb.cols));
  for (std::int64_t i = 0; i < sa.rows; ++i)
    for (std::int64_t j = 0; j < sb.cols; ++j) {
      double sum = 0;
      for (std::int64_t p = 0; p < sa.cols; ++p) sum += a.values[sa.index(i, p)] * b.values[sb.index(p, j)];
      out[static_cast<std::size_t>(i * sb.cols + j)] = alpha * sum;
    }
  return out;
}

// Checks the m x n matrix `d` of `out` against `expected` (row-major): elementwise within tolerance * max(1, |e|)
// and ‖out − expected‖ / ‖expected‖ <= tolerance.
inline void expect_matrix_near(const HostArray& out, const Stored& d, const std::vector<double>& expected,
                               double tolerance) {
  std::vector<double> actual(expected.size());
  int reported = 0;
  for (std::int64_t i = 0; i < d.rows; ++i)
    for (std::int64_t j = 0; j < d.cols; ++j) {
      const std::size_t at = static_cast<std::size_t>(i * d.cols + j);
      actual[at] = out.values[d.index(i, j)];
      const double allowed = tolerance * std::max(1.0, std::abs(expected[at]));
      if (!(std::abs(actual[at] - expected[at]) <= allowed) && reported++ < 5) {
        ADD_FAILURE() << "D(" << i << ", " << j << ") = " << actual[at] << ", expected " << expected[at];
      }
    }
  EXPECT_LE(relative_error(actual, expected), tolerance);
}

// Every element of `host` outside the listed matrices still holds `value` (NaN: is NaN).
inline void expect_untouched_outside(const HostArray& host, const std::vector<Stored>& matrices, double value) {
  std::vector<bool> inside(host.size(), false);
  for (const Stored& m : matrices)
    for (std::int64_t i = 0; i < m.rows; ++i)
      for (std::int64_t j = 0; j < m.cols; ++j) inside[m.index(i, j)] = true;
  int reported = 0;
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (inside[i]) continue;
    const bool same = std::isnan(value) ? std::isnan(host.values[i]) : host.values[i] == value;
    if (!same && reported++ < 5) ADD_FAILURE() << "element " << i << " outside the matrices was written";
  }
}

inline void expect_all(const HostArray& host, double value) { expect_untouched_outside(host, {}, value); }

// -- CutlassGemm problems ---------------------------------------------------------------------------------------

struct GemmSpec {
  std::int64_t m = 24, n = 40, k = 32;
  DType input = DType::f16;
  DType output = DType::f16;
  MatrixOrder layout_a = MatrixOrder::row_major;
  MatrixOrder layout_b = MatrixOrder::column_major;
  MatrixOrder layout_c = MatrixOrder::row_major;
  std::int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
  bool c = false;
  Activation activation = Activation::identity;
  BiasVector bias = BiasVector::none;
  bool row_scale = false;
  bool col_scale = false;
  bool residual = false;
};

// A problem's host operands (padding of A and B is NaN, so reading it shows; D starts as the sentinel) and its
// expected D, computed here in double.
struct GemmProblem {
  GemmSpec spec;
  Stored sa, sb, sc, sd;
  HostArray a, b, c, d, bias, row_scale, col_scale, residual;
  std::vector<double> expected;

  GemmProblem(const GemmSpec& s, std::uint64_t seed)
      : spec(s),
        sa(Stored::of(s.m, s.k, s.layout_a, s.lda)),
        sb(Stored::of(s.k, s.n, s.layout_b, s.ldb)),
        sc(Stored::of(s.m, s.n, s.layout_c, s.ldc)),
        sd(Stored::of(s.m, s.n, s.layout_c, s.ldd)),
        a(filled(s.input, sa.end(), kNaN)),
        b(filled(s.input, sb.end(), kNaN)),
        c(filled(s.output, s.c ? sc.end() : 0, kNaN)),
        d(filled(s.output, sd.end(), kSentinel)),
        bias(s.output, s.bias == BiasVector::none      ? 0
                       : s.bias == BiasVector::per_row ? s.m
                                                       : s.n),
        row_scale(DType::f32, s.row_scale ? s.m : 0),
        col_scale(DType::f32, s.col_scale ? s.n : 0),
        residual(s.output, s.residual ? sd.end() : 0) {
    std::mt19937_64 rng(seed);
    fill_matrix(a, sa, rng);
    fill_matrix(b, sb, rng);
    if (s.c) fill_matrix(c, sc, rng, -2.0, 2.0);
    bias.fill_uniform(rng);
    row_scale.fill_uniform(rng, 0.5, 1.5);
    col_scale.fill_uniform(rng, -1.5, 1.5);
    residual.fill_uniform(rng);

    expected = naive_gemm(a, sa, b, sb, s.alpha);
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) {
        double& v = expected[static_cast<std::size_t>(i * s.n + j)];
        if (s.row_scale) v *= row_scale.values[i];
        if (s.col_scale) v *= col_scale.values[j];
        if (s.c) v += double{s.beta} * c.values[sc.index(i, j)];
        if (s.bias == BiasVector::per_row) v += bias.values[i];
        if (s.bias == BiasVector::per_column) v += bias.values[j];
        v = activate(s.activation, v);
        if (s.residual) v += residual.values[sd.index(i, j)];
      }
  }

  // Allocates and uploads every operand; the request that computes this problem.
  CutlassGemm upload(const Device& dev) const {
    auto put = [&](const HostArray& host) { return host.size() == 0 ? BufferHandle{} : to_device(dev, host); };
    return CutlassGemm{.m = spec.m,
                       .n = spec.n,
                       .k = spec.k,
                       .input = spec.input,
                       .output = spec.output,
                       .layout_a = spec.layout_a,
                       .layout_b = spec.layout_b,
                       .layout_c = spec.layout_c,
                       .a = put(a),
                       .b = put(b),
                       .c = put(c),
                       .d = put(d),
                       .lda = spec.lda,
                       .ldb = spec.ldb,
                       .ldc = spec.ldc,
                       .ldd = spec.ldd,
                       .alpha = spec.alpha,
                       .beta = spec.beta,
                       .epilogue = {.activation = spec.activation, .bias = spec.bias},
                       .bias = put(bias),
                       .row_scale = put(row_scale),
                       .col_scale = put(col_scale),
                       .residual = put(residual)};
  }

  // Runs the problem on `dev` and checks D: its elements against `expected`, its padding untouched.
  HostArray run_and_check(const Device& dev) const {
    const CutlassGemm request = upload(dev);
    EXPECT_THAT(dev.ask(request).wait(), IsOk());
    HostArray out = from_device(dev, request.d);
    expect_matrix_near(out, sd, expected, spec.output == DType::f32 ? 1e-5 : 1e-2);
    expect_untouched_outside(out, {sd}, kSentinel);
    return out;
  }
};

class JitRequestsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<Device> device = Device::open(system_, options_for(Isolation::in_process));
    ASSERT_THAT(device, IsOk());
    dev_ = *device;
  }
  System system_;
  std::optional<Device> dev_;
};
// -- 3. CutlassGroupedGemm -----------------------------------------------------------------------------------------

// Three groups of different sizes, each operand kind in ONE buffer at 16-byte-aligned offsets with gaps between
// the groups; the second group has a C, the others not.
struct GroupedProblem {
  static constexpr std::uint64_t kGap = 8;  // f16 elements: 16 bytes
  struct Sizes {
    std::int64_t m, n, k, lda, ldd;
  };
  static constexpr Sizes kSizes[3] = {{16, 24, 32, 0, 0}, {8, 40, 16, 24, 48}, {24, 8, 48, 0, 0}};
  static constexpr float kAlpha = 1.25f;
  static constexpr float kBeta = 0.25f;

  std::vector<Stored> sa, sb, sd;
  Stored sc;
  std::optional<HostArray> a, b, c, d;
  std::vector<std::vector<double>> expected;

  explicit GroupedProblem(std::uint64_t seed) {
    std::uint64_t at_a = kGap, at_b = kGap, at_d = kGap;
    for (const Sizes& s : kSizes) {
      sa.push_back(Stored::of(s.m, s.k, MatrixOrder::row_major, s.lda, at_a));
      sb.push_back(Stored::of(s.k, s.n, MatrixOrder::column_major, 0, at_b));
      sd.push_back(Stored::of(s.m, s.n, MatrixOrder::row_major, s.ldd, at_d));
      at_a = sa.back().end() + kGap;
      at_b = sb.back().end() + kGap;
      at_d = sd.back().end() + kGap;
      at_a += (8 - at_a % 8) % 8;
      at_b += (8 - at_b % 8) % 8;
      at_d += (8 - at_d % 8) % 8;
    }
    sc = Stored::of(kSizes[1].m, kSizes[1].n, MatrixOrder::row_major, 0, 16);
    a.emplace(filled(DType::f16, at_a, kNaN));
    b.emplace(filled(DType::f16, at_b, kNaN));
    c.emplace(filled(DType::f16, sc.end() + kGap, kNaN));
    d.emplace(filled(DType::f16, at_d, kSentinel));
    std::mt19937_64 rng(seed);
    for (std::size_t g = 0; g < 3; ++g) {
      fill_matrix(*a, sa[g], rng);
      fill_matrix(*b, sb[g], rng);
    }
    fill_matrix(*c, sc, rng, -2.0, 2.0);
    for (std::size_t g = 0; g < 3; ++g) {
      expected.push_back(naive_gemm(*a, sa[g], *b, sb[g], kAlpha));
      if (g == 1) {
        for (std::int64_t i = 0; i < sc.rows; ++i)
          for (std::int64_t j = 0; j < sc.cols; ++j)
            expected[g][static_cast<std::size_t>(i * sc.cols + j)] += double{kBeta} * c->values[sc.index(i, j)];
      }
    }
  }

  CutlassGroupedGemm upload(const Device& dev) const {
    const BufferHandle da = to_device(dev, *a), db = to_device(dev, *b), dc = to_device(dev, *c),
                       dd = to_device(dev, *d);
    CutlassGroupedGemm request{.alpha = kAlpha, .beta = kBeta};
    for (std::size_t g = 0; g < 3; ++g) {
      const Sizes& s = kSizes[g];
      request.groups.push_back(GemmGroup{.m = s.m,
                                         .n = s.n,
                                         .k = s.k,
                                         .a = {da, sa[g].offset},
                                         .b = {db, sb[g].offset},
                                         .c = g == 1 ? MatrixRef{dc, sc.offset} : MatrixRef{},
                                         .d = {dd, sd[g].offset},
                                         .lda = s.lda,
                                         .ldd = s.ldd});
    }
    return request;
  }

  void check(const HostArray& out) const {
    for (std::size_t g = 0; g < 3; ++g) {
      SCOPED_TRACE("group " + std::to_string(g));
      expect_matrix_near(out, sd[g], expected[g], 1e-2);
    }
    expect_untouched_outside(out, sd, kSentinel);
  }
};

}  // namespace accel::jit_testing
