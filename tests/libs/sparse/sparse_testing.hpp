// What the sparse tests share, on the CPU device and on CUDA: random sparse matrices (of a density, with empty rows
// or one huge row) as host arrays in each format, their upload as a sparse::Matrix, and dense references computed
// with Eigen's dense module in double.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/libs/sparse/sparse.hpp"
#include "testing/status_matchers.hpp"

namespace accel::sparse::testing {

using Reference = Eigen::MatrixXd;

// The shape of a random matrix.
struct Shape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  double density = 0.1;
  std::int64_t empty_every = 0;  // every n-th row empty (0: none forced)
  bool huge_row = false;         // row rows / 2 full
  bool unit_diagonal = false;    // the diagonal stored (square matrices, for triangular solves)
};

// Entries (row, column, value), sorted by row then column, no duplicates.
struct Entries {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int64_t> row, col;
  std::vector<double> value;

  [[nodiscard]] std::int64_t nnz() const { return static_cast<std::int64_t>(row.size()); }
  [[nodiscard]] Reference dense() const {
    Reference out = Reference::Zero(rows, cols);
    for (std::size_t p = 0; p < row.size(); ++p) out(row[p], col[p]) += value[p];
    return out;
  }
  // The same entries of Aᵀ, sorted.
  [[nodiscard]] Entries transposed() const {
    std::vector<std::size_t> order(row.size());
    for (std::size_t p = 0; p < order.size(); ++p) order[p] = p;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return std::pair(col[a], row[a]) < std::pair(col[b], row[b]); });
    Entries out{.rows = cols, .cols = rows};
    for (std::size_t p : order) {
      out.row.push_back(col[p]);
      out.col.push_back(row[p]);
      out.value.push_back(value[p]);
    }
    return out;
  }
};

inline Entries random_entries(const Shape& s, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(-1, 1), unit(0, 1);
  Entries out{.rows = s.rows, .cols = s.cols};
  for (std::int64_t i = 0; i < s.rows; ++i) {
    if (s.empty_every != 0 && i % s.empty_every == 0 && !s.unit_diagonal) continue;
    const bool full = s.huge_row && i == s.rows / 2;
    for (std::int64_t j = 0; j < s.cols; ++j) {
      const bool diagonal = s.unit_diagonal && i == j;
      if (!full && !diagonal && unit(rng) >= s.density) continue;
      out.row.push_back(i);
      out.col.push_back(j);
      // A dominant diagonal keeps triangular solves well conditioned.
      out.value.push_back(diagonal ? 4.0 + unit(rng) : uniform(rng));
    }
  }
  return out;
}

// A value of a matrix's dtype (f16 and bf16 through the library's rounding), and back in double.
template <class T>
T value_of(double v) {
  if constexpr (std::is_same_v<T, Half>) {
    return to_half(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return to_bfloat16(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

template <class T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<double>(to_float(v));
  } else {
    return static_cast<double>(v);
  }
}

// Host arrays of a matrix in `format`: offsets (or COO rows), indices, values.
template <class I, class T>
struct Arrays {
  std::vector<I> offsets, indices;
  std::vector<T> values;
};

template <class I, class T>
Arrays<I, T> arrays(const Entries& e, Format format) {
  const Entries& stored = format == Format::csc ? e.transposed() : e;
  Arrays<I, T> out;
  const std::int64_t outer = stored.rows;
  if (format == Format::coo) {
    out.offsets.assign(stored.row.begin(), stored.row.end());
  } else {
    out.offsets.assign(static_cast<std::size_t>(outer + 1), 0);
    for (std::int64_t r : stored.row) ++out.offsets[static_cast<std::size_t>(r + 1)];
    for (std::int64_t i = 0; i < outer; ++i) out.offsets[i + 1] += out.offsets[i];
  }
  out.indices.assign(stored.col.begin(), stored.col.end());
  for (double v : stored.value) out.values.push_back(value_of<T>(v));
  return out;
}

// A buffer of `count` elements (at least one) that no request has used yet.
template <class T>
Buffer<T> allocated(Device& device, std::size_t count) {
  Result<Buffer<T>> buffer = device.allocate<T>(std::max<std::size_t>(count, 1)).wait();
  EXPECT_THAT(buffer, accel::testing::IsOk());
  if (!buffer.ok()) return {};
  return *buffer;
}

template <class T>
Buffer<T> upload(Device& device, const std::vector<T>& host) {
  Buffer<T> buffer = allocated<T>(device, host.size());
  if (!host.empty() && buffer.size() != 0) {
    EXPECT_THAT(device.upload(std::span<const T>(host), buffer).wait(), accel::testing::IsOk());
  }
  return buffer;
}

// A device's figures for one of its caches (or counters it reports as one); zeros before it has any.
inline CacheStats cache_stats(Device& device, std::string_view name) {
  Result<DeviceInfo> info = device.info().wait();
  EXPECT_THAT(info, accel::testing::IsOk());
  const CacheStats* stats = info.ok() ? info->cache(name) : nullptr;
  return stats != nullptr ? *stats : CacheStats{};
}

template <class T>
std::vector<T> download(Device& device, const Buffer<T>& buffer) {
  std::vector<T> host(buffer.size());
  EXPECT_THAT(device.download(buffer, std::span<T>(host)).wait(), accel::testing::IsOk());
  return host;
}

// A matrix on a device, its buffers kept alive with it.
template <class I, class T>
struct DeviceMatrix {
  Buffer<I> offsets, indices;
  Buffer<T> values;
  Matrix matrix;
};

template <class I, class T>
DeviceMatrix<I, T> upload_matrix(Device& device, const Entries& e, Format format,
                                 Structure structure = Structure::checked_each_use) {
  const Arrays<I, T> host = arrays<I, T>(e, format);
  DeviceMatrix<I, T> out{.offsets = upload(device, host.offsets),
                         .indices = upload(device, host.indices),
                         .values = upload(device, host.values)};
  out.matrix = Matrix{.format = format,
                      .index = dtype_of<I>(),
                      .dtype = dtype_of<T>(),
                      .structure = structure,
                      .rows = e.rows,
                      .cols = e.cols,
                      .nnz = e.nnz(),
                      .offsets = out.offsets,
                      .indices = out.indices,
                      .values = out.values};
  return out;
}

template <class T>
std::vector<T> random_vector(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<T> out(n);
  for (T& v : out) v = static_cast<T>(uniform(rng));
  return out;
}

// A column-major (or row-major) host matrix as an Eigen matrix in double.
template <class T>
Reference to_reference(const std::vector<T>& data, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                       MatrixOrder order) {
  Reference out(rows, cols);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      out(i, j) = to_double(data[order == MatrixOrder::column_major ? j * ld + i : i * ld + j]);
  return out;
}

inline double relative(const Reference& out, const Reference& ref) {
  const double scale = std::max(ref.norm(), 1e-30);
  return (out - ref).norm() / scale;
}

}  // namespace accel::sparse::testing
