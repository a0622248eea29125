// SafetensorsFile against files the tests write: well-formed ones (read back exactly, at any alignment) and
// damaged ones, each of which must be refused with an error naming the file and the tensor, never a crash.
#include "embed/safetensors_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "embed/safetensors_writer.hpp"
#include "testing/scratch_directory.hpp"

namespace accel::embed {
namespace {

using ::testing::HasSubstr;
using testing::le64;

template <class T>
std::string bytes_of(std::initializer_list<T> values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  std::memcpy(bytes.data(), std::data(values), bytes.size());
  return bytes;
}

class SafetensorsFileTest : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& contents) {
    const std::filesystem::path path = dir_.path() / ("file" + std::to_string(files_++) + ".safetensors");
    std::ofstream(path, std::ios::binary) << contents;
    return path;
  }
  // A file as a writer would make it: the header's own length, then the header, then the data.
  std::filesystem::path write(const std::string& header, const std::string& data) {
    return write(le64(header.size()) + header + data);
  }

  // Opening must fail with invalid_argument, and the message must name the file and say each of `parts`.
  void expect_refused(const std::filesystem::path& path, std::initializer_list<std::string> parts) {
    const Result<SafetensorsFile> file = SafetensorsFile::open(path);
    ASSERT_FALSE(file.ok());
    EXPECT_EQ(file.code(), Code::invalid_argument);
    EXPECT_THAT(std::string(file.status().message()), HasSubstr(path.native()));
    for (const std::string& part : parts) EXPECT_THAT(std::string(file.status().message()), HasSubstr(part));
  }

  testing::ScratchDirectory dir_{"safetensors_file_test"};
  int files_ = 0;
};

TEST_F(SafetensorsFileTest, ReadsTensorsMetadataAndConvertsAtAnyAlignment) {
  const std::string data = bytes_of<float>({1.0f, -2.5f, 3.25f, 1e-3f, 5.0f, 6.0f}) +
                           bytes_of<std::uint16_t>({0x3c00, 0xc000}) +  // f16 1, -2
                           bytes_of<std::int64_t>({7, 8});
  // Padded with spaces (as the format allows) so that the data starts 5 bytes past a multiple of 8, misaligned
  // for every element type wider than a byte.
  std::string header =
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
      R"("h":{"dtype":"F16","shape":[2],"data_offsets":[24,28]},"ids":{"dtype":"I64","shape":[1,2],"data_offsets":[28,44]}})";
  while ((8 + header.size()) % 8 != 5) header += ' ';
  const Result<SafetensorsFile> file = SafetensorsFile::open(write(header, data));
  ASSERT_TRUE(file.ok()) << file.status().to_string();

  EXPECT_THAT(file->names(), ::testing::ElementsAre("h", "ids", "w"));
  EXPECT_EQ(file->metadata().at("format"), "pt");
  const Result<TensorView> w = file->tensor("w");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->dtype, StoredDType::f32);
  EXPECT_THAT(std::vector<std::uint64_t>(w->shape.begin(), w->shape.end()), ::testing::ElementsAre(2, 3));
  EXPECT_EQ(w->elements(), 6u);
  EXPECT_EQ(w->bytes.size(), 24u);

  EXPECT_THAT(*file->to_f32("w"), ::testing::ElementsAre(1.0f, -2.5f, 3.25f, 1e-3f, 5.0f, 6.0f));
  EXPECT_THAT(*file->to_f32("h"), ::testing::ElementsAre(1.0f, -2.0f));
  EXPECT_THAT(*file->to_16bit("h", DType::f16), ::testing::ElementsAre(0x3c00, 0xc000));  // bit for bit
  EXPECT_THAT(*file->to_16bit("h", DType::bf16), ::testing::ElementsAre(0x3f80, 0xc000));
  EXPECT_THAT(*file->to_16bit("w", DType::f16),
              ::testing::ElementsAre(0x3c00, 0xc100, 0x4280, to_half(1e-3f).bits, 0x4500, 0x4600));

  const Result<TensorView> ids = file->tensor("ids");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->dtype, StoredDType::i64);
  EXPECT_FALSE(to_dtype(ids->dtype).has_value());
  EXPECT_THAT(std::string(file->to_f32("ids").status().message()), HasSubstr("'ids': is I64, not a float type"));
  EXPECT_EQ(file->to_16bit("w", DType::f32).code(), Code::invalid_argument);

  const Result<TensorView> missing = file->tensor("nope");
  EXPECT_EQ(missing.code(), Code::invalid_argument);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("'nope': no such tensor"));
}

