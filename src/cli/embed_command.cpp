#include "cli/embed_command.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <variant>

#include "accel/embed/model.hpp"
#include "cli/device_choice.hpp"
#include "cli/embed_replicas.hpp"
#include "cli/progress.hpp"
#include "cli/text_input.hpp"

namespace accel::cli {

namespace {

constexpr std::size_t kChunkTexts = 512;  // texts per call to the model: the unit of progress

void write_jsonl(std::ostream& out, const embed::Embeddings& e, embed::Output output, std::size_t first) {
  for (std::size_t i = 0; i < e.count(); ++i) {
    out << fmt::format("{{\"index\":{},\"tokens\":{},", first + i, e.tokens[i]);
    if (output == embed::Output::sparse) {
      std::vector<std::uint32_t> indices;
      std::vector<float> values;
      for (const auto& [index, value] : e.nonzeros(i)) {
        indices.push_back(index);
        values.push_back(value);
      }
      out << fmt::format("\"sparse\":{{\"indices\":[{}],\"values\":[{}]}}}}\n", fmt::join(indices, ","),
                         fmt::join(values, ","));
    } else {
      out << fmt::format("\"{}\":[{}]}}\n", output == embed::Output::dense ? "embedding" : "scores",
                         fmt::join(e.row(i), ","));
    }
  }
}

// NumPy's .npy format, version 1.0: magic, header length, a Python dict literal padded to 64 bytes, raw data.
void write_npy(std::ostream& out, const std::vector<float>& values, std::size_t rows, std::uint32_t columns) {
  std::string header = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {}), }}", rows, columns);
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header.push_back('\n');
  const auto length = static_cast<std::uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  out.put(static_cast<char>(length & 0xff)).put(static_cast<char>(length >> 8));
  out << header;
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
}

embed::Truncation truncation_named(const std::string& name) {
  if (name == "left") return embed::Truncation::left;
  if (name == "refuse") return embed::Truncation::refuse;
  return embed::Truncation::right;
}

// The model the options name, on their device; or the exit code, its reason printed.
std::variant<std::shared_ptr<embed::Model>, int> load(const char* command, System& system,
                                                      const EmbedOptions& options) {
  const std::filesystem::path folder =
      options.model.empty() ? embed::default_model_folder() : std::filesystem::path(options.model);
  if (!std::filesystem::exists(folder / "config.json") && !std::filesystem::exists(folder / "modules.json")) {
    fmt::print(stderr, "accel {}: no model at {} (./scripts/setup installs all-MiniLM-L6-v2; or --model DIR)\n",
               command, folder.string());
    return kBadModel;
  }
  const Result<std::optional<DType>> compute = compute_dtype(options.dtype);
  if (!compute.ok()) {
    fmt::print(stderr, "accel {}: {}\n", command, compute.status().to_string());
    return kFailed;
  }
  auto [model, device_failed] =
      open_model(system, options.device, {.folder = folder, .compute = *compute, .batch_tokens = options.batch_tokens});
  if (device_failed) {
    fmt::print(stderr, "accel {}: {}\n", command, model.status().to_string());
    return kFailed;
  }
  if (!model.ok()) {
    fmt::print(stderr, "accel {}: the model at {} did not load: {}\n", command, folder.string(),
               model.status().to_string());
    return kBadModel;
  }
  return *model;
}

// The output stream the options name (stdout for -); false when the file cannot be written.
bool open_output(const char* command, const std::string& path, std::ofstream& file) {
  if (path == "-") return true;
  file.open(path, std::ios::binary);
  if (!file) fmt::print(stderr, "accel {}: cannot write {}\n", command, path);
  return static_cast<bool>(file);
}

int finish_output(const char* command, std::ostream& out, const std::string& path) {
  out.flush();
  if (out) return kDone;
  fmt::print(stderr, "accel {}: writing {} failed\n", command, path);
  return kBadFile;
}

}  // namespace

// The model the options name on each device of --devices; or the exit code, its reason printed.
std::variant<EmbedReplicas, int> load_replicas(System& system, const EmbedOptions& options) {
  const std::filesystem::path folder =
      options.model.empty() ? embed::default_model_folder() : std::filesystem::path(options.model);
  const Result<std::optional<DType>> compute = compute_dtype(options.dtype);
  Result<EmbedReplicas> replicas =
      compute.ok() ? EmbedReplicas::load(system, options.devices,
                                         {.folder = folder, .compute = *compute, .batch_tokens = options.batch_tokens})
                   : Result<EmbedReplicas>(compute.status());
  if (!replicas.ok()) {
    fmt::print(stderr, "accel embed: {}\n", replicas.status().to_string());
    return kFailed;
  }
  return std::move(*replicas);
}

