// `accel embed` run as a program: the embeddings it prints or writes as .npy (against sentence-transformers'
// reference embeddings of the same sentences; on several devices, against one device's; in bf16 on the CPU), and its
// exit codes for a missing model, an unreadable input, a line that is not valid UTF-8 and a --dtype the CPU refuses.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <vector>

#include "testing/model_folder.hpp"
#include "testing/numeric_error.hpp"
#include "testing/run_cli.hpp"
#include "testing/scratch_directory.hpp"

namespace {

using accel::testing::max_abs_error;

const std::filesystem::path kModel = accel::testing::model_folder(ACCEL_TEST_MODEL_FOLDER);
const std::filesystem::path kReferenceFile = std::filesystem::path(ACCEL_TEST_DATA) / "reference_embeddings.json";
constexpr std::size_t kDimensions = 384;
// sentence-transformers' f32 embeddings on the CPU; the CLI's are within a few 1e-7 of them (measured).
constexpr double kTolerance = 1e-5;

struct Reference {
  std::uint32_t tokens = 0;
  std::vector<double> embedding;
};

// The reference of each sentence of make_reference_embeddings.py, by sentence.
const std::map<std::string, Reference>& references() {
  static const std::map<std::string, Reference> by_sentence = [] {
    std::map<std::string, Reference> out;
    std::ifstream in(kReferenceFile);
    const nlohmann::json file = nlohmann::json::parse(in, nullptr, false);
    if (file.is_discarded()) return out;
    for (const auto& entry : file.at("embeddings"))
      out[entry.at("sentence").get<std::string>()] = {.tokens = entry.at("tokens").get<std::uint32_t>(),
                                                      .embedding = entry.at("embedding").get<std::vector<double>>()};
    return out;
  }();
  return by_sentence;
}

using accel::testing::Ran;

Ran run(const std::string& arguments) { return accel::testing::run_cli(arguments); }

class EmbedCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ACCEL_SKIP_WITHOUT_MODEL_FOLDER(kModel);
    ASSERT_FALSE(references().empty()) << "no reference embeddings in " << kReferenceFile;
  }
  std::filesystem::path write(const std::string& name, const std::string& contents) {
    const std::filesystem::path path = dir_.path() / name;
    std::ofstream(path, std::ios::binary) << contents;
    return path;
  }
  // The reference of `sentence`; a sentence the file does not hold fails the test.
  static const Reference& reference(const std::string& sentence) {
    static const Reference none;
    const auto found = references().find(sentence);
    EXPECT_NE(found, references().end()) << "no reference embedding of '" << sentence << "'";
    return found == references().end() ? none : found->second;
  }
  accel::testing::ScratchDirectory dir_{"embed-command"};
};

TEST_F(EmbedCommandTest, EmbedsEachLineAsOneJsonObject) {
  // An empty line is a text too (the empty sentence); the accents take the tokenizer's normalisation.
  const std::vector<std::string> texts{"Hello, world!", "A man is eating food.", "",
                                       "Café naïve résumé déjà vu, coöperate, señor, Ångström."};
  std::string input;
  for (const std::string& text : texts) input += text + "\n";
  const Ran ran = run("embed --device cpu " + write("in.txt", input).string());
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  std::istringstream lines(ran.out);
  std::string line;
  std::size_t count = 0;
  for (; std::getline(lines, line); ++count) {
    ASSERT_LT(count, texts.size()) << "an extra line: " << line.substr(0, 80);
    const nlohmann::json object = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(object.is_object()) << line.substr(0, 80);
    const Reference& expected = reference(texts[count]);
    EXPECT_EQ(object.value("index", -1), static_cast<int>(count)) << line.substr(0, 80);
    EXPECT_EQ(object.value("tokens", 0u), expected.tokens) << "text " << count;
    ASSERT_TRUE(object.contains("embedding") && object["embedding"].is_array()) << line.substr(0, 80);
    const std::vector<double> embedding = object["embedding"].get<std::vector<double>>();
    EXPECT_EQ(embedding.size(), kDimensions);
    EXPECT_LT(max_abs_error(embedding, expected.embedding), kTolerance) << "text " << count;
  }
  EXPECT_EQ(count, texts.size());
}

