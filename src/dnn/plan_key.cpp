#include "dnn/plan_key.hpp"

#include "dnn/graph_codec.hpp"

namespace accel::dnn {
namespace {

enum class KeyKind : std::uint8_t { graph, conv_forward, conv_backward_data, conv_backward_filter };

std::vector<std::byte> conv_key(KeyKind kind, const ConvShape& s, const Epilogue& epilogue) {
  ByteWriter key;
  key.fields(kind, s.spatial_rank, s.layout, s.strided, s.dtype, epilogue.activation, epilogue.bias, s.n, s.c, s.k,
             s.groups, s.input, s.filter, s.pre_padding, s.post_padding, s.stride, s.dilation);
  if (s.strided) key.fields(s.x_strides, s.w_strides, s.y_strides);
  return key.take();
}

}  // namespace

std::vector<std::byte> plan_key(const ConvFwd& request) {
  return conv_key(KeyKind::conv_forward, request.shape, request.epilogue);
}
std::vector<std::byte> plan_key(const ConvBwdData& request) {
  return conv_key(KeyKind::conv_backward_data, request.shape, Epilogue{});
}
std::vector<std::byte> plan_key(const ConvBwdFilter& request) {
  return conv_key(KeyKind::conv_backward_filter, request.shape, Epilogue{});
}

std::vector<std::byte> plan_key(const Graph& graph) {
  const std::vector<std::byte>& signature = graph.signature().bytes;
  std::vector<std::byte> key(1 + signature.size());
  key[0] = static_cast<std::byte>(KeyKind::graph);
  std::memcpy(key.data() + 1, signature.data(), signature.size());
  return key;
}

}  // namespace accel::dnn