TEST_F(SafetensorsFileTest, EmptyAndScalarTensorsAndAnEmptyHeaderAreFine) {
  const Result<SafetensorsFile> file = SafetensorsFile::open(
      write(R"({"e":{"dtype":"F32","shape":[0,4],"data_offsets":[4,4]},"s":{"dtype":"F32","shape":[],)"
            R"("data_offsets":[0,4]}})",
            bytes_of<float>({42.0f})));
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_TRUE(file->to_f32("e")->empty());
  EXPECT_THAT(*file->to_f32("s"), ::testing::ElementsAre(42.0f));
  EXPECT_TRUE(SafetensorsFile::open(write("{}", "")).ok());
}

TEST_F(SafetensorsFileTest, RefusesAValuePastF16sRangeRatherThanMakingAnInfinity) {
  const Result<SafetensorsFile> file = SafetensorsFile::open(
      write(R"({"big":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", bytes_of<float>({1.0f, 1e6f})));
  ASSERT_TRUE(file.ok());
  const auto half = file->to_16bit("big", DType::f16);
  EXPECT_EQ(half.code(), Code::invalid_argument);
  EXPECT_THAT(std::string(half.status().message()), HasSubstr("element 1"));
  EXPECT_TRUE(file->to_16bit("big", DType::bf16).ok());
}

TEST_F(SafetensorsFileTest, ConvertsSomeElementsFromAnyOneAndRefusesARangePastTheEnd) {
  const Result<SafetensorsFile> file = SafetensorsFile::open(
      write(R"({"w":{"dtype":"F32","shape":[3,2],"data_offsets":[0,24]},"h":{"dtype":"F16","shape":[3],)"
            R"("data_offsets":[24,30]}})",
            bytes_of<float>({1.0f, 2.0f, 3.0f, 1e6f, 5.0f, 6.0f}) + bytes_of<std::uint16_t>({0x3c00, 0xc000, 0x4000})));
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  std::vector<float> rows(2);
  ASSERT_TRUE(file->copy_f32("w", 4, rows).ok());
  EXPECT_THAT(rows, ::testing::ElementsAre(5.0f, 6.0f));
  std::vector<std::uint16_t> bits(2);
  ASSERT_TRUE(file->copy_16bit("h", DType::f16, 1, bits).ok());
  EXPECT_THAT(bits, ::testing::ElementsAre(0xc000, 0x4000));  // bit for bit
  ASSERT_TRUE(file->copy_16bit("w", DType::bf16, 0, bits).ok());
  EXPECT_THAT(bits, ::testing::ElementsAre(0x3f80, 0x4000));
  const Status overflow = file->copy_16bit("w", DType::f16, 2, bits);
  EXPECT_THAT(std::string(overflow.message()), HasSubstr("element 3 (1000000) is out of f16's range"));
  const Status past = file->copy_f32("w", 5, rows);
  EXPECT_EQ(past.code(), Code::invalid_argument);
  EXPECT_THAT(std::string(past.message()), HasSubstr("'w': has 6 elements, not 2 from element 5"));
  EXPECT_EQ(file->copy_f32("w", 7, std::span<float>()).code(), Code::invalid_argument);
  // The whole-tensor forms still want the tensor's exact size.
  EXPECT_EQ(file->copy_f32("w", rows).code(), Code::invalid_argument);
}

