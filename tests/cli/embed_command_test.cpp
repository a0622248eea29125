// `accel embed` run as a program: its output and its exit codes for a missing model, an unreadable input and a
// line that is not valid UTF-8.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "testing/scratch_directory.hpp"

namespace {

const std::filesystem::path kModel = ACCEL_TEST_MODEL_FOLDER;

struct Ran {
  int exit_code = -1;
  std::string out;
};

Ran run(const std::string& arguments) {
  const std::string command = std::string(ACCEL_CLI) + " " + arguments + " 2>&1";
  Ran ran;
  FILE* pipe = popen(command.c_str(), "r");
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) ran.out.append(buffer, n);
  const int status = pclose(pipe);
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

class EmbedCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kModel / "model.safetensors")) GTEST_SKIP() << "no model folder at " << kModel;
  }
  std::filesystem::path write(const std::string& name, const std::string& contents) {
    const std::filesystem::path path = dir_.path() / name;
    std::ofstream(path, std::ios::binary) << contents;
    return path;
  }
  accel::testing::ScratchDirectory dir_{"embed-command"};
};

TEST_F(EmbedCommandTest, EmbedsEachLineAsOneJsonObject) {
  const Ran ran = run("embed --device cpu " + write("in.txt", "first line\nsecond line\n\nlast\n").string());
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  std::istringstream lines(ran.out);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    EXPECT_TRUE(line.starts_with("{\"index\":" + std::to_string(count) + ",")) << line.substr(0, 80);
    ++count;
  }
  EXPECT_EQ(count, 4);
}

TEST_F(EmbedCommandTest, ReadsJsonlAndWritesNpy) {
  const std::filesystem::path out = dir_.path() / "out.npy";
  const Ran ran = run("embed --device cpu -o " + out.string() + " " +
                      write("in.jsonl", "{\"text\": \"one\"}\n{\"text\": \"two\", \"id\": 7}\n").string());
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  EXPECT_EQ(std::filesystem::file_size(out), 128u + 2 * 384 * 4);
}

TEST_F(EmbedCommandTest, NamesTheBadLineAndExitsWithItsCode) {
  Ran ran = run("embed --device cpu " + write("bad.txt", "fine\nalso fine\nbroken \xc3\x28 here\n").string());
  EXPECT_EQ(ran.exit_code, 5);
  EXPECT_NE(ran.out.find("line 3 is not valid UTF-8"), std::string::npos) << ran.out;
  ran = run("embed --device cpu " + write("bad.jsonl", "{\"text\": \"ok\"}\n{\"txt\": 1}\n").string());
  EXPECT_EQ(ran.exit_code, 5);
  EXPECT_NE(ran.out.find("line 2 is not a JSON object"), std::string::npos) << ran.out;
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
