// What the tests of operation graphs on the host share: building a graph that must build, the dims of a
// tensor, packed tensor descriptions.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "accel/dnn/convolution.hpp"
#include "accel/dnn/graph.hpp"
#include "dnn/plan_key.hpp"
#include "testing/status_matchers.hpp"

namespace accel::dnn::graph_testing {

using ::testing::ElementsAre;
using testing::IsOk;
using testing::StatusIs;

inline std::shared_ptr<const Graph> build(GraphBuilder& builder) {
  Result<std::shared_ptr<const Graph>> graph = builder.build();
  EXPECT_THAT(graph, IsOk());
  return graph.ok() ? *graph : nullptr;
}

inline std::vector<std::int64_t> dims_of(const Graph& graph, TensorRef ref) {
  const TensorDesc* t = graph.find(ref.uid);
  if (t == nullptr) {
    ADD_FAILURE() << "uid " << ref.uid << " is not a tensor of the graph";
    return {};
  }
  return {t->shape().begin(), t->shape().end()};
}

inline Dims packed(std::initializer_list<std::int64_t> dims, TensorLayout layout) {
  return packed_strides(std::span<const std::int64_t>(dims.begin(), dims.size()), layout);
}

inline TensorDesc desc(std::uint32_t uid, std::initializer_list<std::int64_t> dims, bool is_virtual = false,
                       DType dtype = DType::f32) {
  TensorDesc t{.uid = uid, .dtype = dtype, .rank = static_cast<std::uint8_t>(dims.size()), .is_virtual = is_virtual};
  std::copy(dims.begin(), dims.end(), t.dims.begin());
  t.strides = packed(dims, TensorLayout::channels_first);
  return t;
}

}  // namespace accel::dnn::graph_testing