TEST_F(SafetensorsFileTest, RefusesMissingAndTruncatedFiles) {
  expect_refused(dir_.path() / "absent.safetensors", {"cannot open"});
  expect_refused(write(""), {"shorter than the 8-byte header length"});
  expect_refused(write(std::string("\x10\0\0", 3)), {"shorter than the 8-byte header length"});
  const std::string header = R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
  const std::string whole = le64(header.size()) + header + bytes_of<float>({1, 2, 3, 4});
  expect_refused(write(whole.substr(0, whole.size() - 3)), {"tensor 'w'", "run past the data region (13 bytes)"});
  expect_refused(write(whole.substr(0, 20)), {"runs past the end of the file (20 bytes)"});
}

TEST_F(SafetensorsFileTest, RefusesHeaderLengthsPastTheFileOrTheCap) {
  expect_refused(write(le64(1000) + "{}"), {"header length 1000 runs past the end of the file (10 bytes)"});
  expect_refused(write(le64(~std::uint64_t{0}) + "{}"), {"exceeds the cap"});
  expect_refused(write(le64(SafetensorsFile::kMaxHeaderBytes + 1) + "{}"), {"exceeds the cap"});
}

TEST_F(SafetensorsFileTest, RefusesMalformedHeaders) {
  expect_refused(write(R"({"w":{"dtype":"F32",)", ""), {"not valid JSON"});
  expect_refused(write("\xff\xfe garbage", ""), {"not valid JSON"});
  expect_refused(write(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}} trailing)", "abcd"),
                 {"not valid JSON"});
  expect_refused(write(R"(["w"])", ""), {"not a JSON object"});
  expect_refused(write(R"({"w":[1,2]})", ""), {"tensor 'w': is not an object"});
  expect_refused(write(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", "abcd"), {"'w'", "no dtype"});
  expect_refused(write(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", "abcd"), {"'w'", "no shape"});
  expect_refused(write(R"({"w":{"dtype":"F32","shape":[1]}})", "abcd"), {"'w'", "data_offsets"});
  expect_refused(write(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", "abcd"), {"'w'", "data_offsets"});
  expect_refused(write(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,-4]}})", "abcd"), {"'w'", "data_offsets"});
  expect_refused(write(R"({"__metadata__":{"n":1}})", ""), {"__metadata__ 'n' is not a string"});
  expect_refused(write(R"({"":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", "abcd"), {"empty name"});
}

TEST_F(SafetensorsFileTest, RefusesUnsupportedDtypesByName) {
  for (const std::string dtype : {"BOOL", "F8_E5M2", "U64", "f32", "Q4"})
    expect_refused(write(R"({"w":{"dtype":")" + dtype + R"(","shape":[1],"data_offsets":[0,1]}})", "a"),
                   {"tensor 'w'", "dtype " + dtype + " is not supported"});
}

TEST_F(SafetensorsFileTest, RefusesNamesGivenTwice) {
  expect_refused(write(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                       R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                       bytes_of<float>({1, 2})),
                 {"tensor 'w'", "more than once"});
  expect_refused(write(R"({"w":{"dtype":"F32","shape":[1],"shape":[2],"data_offsets":[0,4]}})", "abcd"),
                 {"'shape'", "more than once"});
}

TEST_F(SafetensorsFileTest, RefusesBadShapes) {
  expect_refused(write(R"({"w":{"dtype":"F32","shape":[-1,4],"data_offsets":[0,4]}})", "abcd"),
                 {"tensor 'w'", "holds -1, not a non-negative integer"});
  expect_refused(write(R"({"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", "abcd"),
                 {"tensor 'w'", "not a non-negative integer"});
  expect_refused(write(R"({"w":{"dtype":"F32","shape":[99999999999999999999999],"data_offsets":[0,4]}})", "abcd"),
                 {"tensor 'w'", "not a non-negative integer"});
  expect_refused(write(R"({"w":{"dtype":"F32","shape":["4"],"data_offsets":[0,4]}})", "abcd"),
                 {"tensor 'w'", "not a non-negative integer"});
  expect_refused(write(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", "abcd"),
                 {"tensor 'w'", "more elements than 2^64"});
  expect_refused(write(R"({"w":{"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,4]}})", "abcd"),
                 {"tensor 'w'", "more bytes than 2^64"});
  // A zero among huge extents: no overflow, no bytes, but still the wrong size for four bytes of data.
  expect_refused(write(R"({"w":{"dtype":"F32","shape":[18446744073709551615,0],"data_offsets":[0,4]}})", "abcd"),
                 {"tensor 'w'", "hold 4 bytes", "needs 0"});
}

TEST_F(SafetensorsFileTest, RefusesSizesThatDoNotMatchTheShape) {
  expect_refused(write(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})", std::string(16, 'x')),
                 {"tensor 'w'", "data_offsets [0, 12] hold 12 bytes, but shape [2,2] of F32 needs 16"});
  expect_refused(write(R"({"w":{"dtype":"BF16","shape":[3],"data_offsets":[0,4]}})", std::string(16, 'x')),
                 {"tensor 'w'", "needs 6"});
}

TEST_F(SafetensorsFileTest, RefusesOffsetsOutsideTheDataOrBackwards) {
  expect_refused(write(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", std::string(8, 'x')),
                 {"tensor 'w'", "[4, 12] run past the data region (8 bytes)"});
  expect_refused(write(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[18446744073709551612,0]}})", "abcd"),
                 {"tensor 'w'", "end before they begin"});
  expect_refused(
      write(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[18446744073709551612,18446744073709551616]}})", "abcd"),
      {"tensor 'w'", "data_offsets is not two non-negative integers"});
}

