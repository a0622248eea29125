// The quantised encodings (embedding_codec.hpp) against a reference written as sentence-transformers'
// quantize_embeddings computes them with numpy (packbits, astype), and through POST /v1/embeddings over HTTP.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "serve/embedding_codec.hpp"
#include "serve/routes_fixture.hpp"

namespace accel::serve {
namespace {

// numpy.packbits(row > 0): the first value in the most significant bit, the last byte padded with zeros.
std::vector<int> packbits_reference(const std::vector<float>& row) {
  std::vector<int> bytes((row.size() + 7) / 8, 0);
  for (std::size_t i = 0; i < row.size(); ++i)
    if (row[i] > 0) bytes[i / 8] += 1 << (7 - i % 8);
  return bytes;
}

// quantize_embeddings(rows, "uint8" or "int8", ranges=[[-1] * d, [1] * d]): ((x - start) / step [- 128]).astype(),
// astype truncating toward zero; out-of-range values clamped (numpy would wrap them).
int scaled_reference(float x, bool signed_byte) {
  const double starts = -1.0, steps = (1.0 - -1.0) / 255;
  double v = (static_cast<double>(x) - starts) / steps;
  if (signed_byte) v -= 128;
  const double t = std::trunc(v);
  return static_cast<int>(signed_byte ? std::fmin(std::fmax(t, -128), 127) : std::fmin(std::fmax(t, 0), 255));
}

std::vector<int> as_ints(const std::vector<std::int16_t>& values) { return {values.begin(), values.end()}; }

TEST(QuantizedEmbeddings, BinaryPacksSignBitsAsNumpyPackbits) {
  // 11 dimensions: one full byte, then three bits and five bits of padding; zero is not positive.
  const std::vector<float> row{0.5f, -0.1f, 0.0f, 2.0f, 1e-9f, -3.0f, 0.25f, 0.75f, 0.1f, -0.2f, 0.3f};
  // 1 0 0 1 1 0 1 1 = 0x9B = 155; 1 0 1 then 00000 = 0xA0 = 160.
  EXPECT_EQ(as_ints(quantize_row(row, Encoding::ubinary)), (std::vector<int>{155, 160}));
  EXPECT_EQ(as_ints(quantize_row(row, Encoding::binary)), (std::vector<int>{27, 32}));
  EXPECT_EQ(as_ints(quantize_row(row, Encoding::ubinary)), packbits_reference(row));
}

TEST(QuantizedEmbeddings, Int8AndUint8ScaleTheRangeMinusOneToOneAsQuantizeEmbeddings) {
  std::vector<float> row;
  for (int i = -130; i <= 130; ++i) row.push_back(static_cast<float>(i) / 127.0f);  // beyond [-1, 1] at both ends
  row.insert(row.end(), {-1.0f, 1.0f, 0.0f, 0.003921569f, -0.003921569f});
  const std::vector<int> uint8 = as_ints(quantize_row(row, Encoding::uint8));
  const std::vector<int> int8 = as_ints(quantize_row(row, Encoding::int8));
  ASSERT_EQ(uint8.size(), row.size());
  ASSERT_EQ(int8.size(), row.size());
  for (std::size_t i = 0; i < row.size(); ++i) {
    EXPECT_EQ(uint8[i], scaled_reference(row[i], false)) << row[i];
    EXPECT_EQ(int8[i], scaled_reference(row[i], true)) << row[i];
  }
  EXPECT_EQ(uint8[row.size() - 5], 0);
  EXPECT_EQ(uint8[row.size() - 4], 255);
  EXPECT_EQ(int8[row.size() - 5], -128);
  EXPECT_EQ(int8[row.size() - 4], 127);
  EXPECT_EQ(int8[row.size() - 3], 0) << "127.5 - 128 truncates to 0, not -1";
}

TEST(QuantizedEmbeddings, EncodingNamesAreOpenAiCohereAndVllms) {
  EXPECT_EQ(encoding_named("float"), Encoding::float32);
  EXPECT_EQ(encoding_named("base64"), Encoding::base64);
  EXPECT_EQ(encoding_named("ubinary"), Encoding::ubinary);
  EXPECT_FALSE(encoding_named("int4").has_value());
  std::string out;
  append_encoded_row(out, std::vector<float>{0.5f, -0.5f}, Encoding::int8);
  EXPECT_EQ(out, "[63,-64]");
}

TEST_F(RoutesTest, OpenAiEmbeddingsAnswerEachQuantisedEncodingOfTheFloatRows) {
  serve("bert_mean_dense_norm");
  const json texts = references().at("texts");
  auto [status, body] = post("/v1/embeddings", {{"input", texts}, {"truncate", true}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  for (const auto& [name, encoding] :
       {std::pair{"int8", Encoding::int8}, std::pair{"uint8", Encoding::uint8}, std::pair{"binary", Encoding::binary},
        std::pair{"ubinary", Encoding::ubinary}}) {
    auto [quantized_status, quantized] =
        post("/v1/embeddings", {{"input", texts}, {"truncate", true}, {"encoding_format", name}});
    ASSERT_EQ(quantized_status, 200) << name << quantized.dump().substr(0, 300);
    ASSERT_EQ(quantized["data"].size(), texts.size());
    EXPECT_EQ(quantized["usage"], body["usage"]);
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const auto row = body["data"][i]["embedding"].get<std::vector<float>>();
      std::vector<int> expected;
      if (encoding == Encoding::int8 || encoding == Encoding::uint8) {
        for (float x : row) expected.push_back(scaled_reference(x, encoding == Encoding::int8));
      } else {
        expected = packbits_reference(row);
        if (encoding == Encoding::binary)
          for (int& byte : expected) byte -= 128;
      }
      EXPECT_EQ(quantized["data"][i]["embedding"].get<std::vector<int>>(), expected) << name << " input " << i;
    }
  }
}

}  // namespace
}  // namespace accel::serve