TEST_F(EmbedCommandTest, ReadsJsonlAndWritesNpy) {
  const std::vector<std::string> texts{"A man is riding a horse.",
                                       "Paris is the capital and most populous city of France."};
  // Fields besides "text" are ignored.
  const std::string input =
      nlohmann::json{{"text", texts[0]}}.dump() + "\n" + nlohmann::json{{"text", texts[1]}, {"id", 7}}.dump() + "\n";
  const std::filesystem::path out = dir_.path() / "out.npy";
  const Ran ran = run("embed --device cpu -o " + out.string() + " " + write("in.jsonl", input).string());
  ASSERT_EQ(ran.exit_code, 0) << ran.out;

  std::ifstream file(out, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  // .npy 1.0: magic and version, a little-endian header length, the header padded so the data starts 64-aligned.
  ASSERT_GE(bytes.size(), 10u);
  ASSERT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header_length =
      static_cast<unsigned char>(bytes[8]) | static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8;
  ASSERT_EQ((10 + header_length) % 64, 0u);
  ASSERT_EQ(bytes.size(), 10 + header_length + texts.size() * kDimensions * sizeof(float));
  const std::string header = bytes.substr(10, header_length);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
  EXPECT_NE(header.find("'fortran_order': False"), std::string::npos) << header;
  EXPECT_NE(header.find("'shape': (2, 384)"), std::string::npos) << header;
  EXPECT_EQ(header.back(), '\n');

  std::vector<float> values(texts.size() * kDimensions);
  std::memcpy(values.data(), bytes.data() + 10 + header_length, values.size() * sizeof(float));  // '<f4' on x86
  for (std::size_t row = 0; row < texts.size(); ++row) {
    const std::vector<float> embedding(values.begin() + static_cast<std::ptrdiff_t>(row * kDimensions),
                                       values.begin() + static_cast<std::ptrdiff_t>((row + 1) * kDimensions));
    EXPECT_LT(max_abs_error(embedding, reference(texts[row]).embedding), kTolerance) << "row " << row;
  }
}

// Three replicas (one in a worker process) take the input's 512-text chunks at once: the rows come back in input
// order, the same bytes as one device writes.
TEST_F(EmbedCommandTest, SeveralDevicesOrAnIsolatedOneWriteWhatOneWrites) {
  std::string input;
  for (int i = 0; i < 1300; ++i) input += "sentence number " + std::to_string(i) + " about a cat\n";
  const std::filesystem::path in = write("many.txt", input);
  const std::filesystem::path one = dir_.path() / "one.npy", three = dir_.path() / "three.npy";
  const Ran single = run("embed --device cpu -o " + one.string() + " " + in.string());
  ASSERT_EQ(single.exit_code, 0) << single.out;
  const Ran several = run("embed --devices cpu,cpu-isolated,cpu -o " + three.string() + " " + in.string());
  ASSERT_EQ(several.exit_code, 0) << several.out;
  const std::filesystem::path isolated = dir_.path() / "isolated.npy";
  const Ran in_worker = run("embed --device cpu-isolated -o " + isolated.string() + " " + in.string());
  ASSERT_EQ(in_worker.exit_code, 0) << in_worker.out;
  const auto bytes = [](const std::filesystem::path& path) {
    std::ifstream file(path, std::ios::binary);
    return std::string{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  };
  const std::string want = bytes(one);
  EXPECT_GT(want.size(), 1300u * kDimensions * sizeof(float));
  EXPECT_TRUE(bytes(three) == want) << "the rows of several devices differ from one device's";
  EXPECT_TRUE(bytes(isolated) == want) << "the rows of the CPU device in a worker differ from the in-process one's";

  const Ran bad = run("embed --devices cpu,tpu " + in.string());
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("unknown device 'tpu'"), std::string::npos) << bad.out;
}

// --device takes what one entry of --devices takes (a GPU by its ordinal too), and a name it does not know is a
// usage error that says what it takes, before the model is read.
TEST_F(EmbedCommandTest, ADeviceItCannotOpenIsRefusedByNameBeforeTheModelIsRead) {
  const std::filesystem::path in = write("one.txt", "a cat\n");
  const Ran unknown = run("embed --device tpu --model /nonexistent " + in.string());
  EXPECT_NE(unknown.exit_code, 0) << unknown.out;
  EXPECT_NE(unknown.out.find("unknown device 'tpu' (auto, cpu, cpu-isolated, cuda[:N]"), std::string::npos)
      << unknown.out;
  EXPECT_EQ(unknown.out.find("nonexistent"), std::string::npos) << unknown.out;
  const Ran past = run("embed --device cuda:4096 --model /nonexistent " + in.string());
  EXPECT_NE(past.exit_code, 0) << past.out;
  EXPECT_NE(past.out.find("'cuda:4096' names GPU 4096, but this host has"), std::string::npos) << past.out;
}

// Whether this CPU has bf16 matmuls (the kernel's flags; oneDNN sees the same).
bool cpu_has_bf16() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  const std::string flags{std::istreambuf_iterator<char>(cpuinfo), std::istreambuf_iterator<char>()};
  return flags.find(" avx512_bf16") != std::string::npos || flags.find(" amx_bf16") != std::string::npos;
}

