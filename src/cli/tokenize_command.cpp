#include "cli/tokenize_command.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <string_view>
#include <vector>

#include "accel/text/tokenizer.hpp"
#include "cli/text_input.hpp"

namespace accel::cli {
namespace {

constexpr std::size_t kChunkTexts = 4096;  // texts tokenized between writes, so output starts early

// Byte offsets of `text` → code point offsets. Offsets arrive in order of tokens, not of position, so each one is
// converted by counting from the start of a precomputed table.
class CodePointIndex {
 public:
  explicit CodePointIndex(std::string_view text) : before_(text.size() + 1, 0) {
    std::size_t count = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      before_[i] = count;
      if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++count;
    }
    before_[text.size()] = count;
  }
  // The number of code points that start before byte `offset` (a code point boundary).
  [[nodiscard]] std::size_t at(std::size_t offset) const { return before_[offset]; }

 private:
  std::vector<std::size_t> before_;
};

void write_line(std::string& line, std::size_t index, const std::string& text, const text::Encoding& encoding,
                bool offsets) {
  line.clear();
  fmt::format_to(std::back_inserter(line), "{{\"index\":{},\"ids\":[{}]", index, fmt::join(encoding.ids, ","));
  if (offsets) {
    const CodePointIndex chars(text);
    line += ",\"offsets\":[";
    for (std::size_t i = 0; i < encoding.offsets.size(); ++i) {
      fmt::format_to(std::back_inserter(line), "{}[{},{}]", i == 0 ? "" : ",", chars.at(encoding.offsets[i].begin),
                     chars.at(encoding.offsets[i].end));
    }
    line += ']';
  }
  if (encoding.truncated) line += ",\"truncated\":true";
  line += "}\n";
}

}  // namespace

int run_tokenize(const TokenizeOptions& options) {
  if (options.model.empty() == options.tokenizer.empty()) {
    fmt::print(stderr, "accel tokenize: give one of --model DIR or --tokenizer FILE\n");
    return kBadModel;
  }
  const std::filesystem::path file = options.tokenizer.empty() ? std::filesystem::path(options.model) / "tokenizer.json"
                                                               : std::filesystem::path(options.tokenizer);
  Result<text::Tokenizer> tokenizer = text::Tokenizer::load(file);
  if (!tokenizer.ok()) {
    fmt::print(stderr, "accel tokenize: {}\n", tokenizer.status().to_string());
    return kBadModel;
  }
  auto read = read_texts(options.input, options.input_format);
  if (auto* failure = std::get_if<InputFailure>(&read)) {
    fmt::print(stderr, "accel tokenize: {}\n", failure->message);
    return failure->code;
  }
  const std::vector<std::string>& texts = std::get<std::vector<std::string>>(read);
  const text::EncodeOptions encode{
      .add_special_tokens = options.special_tokens,
      .max_length = options.max_length,
      .side = options.truncate == "left" ? text::TruncationSide::left : text::TruncationSide::right};
  std::string line;
  for (std::size_t first = 0; first < texts.size(); first += kChunkTexts) {
    const std::size_t count = std::min(kChunkTexts, texts.size() - first);
    const std::span<const std::string> chunk(texts.data() + first, count);
    Result<std::vector<text::Encoding>> encodings = tokenizer->encode_batch(chunk, encode, options.threads);
    if (!encodings.ok()) {
      fmt::print(stderr, "accel tokenize: texts {}..{}: {}\n", first + 1, first + count,
                 encodings.status().to_string());
      return kFailed;
    }
    for (std::size_t i = 0; i < count; ++i) {
      write_line(line, first + i, texts[first + i], (*encodings)[i], options.offsets);
      std::cout << line;
    }
  }
  std::cout.flush();
  if (!std::cout) {
    fmt::print(stderr, "accel tokenize: writing the output failed\n");
    return kBadFile;
  }
  return kDone;
}

}  // namespace accel::cli
