// Whole tokenizer.json files against HuggingFace tokenizers 0.23.3: for every case of the golden files that
// tests/text/make_tokenizer_golden.py wrote (a text alone, a pair, truncated at 32 on either side), the same ids,
// type ids, special-token mask, byte offsets and truncation flag. The committed files hold a subset of the corpus;
// ACCEL_TOKENIZER_GOLDEN_DIR points the test at a full set (make_tokenizer_golden.py --full DIR).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "accel/text/tokenizer.hpp"
#include "testing/model_folder.hpp"
#include "testing/status_matchers.hpp"

namespace accel::text {
namespace {

using nlohmann::json;
using testing::IsOk;

std::filesystem::path golden_dir() {
  const char* named = std::getenv("ACCEL_TOKENIZER_GOLDEN_DIR");
  return named != nullptr && *named != '\0' ? std::filesystem::path(named)
                                            : std::filesystem::path(ACCEL_DEFAULT_TOKENIZER_GOLDEN_DIR);
}

struct GoldenTokenizer {
  const char* name;
  std::filesystem::path file;
  bool fetched_by_setup;  // under .deps/: its absence means scripts/setup has not run, and skips
};

void PrintTo(const GoldenTokenizer& tokenizer, std::ostream* out) { *out << tokenizer.name; }

std::vector<GoldenTokenizer> golden_tokenizers() {
  const std::filesystem::path trained = ACCEL_TEXT_TEST_DATA;
  return {{"minilm_wordpiece", accel::testing::model_folder(ACCEL_TEST_MODEL_FOLDER) / "tokenizer.json", true},
          {"xlmr_unigram", ACCEL_XLMR_TOKENIZER_JSON, true},
          {"qwen_bpe", trained / "qwen_bpe" / "tokenizer.json", false},
          {"metaspace_unigram", trained / "metaspace_unigram" / "tokenizer.json", false}};
}

// One line of <tokenizer>.jsonl, its text indexes resolved against texts.jsonl.
struct GoldenCase {
  std::size_t line = 0;
  std::size_t text = 0;
  std::optional<std::size_t> pair;
  EncodeOptions options;
  std::vector<std::int32_t> ids;
  std::vector<std::int32_t> type_ids;
  std::vector<std::uint8_t> special_tokens_mask;
  std::vector<Range> offsets;
  bool truncated = false;
};

std::vector<std::string> read_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  return lines;
}

std::vector<std::int32_t> digits(const std::string& text) {
  std::vector<std::int32_t> out;
  for (const char c : text) out.push_back(c - '0');
  return out;
}

GoldenCase parse_case(std::size_t line, const json& entry) {
  GoldenCase golden{.line = line, .text = entry.at("text").get<std::size_t>()};
  if (entry.contains("pair")) golden.pair = entry.at("pair").get<std::size_t>();
  if (entry.contains("max_length")) {
    golden.options.max_length = entry.at("max_length").get<std::size_t>();
    golden.options.side = entry.at("side").get<std::string>() == "left" ? TruncationSide::left : TruncationSide::right;
  }
  golden.ids = entry.at("ids").get<std::vector<std::int32_t>>();
  golden.type_ids = digits(entry.at("type_ids").get<std::string>());
  for (const std::int32_t bit : digits(entry.at("special").get<std::string>())) {
    golden.special_tokens_mask.push_back(static_cast<std::uint8_t>(bit));
  }
  const auto flat = entry.at("offsets").get<std::vector<std::size_t>>();
  for (std::size_t i = 0; i + 1 < flat.size(); i += 2) golden.offsets.push_back({flat[i], flat[i + 1]});
  golden.truncated = entry.at("truncated").get<bool>();
  return golden;
}

std::string escaped(const std::string& text) {
  constexpr std::size_t kShown = 400;
  const std::string shown = json(text).dump(-1, ' ', true, json::error_handler_t::replace);
  return shown.size() <= kShown ? shown : shown.substr(0, kShown) + "... (" + std::to_string(text.size()) + " bytes)";
}

std::string show(std::int32_t value) { return std::to_string(value); }
std::string show(std::uint8_t value) { return std::to_string(value); }
std::string show(const Range& range) {
  std::ostringstream out;
  out << '(' << range.begin << ',' << range.end << ')';
  return out.str();
}

// Where two sequences first differ, with a few elements either side of both; empty when they agree.
template <class T>
std::string first_difference(const char* field, const std::vector<T>& expected, const std::vector<T>& actual) {
  if (expected == actual) return "";
  const auto [e, a] = std::mismatch(expected.begin(), expected.end(), actual.begin(), actual.end());
  const auto at = static_cast<std::size_t>(e - expected.begin());
  const auto window = [at](const std::vector<T>& values) {
    std::string out;
    const std::size_t from = at > 6 ? at - 6 : 0;
    for (std::size_t i = from; i < std::min(values.size(), at + 7); ++i) {
      out += i == at ? " >" : " ";
      out += show(values[i]);
    }
    return out;
  };
  std::ostringstream out;
  out << field << " differ at " << at << " (expected " << expected.size() << ", got " << actual.size()
      << "):\n    expected ..." << window(expected) << "\n    actual   ..." << window(actual) << "\n";
  return out.str();
}

std::string describe_mismatch(const GoldenCase& golden, const std::vector<std::string>& texts,
                              const Result<Encoding>& actual) {
  std::ostringstream out;
  out << "case on line " << golden.line + 1 << ": text " << golden.text << " " << escaped(texts[golden.text]);
  if (golden.pair) out << "\n  pair " << *golden.pair << " " << escaped(texts[*golden.pair]);
  if (golden.options.max_length != 0) {
    out << "\n  max_length " << golden.options.max_length << ", "
        << (golden.options.side == TruncationSide::left ? "left" : "right");
  }
  out << "\n";
  if (!actual.ok()) return out.str() + "  encode failed: " + actual.status().to_string() + "\n";
  out << first_difference("  ids", golden.ids, actual->ids)
      << first_difference("  type_ids", golden.type_ids, actual->type_ids)
      << first_difference("  special_tokens_mask", golden.special_tokens_mask, actual->special_tokens_mask)
      << first_difference("  offsets", golden.offsets, actual->offsets);
  if (golden.truncated != actual->truncated) {
    out << "  truncated: expected " << std::boolalpha << golden.truncated << "\n";
  }
  out << "  actual tokens:";
  for (std::size_t i = 0; i < std::min<std::size_t>(actual->tokens.size(), 40); ++i) {
    out << " " << escaped(actual->tokens[i]);
  }
  return out.str() + "\n";
}

bool agrees(const GoldenCase& golden, const Encoding& actual) {
  return golden.ids == actual.ids && golden.type_ids == actual.type_ids &&
         golden.special_tokens_mask == actual.special_tokens_mask && golden.offsets == actual.offsets &&
         golden.truncated == actual.truncated;
}

class TokenizerGolden : public ::testing::TestWithParam<GoldenTokenizer> {};

TEST_P(TokenizerGolden, AgreesWithHuggingFaceTokenizersOnEveryCase) {
  const GoldenTokenizer& subject = GetParam();
  if (subject.fetched_by_setup && !std::filesystem::exists(subject.file)) {
    GTEST_SKIP() << "no " << subject.file << " (scripts/setup fetches it)";
  }
  const Result<Tokenizer> tokenizer = Tokenizer::load(subject.file);
  ASSERT_THAT(tokenizer, IsOk()) << subject.file;

  const std::filesystem::path directory = golden_dir();
  const std::vector<std::string> text_lines = read_lines(directory / "texts.jsonl");
  const std::vector<std::string> case_lines = read_lines(directory / (std::string(subject.name) + ".jsonl"));
  ASSERT_FALSE(text_lines.empty()) << "no texts in " << directory;
  ASSERT_FALSE(case_lines.empty()) << "no " << subject.name << ".jsonl in " << directory;
  std::vector<std::string> texts;
  for (std::size_t i = 1; i < text_lines.size(); ++i) texts.push_back(json::parse(text_lines[i]).at("text"));
  ASSERT_EQ(texts.size(), json::parse(text_lines[0]).at("texts").get<std::size_t>());
  const json header = json::parse(case_lines[0]);
  ASSERT_EQ(header.at("tokenizer").get<std::string>(), subject.name);
  ASSERT_EQ(case_lines.size() - 1, header.at("cases").get<std::size_t>());
  ASSERT_GE(case_lines.size() - 1, texts.size());  // every text alone, then pairs and truncations

  std::size_t mismatches = 0;
  std::string first_mismatch;
  for (std::size_t line = 1; line < case_lines.size(); ++line) {
    const GoldenCase golden = parse_case(line, json::parse(case_lines[line]));
    ASSERT_LT(golden.text, texts.size());
    ASSERT_LT(golden.pair.value_or(0), texts.size());
    const Result<Encoding> actual =
        golden.pair ? tokenizer->encode_pair(texts[golden.text], texts[*golden.pair], golden.options)
                    : tokenizer->encode(texts[golden.text], golden.options);
    if (actual.ok() && agrees(golden, *actual)) continue;
    if (mismatches++ == 0) first_mismatch = describe_mismatch(golden, texts, actual);
  }
  EXPECT_EQ(mismatches, 0U) << mismatches << " of " << case_lines.size() - 1 << " cases of " << directory << "/"
                            << subject.name << ".jsonl disagree with tokenizers; the first:\n"
                            << first_mismatch;
}

INSTANTIATE_TEST_SUITE_P(TokenizerJson, TokenizerGolden, ::testing::ValuesIn(golden_tokenizers()),
                         [](const ::testing::TestParamInfo<GoldenTokenizer>& info) { return info.param.name; });

}  // namespace
}  // namespace accel::text
