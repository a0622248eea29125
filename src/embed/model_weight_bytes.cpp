// model_weight_bytes (model_graph.hpp): each parameter of a model's graph converted from its source tensor, in the
// compute dtype, at the parameter's offset of the weights buffer.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <numeric>
#include <span>
#include <thread>

#include "embed/model_graph.hpp"

namespace accel::embed {

namespace {

// f32 values rounded once to `dtype` into `place`.
void store(DType dtype, std::span<const float> values, std::uint8_t* place) {
  if (dtype == DType::f32) {
    std::memcpy(place, values.data(), values.size() * 4);
    return;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint16_t bits = dtype == DType::bf16 ? to_bfloat16(values[i]).bits : to_half(values[i]).bits;
    std::memcpy(place + i * 2, &bits, 2);
  }
}

// A rotary table's `count` first values (ParameterSource::RotaryTable), each angle taken in double.
std::vector<float> rotary_values(const ParameterSource::RotaryTable& table, std::size_t count) {
  std::vector<float> values(count);
  const std::uint32_t half = table.head_dim / 2;
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t position = k / table.width, j = k % table.width % table.head_dim;
    const double frequency = table.scale * std::pow(table.theta, -2.0 * static_cast<double>(j % half) / table.head_dim);
    const double angle = static_cast<double>(position) * frequency;
    values[k] = static_cast<float>(!table.sine ? std::cos(angle) : j < half ? -std::sin(angle) : std::sin(angle));
  }
  return values;
}

// Rows less other rows (ParameterSource::minus_row), taken in f32 and rounded once to the parameter's dtype.
Status convert_difference(DType dtype, std::uint64_t bytes, const SafetensorsFile& file, const std::string& name,
                          const ParameterSource& source, std::uint8_t* place) {
  ACCEL_ASSIGN_OR_RETURN(const TensorView view, file.tensor(name));
  ACCEL_ASSIGN_OR_RETURN(const std::vector<float> values, file.to_f32(name));
  const std::size_t count = bytes / size_of(dtype);
  const std::uint64_t row = view.shape.size() > 1 ? view.elements() / view.shape[0] : 1;
  if ((std::max(source.first_row, *source.minus_row) * row + count) > values.size())
    return invalid_argument(fmt::format("{}: {} elements, fewer than the graph's {} from rows {} and {}", name,
                                        view.elements(), count, source.first_row, *source.minus_row));
  std::vector<float> difference(count);
  for (std::size_t i = 0; i < count; ++i)
    difference[i] = values[source.first_row * row + i] - values[*source.minus_row * row + i];
  store(dtype, difference, place);
  return Status();
}

// The `bytes` of parameter `parameter` (of `dtype`) from its source, converted into `place`.
Status convert_source(const std::string& parameter, DType dtype, std::uint64_t bytes, const ModelWeights& weights,
                      std::uint8_t* place) {
  const auto source = weights.sources.find(parameter);
  if (source == weights.sources.end()) return internal_error(fmt::format("no source for parameter '{}'", parameter));
  if (source->second.rotary) {
    store(dtype, rotary_values(*source->second.rotary, bytes / size_of(dtype)), place);
    return Status();
  }
  const SafetensorsFile& file = weights.files[source->second.file];
  const std::string& name = source->second.tensor;
  ACCEL_ASSIGN_OR_RETURN(const TensorView view, file.tensor(name));
  const std::size_t element_bytes = size_of(dtype);
  const std::uint64_t row_elements = view.shape.size() > 1 ? view.elements() / view.shape[0] : 1;
  const std::uint64_t skip = source->second.first_row * row_elements * element_bytes;
  if (skip + bytes > view.elements() * element_bytes)
    return invalid_argument(fmt::format("{}: {} elements, fewer than the graph's {} bytes from row {}", name,
                                        view.elements(), bytes, source->second.first_row));
  if (source->second.minus_row) return convert_difference(dtype, bytes, file, name, source->second, place);
  // Each weight is converted straight into its place: the whole tensor, or the rows the graph reads of it (one
  // token-type row, positions up to the longest sequence, a part of a fused projection).
  const std::uint64_t first = source->second.first_row * row_elements, count = bytes / element_bytes;
  return dtype == DType::f32 ? file.copy_f32(name, first, {reinterpret_cast<float*>(place), count})
                             : file.copy_16bit(name, dtype, first, {reinterpret_cast<std::uint16_t*>(place), count});
}

// A stacked parameter whose parts take turns (ModelWeights::Stacked::rows_per_turn): each part converted whole,
// then its rows moved into place `turn` at a time.
Status convert_in_turns(const std::string& name, DType dtype, const ModelWeights::Stacked& stacked,
                        const ModelWeights& weights, std::uint8_t* place) {
  const std::vector<Parameter>& parts = stacked.parts;
  const std::uint64_t rows = parts[0].shape[0], turn = stacked.rows_per_turn;
  std::uint64_t row_bytes = size_of(dtype);
  for (std::size_t d = 1; d < parts[0].shape.size(); ++d) row_bytes *= parts[0].shape[d];
  if (rows % turn != 0)
    return internal_error(fmt::format("stacked parameter '{}': {} rows a part, not turns of {}", name, rows, turn));
  std::vector<std::uint8_t> part_bytes(rows * row_bytes);
  for (std::size_t p = 0; p < parts.size(); ++p) {
    ACCEL_RETURN_IF_ERROR(convert_source(parts[p].name, dtype, part_bytes.size(), weights, part_bytes.data()));
    for (std::uint64_t first = 0; first < rows; first += turn)
      std::memcpy(place + (first * parts.size() + p * turn) * row_bytes, part_bytes.data() + first * row_bytes,
                  turn * row_bytes);
  }
  return Status();
}

// One parameter's rows, converted into its place in the weights buffer: from its source, or each part of a stacked
// one after the other or in turns.
Status convert_parameter(const graph::Graph& graph, const graph::Graph::ParameterSlot& slot,
                         const ModelWeights& weights, std::uint8_t* place) {
  const graph::TensorInfo& t = graph.tensors()[slot.tensor];
  const auto stacked = weights.stacked.find(t.name);
  if (stacked == weights.stacked.end()) return convert_source(t.name, t.dtype, slot.bytes, weights, place);
  const std::vector<Parameter>& parts = stacked->second.parts;
  std::vector<std::uint64_t> part_bytes;
  for (const Parameter& part : parts) {
    part_bytes.push_back(size_of(t.dtype));
    for (std::uint64_t d : part.shape) part_bytes.back() *= d;
  }
  const std::uint64_t total = std::accumulate(part_bytes.begin(), part_bytes.end(), std::uint64_t{0});
  if (total != slot.bytes)
    return internal_error(
        fmt::format("stacked parameter '{}': its parts fill {} of its {} bytes", t.name, total, slot.bytes));
  if (stacked->second.rows_per_turn > 0) return convert_in_turns(t.name, t.dtype, stacked->second, weights, place);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    ACCEL_RETURN_IF_ERROR(convert_source(parts[i].name, t.dtype, part_bytes[i], weights, place));
    place += part_bytes[i];
  }
  return Status();
}

}  // namespace

Result<std::vector<std::uint8_t>> model_weight_bytes(const graph::Graph& graph, const ModelWeights& weights) {
  std::vector<std::uint8_t> bytes(graph.weight_bytes());
  const std::vector<graph::Graph::ParameterSlot>& slots = graph.parameters();
  // The parameters are independent: converted on several threads, the largest first so that the word
  // embeddings (often half of the model) start at once. Each slot's status is kept, and the first one's returned.
  std::vector<std::size_t> order(slots.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return slots[a].bytes > slots[b].bytes; });
  std::vector<Status> statuses(slots.size());
  std::atomic<std::size_t> next{0};
  const auto convert = [&] {
    for (std::size_t i = next.fetch_add(1); i < order.size(); i = next.fetch_add(1)) {
      const graph::Graph::ParameterSlot& slot = slots[order[i]];
      statuses[order[i]] = convert_parameter(graph, slot, weights, bytes.data() + slot.offset);
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
