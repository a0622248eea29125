// Plan keys of convolutions (dnn/plan_key.cpp): a key is computed from the request's shape field by field,
// without building the graph, and must determine that graph exactly as its signature does. For a shape read
// from the input: equal requests have equal keys, and a request that validates (as every device checks it
// before keying a plan) has a graph whose signature decodes back to itself. Graph plan keys are
// dnn_graph_fuzzer's.
//
// Input: one byte choosing the direction (forward, backward data, backward filter), then the shape's fields
// in the key's order and the epilogue's (forward only); no plan key is ever read back, so these are the
// outside bytes a key is made of.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "accel/core/byte_codec.hpp"
#include "accel/dnn/convolution.hpp"
#include "dnn/graph_operation.hpp"
#include "dnn/plan_key.hpp"

namespace {

using namespace accel;

bool read(ByteReader& in, ConvShape& s) {
  in.fields(s.spatial_rank, s.layout, s.strided, s.dtype, s.n, s.c, s.k, s.groups, s.input, s.filter, s.pre_padding,
            s.post_padding, s.stride, s.dilation, s.x_strides, s.w_strides, s.y_strides);
  return in.ok();
}

template <class Request>
void check(const Request& request) {
  Request copy = request;
  if (dnn::plan_key(copy) != dnn::plan_key(request)) std::abort();
  if (!Operation<Request>::validate(request).ok()) return;
  auto graph = dnn::graph_of(request);
  if (!graph.ok()) return;
  auto again = dnn::Graph::decode((*graph)->signature().bytes);
  if (!again.ok() || !((*again)->signature() == (*graph)->signature())) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  ByteReader in(std::span<const std::byte>(reinterpret_cast<const std::byte*>(data) + 1, size - 1));
  switch (data[0] % 3) {
    case 0: {
      ConvFwd request;
      if (read(in, request.shape) && in.fields(request.epilogue.activation, request.epilogue.bias).ok()) check(request);
      break;
    }
    case 1: {
      ConvBwdData request;
      if (read(in, request.shape)) check(request);
      break;
    }
    default: {
      ConvBwdFilter request;
      if (read(in, request.shape)) check(request);
      break;
    }
  }
  return 0;
}