int run_embed(const EmbedOptions& options) {
  auto read = read_texts(options.input, options.input_format);
  if (auto* failure = std::get_if<InputFailure>(&read)) {
    fmt::print(stderr, "accel embed: {}\n", failure->message);
    return failure->code;
  }
  const std::vector<std::string>& texts = std::get<std::vector<std::string>>(read);
  System system;
  std::optional<EmbedReplicas> replicas;
  std::shared_ptr<embed::Model> single;
  if (options.devices.empty()) {
    auto loaded = load("embed", system, options);
    if (const int* code = std::get_if<int>(&loaded)) return *code;
    single = std::get<std::shared_ptr<embed::Model>>(loaded);
  } else {
    auto loaded = load_replicas(system, options);
    if (const int* code = std::get_if<int>(&loaded)) return *code;
    replicas.emplace(std::move(std::get<EmbedReplicas>(loaded)));
  }
  embed::Model& model = replicas ? replicas->first() : *single;
  const embed::Output output = model.info().output;
  const bool npy = options.output.ends_with(".npy");
  if (npy && output != embed::Output::dense) {
    fmt::print(stderr, "accel embed: .npy holds dense embeddings; this model's output is {} (write JSONL)\n",
               to_string(output));
    return kFailed;
  }
  const embed::EmbedOptions embed_options{
      .truncation = truncation_named(options.truncate),
      .prompt = options.has_prompt ? std::optional<std::string>(options.prompt) : std::nullopt,
      .prompt_name = options.prompt_name.empty() ? std::nullopt : std::optional<std::string>(options.prompt_name),
      .dimensions = options.dimensions};
  std::ofstream file;
  if (!open_output("embed", options.output, file)) return kBadFile;
  std::ostream& out = options.output == "-" ? std::cout : file;
  std::vector<float> all;
  std::uint32_t dimensions = 0;
  Progress progress(texts.size(), "texts");
  const auto take = [&](std::size_t first, const embed::Embeddings& chunk) {
    dimensions = chunk.dimensions;
    if (npy) {
      all.insert(all.end(), chunk.values.begin(), chunk.values.end());
    } else {
      write_jsonl(out, chunk, output, first);
    }
    progress.update(first + chunk.count());
  };
  if (replicas) {
    if (Status ran = replicas->run(texts, kChunkTexts, embed_options, take); !ran.ok()) {
      fmt::print(stderr, "accel embed: {}\n", ran.to_string());
      return kFailed;
    }
  }
  // One chunk's call stays in flight while the next is tokenised and sent (embed() tokenises on this thread), so the
  // device runs a chunk while the host tokenises the one after it.
  struct Call {
    std::size_t first = 0, count = 0;
    Future<embed::Embeddings> rows;
  };
  std::optional<Call> in_flight;
  const auto finish = [&](Call call) {
    Result<embed::Embeddings> chunk = call.rows.wait();
    if (!chunk.ok()) {
      fmt::print(stderr, "accel embed: texts {}..{}: {}\n", call.first + 1, call.first + call.count,
                 chunk.status().to_string());
      return false;
    }
    take(call.first, *chunk);
    return true;
  };
  for (std::size_t first = 0; !replicas && first < texts.size(); first += kChunkTexts) {
    const std::size_t count = std::min(kChunkTexts, texts.size() - first);
    Call next{.first = first,
              .count = count,
              .rows = model.embed(std::vector<std::string>(texts.begin() + static_cast<std::ptrdiff_t>(first),
                                                           texts.begin() + static_cast<std::ptrdiff_t>(first + count)),
                                  embed_options)};
    if (in_flight && !finish(std::move(*in_flight))) {
      static_cast<void>(next.rows.wait());  // answered before the process exits, not read
      return kFailed;
    }
    in_flight = std::move(next);
  }
  if (in_flight && !finish(std::move(*in_flight))) return kFailed;
  if (npy) write_npy(out, all, texts.size(), dimensions != 0 ? dimensions : model.info().dimensions);
  return finish_output("embed", out, options.output);
}

int run_rerank(const EmbedOptions& options) {
  auto read = read_texts(options.input, options.input_format);
  if (auto* failure = std::get_if<InputFailure>(&read)) {
    fmt::print(stderr, "accel rerank: {}\n", failure->message);
    return failure->code;
  }
  System system;
  auto loaded = load("rerank", system, options);
  if (const int* code = std::get_if<int>(&loaded)) return *code;
  embed::Model& model = *std::get<std::shared_ptr<embed::Model>>(loaded);
  Result<embed::Embeddings> scores = model
                                         .rerank(options.query, std::get<std::vector<std::string>>(std::move(read)),
                                                 truncation_named(options.truncate))
                                         .wait();
  if (!scores.ok()) {
    fmt::print(stderr, "accel rerank: {}\n", scores.status().to_string());
    return kFailed;
  }
  std::ofstream file;
  if (!open_output("rerank", options.output, file)) return kBadFile;
  std::ostream& out = options.output == "-" ? std::cout : file;
  for (std::size_t i = 0; i < scores->count(); ++i) {
    const std::span<const float> row = scores->row(i);
    if (row.size() == 1)
      out << fmt::format("{{\"index\":{},\"tokens\":{},\"score\":{},\"logit\":{}}}\n", i, scores->tokens[i],
                         1.0 / (1.0 + std::exp(-double{row[0]})), row[0]);
    else
      out << fmt::format("{{\"index\":{},\"tokens\":{},\"scores\":[{}]}}\n", i, scores->tokens[i], fmt::join(row, ","));
  }
  return finish_output("rerank", out, options.output);
}

int run_model_info(const EmbedOptions& options) {
  System system;
  auto loaded = load("info", system, options);
  if (const int* code = std::get_if<int>(&loaded)) return *code;
  const embed::ModelInfo& info = std::get<std::shared_ptr<embed::Model>>(loaded)->info();
  fmt::print("model: {}\nfamily: {} (model_type {}), {} layers, hidden {}, vocabulary {}\n", info.name, info.family,
             info.model_type, info.layers, info.hidden, info.vocabulary);
  fmt::print("output: {}, {} dimensions: {}\n", to_string(info.output), info.dimensions, info.head);
  fmt::print("max sequence length: {} tokens; runs of at most {} tokens\n", info.max_sequence_length,
             info.batch_tokens);
  fmt::print("tokenizer: {}\n", info.tokenizer);
  for (const auto& [name, text] : info.prompts)
    fmt::print("prompt {}{}: {:?}\n", name, name == info.default_prompt_name ? " (default)" : "", text);
  fmt::print("device: {}, computing in {}\n", info.device, to_string(info.compute));
  return kDone;
}

}  // namespace accel::cli
