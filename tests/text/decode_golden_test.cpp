// Tokenizer::decode against HuggingFace tokenizers 0.23.3: every line of tests/text/data/decode_golden.jsonl
// (make_decode_golden.py: id lists of real texts and random ones, decoded with and without special tokens by four
// tokenizer.json files, one of each decoder kind the models we load use); and each decoder type alone on token
// lists whose expected text tokenizers' Python decoders gave (tokenizers.decoders.X().decode(tokens)).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "accel/text/tokenizer.hpp"
#include "testing/model_folder.hpp"
#include "testing/status_matchers.hpp"
#include "text/tokenizer/components.hpp"

namespace accel::text {
namespace {

using nlohmann::json;
using testing::IsOk;

std::filesystem::path tokenizer_file(const std::string& name) {
  const std::filesystem::path data = ACCEL_TEXT_TEST_DATA;
  if (name == "minilm_wordpiece") return accel::testing::model_folder(ACCEL_TEST_MODEL_FOLDER) / "tokenizer.json";
  if (name == "xlmr_unigram") return ACCEL_XLMR_TOKENIZER_JSON;
  return data / name / "tokenizer.json";
}

TEST(DecodeGoldenTest, EveryIdListDecodesAsTokenizersDoes) {
  std::ifstream in(std::filesystem::path(ACCEL_TEXT_TEST_DATA) / "decode_golden.jsonl");
  ASSERT_TRUE(in) << "decode_golden.jsonl is missing";
  std::string line;
  std::getline(in, line);  // the header
  std::map<std::string, std::optional<Tokenizer>> tokenizers;
  std::size_t checked = 0, skipped = 0;
  for (std::size_t number = 2; std::getline(in, line); ++number) {
    const json golden = json::parse(line);
    const std::string name = golden.at("tokenizer");
    if (!tokenizers.contains(name)) {
      const std::filesystem::path file = tokenizer_file(name);
      if (std::filesystem::exists(file)) {
        Result<Tokenizer> loaded = Tokenizer::load(file);
        ASSERT_THAT(loaded.status(), IsOk());
        tokenizers[name] = std::move(*loaded);
      } else {
        tokenizers[name] = std::nullopt;  // a .deps file scripts/setup has not fetched
      }
    }
    if (!tokenizers[name]) {
      ++skipped;
      continue;
    }
    const std::vector<std::int32_t> ids = golden.at("ids");
    Result<std::string> text = tokenizers[name]->decode(ids, golden.at("skip_special_tokens").get<bool>());
    ASSERT_THAT(text.status(), IsOk()) << "line " << number;
    EXPECT_EQ(*text, golden.at("text").get<std::string>()) << "line " << number << " (" << name << ")";
    ++checked;
  }
  EXPECT_GT(checked, 300u);
  if (skipped > 0) std::cout << "skipped " << skipped << " lines whose tokenizer scripts/setup has not fetched\n";
}

std::string decoded(const json& decoder, std::vector<std::string> tokens) {
  Result<std::unique_ptr<Decoder>> made = make_decoder(decoder, "decoder");
  EXPECT_THAT(made.status(), IsOk());
  if (!made.ok()) return "";
  (*made)->decode_chain(tokens);
  std::string text;
  for (const std::string& piece : tokens) text += piece;
  return text;
}

TEST(DecoderTest, EachTypeDecodesAsTokenizersDoes) {
  EXPECT_EQ(decoded({{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}},
                    {"hello", "##o", ",", "world", "do", "not", "'", "s"}),
            "helloo, world do not ' s");  // cleanup runs on each piece, so " do" " not" stay apart
  EXPECT_EQ(decoded({{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "always"}},
                    {"\u2581a\u2581b", "\u2581c"}),
            "ab c");
  EXPECT_EQ(decoded({{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "never"}},
                    {"\u2581a\u2581b", "\u2581c"}),
            " a b c");
  EXPECT_EQ(decoded({{"type", "Strip"}, {"content", " "}, {"start", 2}, {"stop", 1}}, {"  a  ", " x"}), "a x");
  EXPECT_EQ(decoded({{"type", "ByteFallback"}}, {"<0x+F>", "<0xE2>", "<0x82>", "a", "<0xE2>", "<0x82>", "<0xAC>"}),
            "\uFFFD\uFFFD\uFFFDa\u20AC");
  EXPECT_EQ(decoded({{"type", "BPEDecoder"}, {"suffix", "</w>"}}, {"a</w>", "b</w>c</w>"}), "a bc");
  EXPECT_EQ(decoded({{"type", "CTC"}}, {"<pad>", "h", "h", "e", "<pad>", "|", "l", "l", "<pad>", "l", "o"}), "he llo");
  EXPECT_EQ(decoded({{"type", "ByteLevel"}}, {"\u0120hello", "\u00C3\u00A9", "\u00E2", "\u00E4\u00BD ", "\u00C3x"}),
            " hello\u00E9\uFFFD\u00E4\u00BD \uFFFDx");
  EXPECT_EQ(decoded({{"type", "Fuse"}}, {"a", "b"}), "ab");
  EXPECT_EQ(
      decoded({{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}}, {"\u2581a", "b\u2581"}),
      " ab ");
  EXPECT_EQ(decoded({{"type", "Sequence"}, {"decoders", json::array({{{"type", "ByteFallback"}}, {{"type", "Fuse"}}})}},
                    {"<0x41>", "b"}),
            "Ab");
}

TEST(DecoderTest, RefusesWhatItDoesNotRunNamingTheField) {
  Result<std::unique_ptr<Decoder>> unknown = make_decoder({{"type", "Mystery"}}, "decoder");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("Mystery"), std::string::npos) << unknown.status().to_string();
  Result<std::unique_ptr<Decoder>> wide =
      make_decoder({{"type", "Metaspace"}, {"replacement", "ab"}, {"prepend_scheme", "always"}}, "decoder");
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.status().message().find("decoder.replacement"), std::string::npos) << wide.status().to_string();
}

TEST(DecoderTest, ATokenizerWhoseDecoderWeDoNotRunStillEncodesAndSaysWhyItCannotDecode) {
  const char* file = R"({"model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                          "max_input_chars_per_word": 100, "vocab": {"[UNK]": 0, "a": 1, "##b": 2}},
                         "decoder": {"type": "Mystery"}})";
  Result<Tokenizer> tokenizer = Tokenizer::from_json(file);
  ASSERT_THAT(tokenizer.status(), IsOk());
  ASSERT_THAT(tokenizer->encode("ab").status(), IsOk());
  Result<std::string> text = tokenizer->decode(std::vector<std::int32_t>{1, 2});
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("decoder.type"), std::string::npos) << text.status().to_string();
}

TEST(DecoderTest, NoDecoderJoinsTokensWithSpacesAndUnknownIdsAreLeftOut) {
  const char* file = R"({"model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                          "max_input_chars_per_word": 100, "vocab": {"[UNK]": 0, "a": 1, "##b": 2}}})";
  Result<Tokenizer> tokenizer = Tokenizer::from_json(file);
  ASSERT_THAT(tokenizer.status(), IsOk());
  Result<std::string> text = tokenizer->decode(std::vector<std::int32_t>{1, 99, 2, -4});
  ASSERT_THAT(text.status(), IsOk());
  EXPECT_EQ(*text, "a ##b");
}

}  // namespace
}  // namespace accel::text
