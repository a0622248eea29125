// `accel tokenize` run as a program: the JSONL it prints (ids, code point offsets, truncation) against HuggingFace
// tokenizers 0.23.3 on the same texts, and its exit codes for a refused command line, a missing tokenizer and a line
// that is not valid UTF-8.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "testing/model_folder.hpp"
#include "testing/run_cli.hpp"
#include "testing/scratch_directory.hpp"

namespace {

using nlohmann::json;

const std::filesystem::path kModel = accel::testing::model_folder(ACCEL_TEST_MODEL_FOLDER);
const std::string kQwenTokenizer = ACCEL_TEST_QWEN_TOKENIZER;

using accel::testing::Ran;

Ran run(const std::string& arguments) { return accel::testing::run_cli(arguments); }

// Each output line as JSON; a line that is not a JSON object becomes a string so the comparison shows it.
std::vector<json> output_lines(const std::string& out) {
  std::vector<json> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    json object = json::parse(line, nullptr, false);
    lines.push_back(object.is_object() ? std::move(object) : json(line));
  }
  return lines;
}

class TokenizeCommandTest : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& contents) {
    const std::filesystem::path path = dir_.path() / name;
    std::ofstream(path, std::ios::binary) << contents;
    return path.string();
  }
  accel::testing::ScratchDirectory dir_{"tokenize-command"};
};

TEST_F(TokenizeCommandTest, QwenIdsAndOffsetsInCodePoints) {
  // Accents, CJK and an emoji make byte and code point offsets differ; byte-level BPE splits a code point over
  // several ids that share its offsets, and the post-processor appends id 4000 at (0, 0).
  const std::string input = "Hello, world!\nCafé naïve 日本語 🚀 test\n  spaces   and\ttabs\n";
  const Ran ran = run("tokenize --offsets --tokenizer " + kQwenTokenizer + " " + write("in.txt", input));
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  // From tokenizers 0.23.3: Tokenizer.from_file(...).encode(text) after no_truncation(), no_padding().
  const std::vector<json> expected{
      {{"index", 0},
       {"ids", {39, 68, 351, 78, 11, 1072, 0, 4000}},
       {"offsets", {{0, 1}, {1, 2}, {2, 4}, {4, 5}, {5, 6}, {7, 12}, {12, 13}, {0, 0}}}},
      {{"index", 1},
       {"ids", {34, 2569, 1586, 220, 3619, 98, 3854, 105, 3460, 252, 513, 2531, 318, 975, 4000}},
       {"offsets",
        {{0, 1},
         {1, 4},
         {5, 10},
         {11, 11},
         {11, 12},
         {11, 12},
         {12, 13},
         {12, 13},
         {13, 14},
         {13, 14},
         {15, 16},
         {15, 16},
         {17, 18},
         {18, 21},
         {0, 0}}}},
      {{"index", 2},
       {"ids", {220, 281, 1643, 412, 82, 303, 478, 197, 83, 326, 82, 4000}},
       {"offsets",
        {{1, 1}, {2, 3}, {3, 5}, {5, 7}, {7, 8}, {10, 10}, {11, 14}, {14, 15}, {15, 16}, {16, 18}, {18, 19}, {0, 0}}}},
  };
  EXPECT_EQ(output_lines(ran.out), expected);
}

TEST_F(TokenizeCommandTest, ReadsJsonlTexts) {
  // Fields besides "text" are ignored; the empty text still gets the post-processor's id.
  const std::string input = json{{"text", "A man is riding a horse."}}.dump() + "\n" +
                            json{{"id", 7}, {"text", "Ünïcode ☃"}}.dump() + "\n" + json{{"text", ""}}.dump() + "\n";
  const Ran ran = run("tokenize --tokenizer " + kQwenTokenizer + " " + write("in.jsonl", input));
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  // From tokenizers 0.23.3, as above.
  const std::vector<json> expected{
      {{"index", 0}, {"ids", {32, 325, 301, 617, 220, 81, 72, 470, 271, 290, 270, 346, 13, 4000}}},
      {{"index", 1}, {"ids", {3455, 77, 127, 107, 1364, 378, 1046, 246, 225, 4000}}},
      {{"index", 2}, {"ids", {4000}}},
  };
  EXPECT_EQ(output_lines(ran.out), expected);
}