TEST_F(SafetensorsFileTest, RefusesOverlappingTensors) {
  expect_refused(write(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                       R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                       std::string(12, 'x')),
                 {"tensor 'b'", "overlap tensor 'a' [0, 8]"});
  // One tensor inside another, listed first, and an alias of exactly the same bytes.
  expect_refused(write(R"({"z":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},)"
                       R"("a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
                       std::string(16, 'x')),
                 {"tensor 'z'", "overlap tensor 'a'"});
  expect_refused(write(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                       R"("b":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})",
                       "abcd"),
                 {"overlap"});
}

// Damage the tests above did not think of: random bytes overwritten, or the file cut anywhere. Each open either
// succeeds or fails cleanly; whatever opens can be read in full.
TEST_F(SafetensorsFileTest, SurvivesRandomDamage) {
  const std::string header = R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,2],)"
                             R"("data_offsets":[0,16]},"b":{"dtype":"BF16","shape":[3],"data_offsets":[16,22]}})";
  const std::string whole = le64(header.size()) + header + std::string(22, '\x3f');
  std::mt19937 random(1234);
  for (int round = 0; round < 1500; ++round) {
    std::string damaged = whole;
    if (round % 3 == 0) {
      damaged.resize(random() % whole.size());
    } else {
      for (int n = 1 + static_cast<int>(random() % 4); n > 0; --n)
        damaged[random() % damaged.size()] = static_cast<char>(random() % 256);
    }
    const std::filesystem::path path = dir_.path() / "damaged.safetensors";
    std::ofstream(path, std::ios::binary | std::ios::trunc) << damaged;
    const Result<SafetensorsFile> file = SafetensorsFile::open(path);
    if (!file.ok()) {
      EXPECT_EQ(file.code(), Code::invalid_argument);
      continue;
    }
    for (std::string_view name : file->names()) {
      const Result<TensorView> view = file->tensor(name);
      ASSERT_TRUE(view.ok());
      if (is_float(view->dtype)) {
        EXPECT_TRUE(file->to_f32(name).ok());
      }
    }
  }
}

}  // namespace
}  // namespace accel::embed
