#include "cli/embed_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "accel/embed/model.hpp"
#include "cli/device_choice.hpp"
#include "cli/text_input.hpp"

namespace accel::cli {

namespace {

constexpr std::size_t kChunkTexts = 512;  // texts per call to the model: the unit of progress

class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  void update(std::size_t done) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (seconds < 1.0 || !isatty(STDERR_FILENO)) return;
    const std::size_t width = 30, filled = total_ == 0 ? width : done * width / total_;
    fmt::print(stderr, "\r[{}{}] {}/{} texts, {:.0f} texts/s", std::string(filled, '#'),
               std::string(width - filled, ' '), done, total_, static_cast<double>(done) / seconds);
    shown_ = true;
  }
  ~Progress() {
    if (shown_) fmt::print(stderr, "\n");
  }

 private:
  std::size_t total_;
  std::chrono::steady_clock::time_point start_;
  bool shown_ = false;
};

void write_jsonl(std::ostream& out, const embed::Embeddings& e, std::size_t first) {
  for (std::size_t i = 0; i < e.count(); ++i) {
    out << fmt::format("{{\"index\":{},\"tokens\":{},\"embedding\":[{}]}}\n", first + i, e.tokens[i],
                       fmt::join(e.row(i), ","));
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

}  // namespace

int run_embed(const EmbedOptions& options) {
  auto read = read_texts(options.input, options.input_format);
  if (auto* failure = std::get_if<InputFailure>(&read)) {
    fmt::print(stderr, "accel embed: {}\n", failure->message);
    return failure->code;
  }
  const std::vector<std::string>& texts = std::get<std::vector<std::string>>(read);

  const std::filesystem::path folder =
      options.model.empty() ? embed::default_model_folder() : std::filesystem::path(options.model);
  if (!std::filesystem::exists(folder / "config.json")) {
    fmt::print(stderr, "accel embed: no model at {} (./scripts/setup installs all-MiniLM-L6-v2; or --model DIR)\n",
               folder.string());
    return kBadModel;
  }
  System system;
  auto [model, device_failed] =
      open_model(system, options.device, {.folder = folder, .batch_tokens = options.batch_tokens});
  if (device_failed) {
    fmt::print(stderr, "accel embed: {}\n", model.status().to_string());
    return kFailed;
  }
  if (!model.ok()) {
    fmt::print(stderr, "accel embed: the model at {} did not load: {}\n", folder.string(), model.status().to_string());
    return kBadModel;
  }

  std::ofstream file;
  if (options.output != "-") {
    file.open(options.output, std::ios::binary);
    if (!file) {
      fmt::print(stderr, "accel embed: cannot write {}\n", options.output);
      return kBadFile;
    }
  }
  std::ostream& out = options.output == "-" ? std::cout : file;
  const bool npy = options.output.ends_with(".npy");
  std::vector<float> all;
  Progress progress(texts.size());
  for (std::size_t first = 0; first < texts.size(); first += kChunkTexts) {
    const std::size_t count = std::min(kChunkTexts, texts.size() - first);
    Result<embed::Embeddings> chunk =
        (*model)
            ->embed(std::vector<std::string>(texts.begin() + static_cast<std::ptrdiff_t>(first),
                                             texts.begin() + static_cast<std::ptrdiff_t>(first + count)))
            .wait();
    if (!chunk.ok()) {
      fmt::print(stderr, "accel embed: texts {}..{}: {}\n", first + 1, first + count, chunk.status().to_string());
      return kFailed;
    }
    if (npy) {
      all.insert(all.end(), chunk->values.begin(), chunk->values.end());
    } else {
      write_jsonl(out, *chunk, first);
    }
    progress.update(first + count);
  }
  if (npy) write_npy(out, all, texts.size(), (*model)->info().dimensions);
  out.flush();
  if (!out) {
    fmt::print(stderr, "accel embed: writing {} failed\n", options.output);
    return kBadFile;
  }
  return kDone;
}

}  // namespace accel::cli
