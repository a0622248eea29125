#include "dnn/plan_key.hpp"

#include <cstring>

namespace accel::dnn {
namespace {

enum class KeyKind : std::uint8_t { graph, conv_forward, conv_backward_data, conv_backward_filter };

class KeyWriter {
 public:
  explicit KeyWriter(KeyKind kind) {
    bytes_.reserve(256);
    put(kind);
  }
  template <class T>
  void put(const T& value) {
    static_assert(std::has_unique_object_representations_v<T> || std::is_same_v<T, bool>);
    const std::size_t at = bytes_.size();
    bytes_.resize(at + sizeof value);
    std::memcpy(bytes_.data() + at, &value, sizeof value);
  }
  std::vector<std::byte> take() { return std::move(bytes_); }

 private:
  std::vector<std::byte> bytes_;
};

std::vector<std::byte> conv_key(KeyKind kind, const ConvShape& s, ConvEpilogue epilogue) {
  KeyWriter key(kind);
  key.put(s.spatial_rank);
  key.put(s.layout);
  key.put(s.strided);
  key.put(s.dtype);
  key.put(epilogue);
  key.put(s.n);
  key.put(s.c);
  key.put(s.k);
  key.put(s.groups);
  key.put(s.input);
  key.put(s.filter);
  key.put(s.pre_padding);
  key.put(s.post_padding);
  key.put(s.stride);
  key.put(s.dilation);
  if (s.strided) {
    key.put(s.x_strides);
    key.put(s.w_strides);
    key.put(s.y_strides);
  }
  return key.take();
}

}  // namespace

std::vector<std::byte> plan_key(const ConvFwd& request) {
  return conv_key(KeyKind::conv_forward, request.shape, request.epilogue);
}
std::vector<std::byte> plan_key(const ConvBwdData& request) {
  return conv_key(KeyKind::conv_backward_data, request.shape, ConvEpilogue::none);
}
std::vector<std::byte> plan_key(const ConvBwdFilter& request) {
  return conv_key(KeyKind::conv_backward_filter, request.shape, ConvEpilogue::none);
}

std::vector<std::byte> plan_key(const Graph& graph) {
  const std::vector<std::byte>& signature = graph.signature().bytes;
  std::vector<std::byte> key(1 + signature.size());
  key[0] = static_cast<std::byte>(KeyKind::graph);
  std::memcpy(key.data() + 1, signature.data(), signature.size());
  return key;
}

}  // namespace accel::dnn
