// What the CPU reference tests of operation graphs share: graphs run on host memory that this code fills and
// reads through the tensors' strides and dtypes (not the interpreter's), random values, comparisons.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "accel/dnn/graph.hpp"
#include "dnn/cpu/graph_interpreter.hpp"
#include "testing/status_matchers.hpp"

namespace accel::dnn::reference_testing {

using testing::IsOk;
using testing::StatusIs;

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

inline std::shared_ptr<const Graph> build(GraphBuilder& builder) {
  Result<std::shared_ptr<const Graph>> graph = builder.build();
  EXPECT_THAT(graph, IsOk());
  return graph.ok() ? *graph : nullptr;
}

// Offset in storage of the element at row-major position `linear` of the logical dims.
inline std::int64_t storage_offset(const TensorDesc& t, std::int64_t linear) {
  std::int64_t offset = 0;
  for (std::size_t d = t.rank; d-- > 0;) {
    offset += (linear % t.dims[d]) * t.strides[d];
    linear /= t.dims[d];
  }
  return offset;
}

inline void encode(DType dtype, double value, std::byte* at) {
  auto put = [&](auto v) { std::memcpy(at, &v, sizeof(v)); };
  switch (dtype) {
    case DType::f32: return put(static_cast<float>(value));
    case DType::f64: return put(value);
    case DType::f16: return put(to_half(static_cast<float>(value)));
    case DType::bf16: return put(to_bfloat16(static_cast<float>(value)));
    case DType::i32: return put(static_cast<std::int32_t>(value));
    default: FAIL() << "the test does not write " << to_string(dtype);
  }
}

inline double decode(DType dtype, const std::byte* at) {
  auto get = [&](auto v) {
    std::memcpy(&v, at, sizeof(v));
    return v;
  };
  switch (dtype) {
    case DType::f32: return get(float{});
    case DType::f64: return get(double{});
    case DType::f16: return to_float(get(Half{}));
    case DType::bf16: return to_float(get(BFloat16{}));
    default: ADD_FAILURE() << "the test does not read " << to_string(dtype); return 0;
  }
}

// Memory for every bound tensor of a graph, each filled with a marker byte so that writes outside a tensor's
// elements show.
class GraphRun {
 public:
  static constexpr std::byte kMarker{0xA5};

  explicit GraphRun(std::shared_ptr<const Graph> graph) : graph_(std::move(graph)) {
    for (std::uint32_t uid : graph_->bound_uids()) {
      const TensorDesc& t = *graph_->find(uid);
      memory_[uid].assign(storage_extent(t) * size_of(t.dtype), kMarker);
    }
  }

  void set(TensorRef ref, const std::vector<double>& values) {
    const TensorDesc& t = *graph_->find(ref.uid);
    ASSERT_EQ(values.size(), element_count(t)) << "tensor " << ref.uid;
    for (std::size_t i = 0; i < values.size(); ++i) {
      encode(t.dtype, values[i], memory_.at(ref.uid).data() + storage_offset(t, i) * size_of(t.dtype));
    }
  }

  [[nodiscard]] std::vector<double> get(TensorRef ref) const {
    const TensorDesc& t = *graph_->find(ref.uid);
    std::vector<double> values(element_count(t));
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] = decode(t.dtype, memory_.at(ref.uid).data() + storage_offset(t, i) * size_of(t.dtype));
    }
    return values;
  }

  [[nodiscard]] std::vector<std::pair<std::uint32_t, cpu::HostTensor>> bindings() {
    std::vector<std::pair<std::uint32_t, cpu::HostTensor>> bound;
    for (auto& [uid, bytes] : memory_) {
      const DType dtype = graph_->find(uid)->dtype;
      bound.push_back({uid, {.data = bytes.data(), .dtype = dtype, .count = bytes.size() / size_of(dtype)}});
    }
    return bound;
  }

  [[nodiscard]] Status run() { return cpu::run_graph(*graph_, bindings()); }
  [[nodiscard]] const Graph& graph() const { return *graph_; }

 private:
  std::shared_ptr<const Graph> graph_;
  std::map<std::uint32_t, std::vector<std::byte>> memory_;
};

inline std::vector<double> random_values(std::size_t count, std::uint32_t seed, double low = -1, double high = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(low, high);
  std::vector<double> values(count);
  for (double& v : values) v = dist(rng);
  return values;
}

inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

inline void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tolerance) << "element " << i;
}

}  // namespace accel::dnn::reference_testing