const std::string kMiniLmInput = "Hello, world!\nCafé naïve 日本語 🚀 test\n  spaces   and\ttabs\n";

TEST_F(TokenizeCommandTest, MaxLengthTruncatesEitherSide) {
  ACCEL_SKIP_WITHOUT_MODEL_FOLDER(kModel);
  const std::string in = write("in.txt", kMiniLmInput);
  Ran ran = run("tokenize --max-length 5 --model " + kModel.string() + " " + in);
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  // From tokenizers 0.23.3: enable_truncation(5, direction="right") / direction="left"; [CLS] and [SEP] are kept.
  EXPECT_EQ(output_lines(ran.out), (std::vector<json>{
                                       {{"index", 0}, {"ids", {101, 7592, 1010, 2088, 102}}, {"truncated", true}},
                                       {{"index", 1}, {"ids", {101, 7668, 15743, 1864, 102}}, {"truncated", true}},
                                       {{"index", 2}, {"ids", {101, 7258, 1998, 21628, 102}}, {"truncated", true}},
                                   }));
  ran = run("tokenize --max-length 5 --truncate left --model " + kModel.string() + " " + in);
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  EXPECT_EQ(output_lines(ran.out), (std::vector<json>{
                                       {{"index", 0}, {"ids", {101, 1010, 2088, 999, 102}}, {"truncated", true}},
                                       {{"index", 1}, {"ids", {101, 1950, 100, 3231, 102}}, {"truncated", true}},
                                       {{"index", 2}, {"ids", {101, 1998, 21628, 2015, 102}}, {"truncated", true}},
                                   }));
}

TEST_F(TokenizeCommandTest, NoSpecialTokensLeavesOutClsAndSep) {
  ACCEL_SKIP_WITHOUT_MODEL_FOLDER(kModel);
  const Ran ran = run("tokenize --no-special-tokens --model " + kModel.string() + " " + write("in.txt", kMiniLmInput));
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  // From tokenizers 0.23.3: encode(text, add_special_tokens=False).
  EXPECT_EQ(output_lines(ran.out), (std::vector<json>{
                                       {{"index", 0}, {"ids", {7592, 1010, 2088, 999}}},
                                       {{"index", 1}, {"ids", {7668, 15743, 1864, 1876, 1950, 100, 3231}}},
                                       {{"index", 2}, {"ids", {7258, 1998, 21628, 2015}}},
                                   }));
}

TEST_F(TokenizeCommandTest, RefusesBothOrNeitherTokenizerSource) {
  const std::string in = write("in.txt", "x\n");
  Ran ran = run("tokenize --model " + dir_.path().string() + " --tokenizer " + kQwenTokenizer + " " + in);
  EXPECT_NE(ran.exit_code, 0);
  EXPECT_NE(ran.out.find("--model excludes --tokenizer"), std::string::npos) << ran.out;
  EXPECT_EQ(ran.out.find("\"ids\""), std::string::npos) << ran.out;
  ran = run("tokenize " + in);
  EXPECT_EQ(ran.exit_code, 3);
  EXPECT_NE(ran.out.find("give one of --model DIR or --tokenizer FILE"), std::string::npos) << ran.out;
}

TEST_F(TokenizeCommandTest, MissingTokenizerNamesItsPath) {
  const std::string in = write("in.txt", "x\n");
  const std::string absent = (dir_.path() / "absent.json").string();
  Ran ran = run("tokenize --tokenizer " + absent + " " + in);
  EXPECT_EQ(ran.exit_code, 3);
  EXPECT_NE(ran.out.find(absent), std::string::npos) << ran.out;
  // A model folder without a tokenizer.json: the message names the file it looked for.
  ran = run("tokenize --model " + dir_.path().string() + " " + in);
  EXPECT_EQ(ran.exit_code, 3);
  EXPECT_NE(ran.out.find((dir_.path() / "tokenizer.json").string()), std::string::npos) << ran.out;
}

TEST_F(TokenizeCommandTest, NamesTheLineThatIsNotUtf8) {
  const Ran ran =
      run("tokenize --tokenizer " + kQwenTokenizer + " " + write("bad.txt", "fine\nalso fine\nbroken \xc3\x28 here\n"));
  EXPECT_EQ(ran.exit_code, 5);
  EXPECT_NE(ran.out.find("line 3 is not valid UTF-8"), std::string::npos) << ran.out;
}

}  // namespace