// --dtype bf16 on the CPU: matmuls in bf16, close to sentence-transformers' f32, where the CPU has avx512_bf16 or
// AMX; with oneDNN capped below them (ONEDNN_MAX_CPU_ISA, as on a CPU without), refused before anything runs,
// naming the option and the feature. f16 the CPU never computes in; other names are not dtypes.
TEST_F(EmbedCommandTest, DtypeBf16RunsWhereTheCpuHasItAndIsRefusedWhereNot) {
  const std::vector<std::string> texts{"A man is eating food.",
                                       "Paris is the capital and most populous city of France."};
  const std::filesystem::path in = write("in.txt", texts[0] + "\n" + texts[1] + "\n");
  Ran ran = run("embed --device cpu --dtype bf16 " + in.string());
  if (cpu_has_bf16()) {
    ASSERT_EQ(ran.exit_code, 0) << ran.out;
    std::istringstream lines(ran.out);
    std::string line;
    std::size_t count = 0;
    for (; std::getline(lines, line) && count < texts.size(); ++count) {
      const std::vector<double> got = nlohmann::json::parse(line).at("embedding").get<std::vector<double>>();
      const std::vector<double>& want = reference(texts[count]).embedding;
      ASSERT_EQ(got.size(), want.size());
      double dot = 0;  // both unit length
      for (std::size_t i = 0; i < got.size(); ++i) dot += got[i] * want[i];
      EXPECT_GT(dot, 0.999) << "text " << count;
      EXPECT_GT(max_abs_error(got, want), 1e-6) << "text " << count << ": as close as f32, so not bf16";
    }
    EXPECT_EQ(count, texts.size());
  } else {
    EXPECT_EQ(ran.exit_code, 3) << ran.out;
  }
  setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE", 1);
  ran = run("embed --device cpu --dtype bf16 " + in.string());
  unsetenv("ONEDNN_MAX_CPU_ISA");
  EXPECT_EQ(ran.exit_code, 3);
  EXPECT_NE(ran.out.find("(--dtype) is bf16"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("avx512_bf16 or AMX"), std::string::npos) << ran.out;
  ran = run("embed --device cpu --dtype f16 " + in.string());
  EXPECT_EQ(ran.exit_code, 3);
  EXPECT_NE(ran.out.find("computes in f32 or bf16"), std::string::npos) << ran.out;
  ran = run("embed --device cpu --dtype f64 " + in.string());
  EXPECT_NE(ran.exit_code, 0);
  EXPECT_NE(ran.out.find("--dtype"), std::string::npos) << ran.out;
}

TEST_F(EmbedCommandTest, NamesTheBadLineAndExitsWithItsCode) {
  Ran ran = run("embed --device cpu " + write("bad.txt", "fine\nalso fine\nbroken \xc3\x28 here\n").string());
  EXPECT_EQ(ran.exit_code, 5);
  EXPECT_NE(ran.out.find("line 3 is not valid UTF-8"), std::string::npos) << ran.out;
  ran = run("embed --device cpu " + write("bad.jsonl", "{\"text\": \"ok\"}\n{\"txt\": 1}\n").string());
  EXPECT_EQ(ran.exit_code, 5);
  EXPECT_NE(ran.out.find("line 2 is not a JSON object"), std::string::npos) << ran.out;
}

// Chunks of 512 texts go to the model one ahead of the one awaited: a chunk refused while the next is in flight still
// names its texts and ends the command, after the rows before it were written.
TEST_F(EmbedCommandTest, AChunkRefusedWhileTheNextIsInFlightNamesItsTexts) {
  std::string input;
  for (int i = 0; i < 1100; ++i) {
    std::string line = "sentence number " + std::to_string(i);
    if (i == 600)
      for (int word = 0; word < 400; ++word) line += " cat";
    input += line + "\n";
  }
  const std::filesystem::path out = dir_.path() / "out.jsonl";
  const Ran ran =
      run("embed --device cpu --truncate refuse -o " + out.string() + " " + write("long.txt", input).string());
  EXPECT_EQ(ran.exit_code, 1) << ran.out;
  EXPECT_NE(ran.out.find("texts 513..1024"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("text 88 is longer"), std::string::npos) << ran.out;
  std::ifstream written(out);
  std::size_t lines = 0;
  for (std::string line; std::getline(written, line);) ++lines;
  EXPECT_EQ(lines, 512u) << "the first chunk's rows, and no others";
}

TEST_F(EmbedCommandTest, MissingModelAndUnreadableInputHaveTheirOwnCodes) {
  Ran ran = run("embed --device cpu --model " + dir_.path().string() + " " + write("in.txt", "x\n").string());
  EXPECT_EQ(ran.exit_code, 3);
  EXPECT_NE(ran.out.find("no model at"), std::string::npos) << ran.out;
  ran = run("embed --device cpu " + (dir_.path() / "absent.txt").string());
  EXPECT_EQ(ran.exit_code, 4);
  EXPECT_NE(ran.out.find("cannot read"), std::string::npos) << ran.out;
}

}  // namespace
