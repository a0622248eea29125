#include "embed/bert_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <numeric>
#include <thread>

namespace accel::embed {

namespace {
using graph::Dim;
using graph::Tensor;

// The parameter that holds row 0 of the token-type embeddings: every token of a single-text input is type 0.
constexpr std::string_view kTypeRow = "embeddings.token_type_embeddings.weight[0]";

std::string strip(std::string_view name, std::string_view prefix) {
  return std::string(name.substr(name.starts_with(prefix) ? prefix.size() : 0));
}
}  // namespace

Result<std::shared_ptr<const graph::Graph>> bert_graph(const ModelFolder& folder, const BertGraphOptions& options) {
  const BertConfig& c = folder.config;
  const DType dt = options.compute;
  const BertWeights names = BertWeights::expected(c, "");
  const Dim T = Dim::sym("tokens"), W = Dim::of(c.hidden_size);
  const auto eps = static_cast<float>(c.layer_norm_eps);
  const auto max_length = static_cast<std::int32_t>(folder.max_sequence_length());

  graph::GraphBuilder b;
  b.bucket("tokens", graph::Ladder::powers_of_two(options.min_bucket, options.batch_tokens));
  b.bucket("sequences", graph::Ladder::powers_of_two(1, options.batch_tokens));
  auto param = [&](const WeightSpec& spec) {
    graph::Shape shape;
    for (std::uint64_t d : spec.shape) shape.push_back(Dim::of(static_cast<std::int64_t>(d)));
    return b.parameter(spec.name, dt, std::move(shape));
  };
  auto linear = [&](Tensor x, const WeightPair& w, Activation activation = Activation::identity) {
    return b.matmul(x, param(w.weight), {.transpose_b = true, .bias = param(w.bias), .activation = activation});
  };
  auto norm = [&](Tensor x, const WeightPair& w, Tensor residual) {
    return b.layer_norm(x, param(w.weight), param(w.bias), eps, residual);
  };

  Tensor ids = b.input("ids", DType::i32, {T});
  Tensor offsets = b.input("offsets", DType::i32, {Dim::sym("sequences", 1)}, graph::Padding::repeat_last);
  Tensor words = b.gather(param(names.word_embeddings), ids);
  Tensor positions = b.gather(param(names.position_embeddings), b.sequence_positions(offsets, T));
  Tensor typed = b.binary(graph::BinaryOp::add, words, b.parameter(std::string(kTypeRow), dt, {W}));
  Tensor x = norm(typed, names.embeddings_norm, positions);
  const Activation gelu = c.hidden_act == Gelu::erf ? Activation::gelu_erf : Activation::gelu_tanh;
  for (const BertLayerWeights& layer : names.layers) {
    Tensor attended = b.attention(linear(x, layer.query), linear(x, layer.key), linear(x, layer.value), offsets,
                                  static_cast<std::int32_t>(c.num_attention_heads), max_length);
    Tensor h = norm(linear(attended, layer.attention_output), layer.attention_norm, x);
    x = norm(linear(linear(h, layer.intermediate, gelu), layer.output), layer.output_norm, h);
  }
  Tensor pooled = b.mean_pool(x, offsets);
  if (folder.normalize) pooled = b.l2_normalize(pooled);
  if (dt != DType::f32) pooled = b.cast(pooled, DType::f32);
  b.output("embeddings", pooled);
  return b.build();
}

namespace {

// One parameter's weights, converted into its place in the weights buffer.
Status convert_parameter(const graph::Graph& graph, const graph::Graph::ParameterSlot& slot,
                         const SafetensorsFile& file, const BertWeights& weights, std::uint8_t* place) {
  const graph::TensorInfo& t = graph.tensors()[slot.tensor];
  const bool type_row = t.name == kTypeRow;
  const std::string source =
      weights.prefix + (type_row ? strip(weights.token_type_embeddings.name, weights.prefix) : t.name);
  ACCEL_ASSIGN_OR_RETURN(const TensorView view, file.tensor(source));
  const std::size_t element_bytes = size_of(t.dtype);
  if (view.elements() * element_bytes < slot.bytes)
    return invalid_argument(
        fmt::format("{}: {} elements, fewer than the graph's {}", source, view.elements(), to_string(t.shape)));
  // Most weights are converted straight into their place; a table the graph uses only the head of (the one
  // token-type row, positions past the longest sequence) goes through a whole copy first.
  if (view.elements() * element_bytes == slot.bytes) {
    return t.dtype == DType::f32
               ? file.copy_f32(source, {reinterpret_cast<float*>(place), view.elements()})
               : file.copy_16bit(source, t.dtype, {reinterpret_cast<std::uint16_t*>(place), view.elements()});
  }
  if (t.dtype == DType::f32) {
    ACCEL_ASSIGN_OR_RETURN(std::vector<float> values, file.to_f32(source));
    std::memcpy(place, values.data(), slot.bytes);
  } else {
    ACCEL_ASSIGN_OR_RETURN(std::vector<std::uint16_t> values, file.to_16bit(source, t.dtype));
    std::memcpy(place, values.data(), slot.bytes);
  }
  return Status();
}

}  // namespace

Result<std::vector<std::uint8_t>> bert_weight_bytes(const graph::Graph& graph, const SafetensorsFile& file,
                                                    const BertWeights& weights) {
  std::vector<std::uint8_t> bytes(graph.weight_bytes());
  const std::vector<graph::Graph::ParameterSlot>& slots = graph.parameters();
  // The parameters are independent: converted on several threads, the largest first so that the word
  // embeddings (half of the model) start at once. Each slot's status is kept, and the first one's returned.
  std::vector<std::size_t> order(slots.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return slots[a].bytes > slots[b].bytes; });
  std::vector<Status> statuses(slots.size());
  std::atomic<std::size_t> next{0};
  const auto convert = [&] {
    for (std::size_t i = next.fetch_add(1); i < order.size(); i = next.fetch_add(1)) {
      const graph::Graph::ParameterSlot& slot = slots[order[i]];
      statuses[order[i]] = convert_parameter(graph, slot, file, weights, bytes.data() + slot.offset);
    }
  };
  {
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
    std::vector<std::jthread> helpers;
    for (unsigned t = 1; t < threads; ++t) helpers.emplace_back(convert);
    convert();
  }
  for (const Status& status : statuses) ACCEL_RETURN_IF_ERROR(status);
  return bytes;
}

}  // namespace accel::embed
