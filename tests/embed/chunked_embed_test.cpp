// embed_in_chunks with a tokenizer and a device of its own: the chunks' whole runs handed on in order while the next
// chunk is tokenised, the rows gathered in order, and errors answered after every run handed on.
#include "embed/chunked_embed.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace accel::embed {
namespace {

// Text i tokenises to (i % 7) + 1 ids, each i; a run's row of each sequence is its first id.
Result<TokenBatch> tokenize(std::span<const std::string> texts, std::size_t first) {
  TokenBatch batch;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (texts[i] == "bad") return invalid_argument("text " + std::to_string(first + i) + " is bad");
    batch.append(std::vector<std::int32_t>((first + i) % 7 + 1, static_cast<std::int32_t>(first + i)));
  }
  return batch;
}

Future<Embeddings> ready(Result<Embeddings> value) {
  Promise<Embeddings> promise;
  Future<Embeddings> future = promise.future();
  promise.set(std::move(value));
  return future;
}

struct Device {
  std::vector<TokenBatch> submitted;
  std::size_t fail_at = SIZE_MAX;
  Future<Embeddings> submit(TokenBatch batch) {
    submitted.push_back(batch);
    if (submitted.size() - 1 == fail_at) return ready(internal_error("the device failed"));
    Embeddings out{.dimensions = 1, .values = {}, .tokens = {}};
    for (std::size_t s = 0; s < batch.sequences(); ++s) {
      out.values.push_back(static_cast<float>(batch.ids[batch.offsets[s]]));
      out.tokens.push_back(batch.length(s));
    }
    return ready(std::move(out));
  }
};

std::vector<std::string> texts_of(std::size_t count) { return std::vector<std::string>(count, "text"); }

// Three whole chunks and half of a fourth.
constexpr std::size_t kManyTexts = 3 * kChunkTexts + kChunkTexts / 2;

Result<Embeddings> run(Device& device, const std::vector<std::string>& texts, std::uint32_t batch_tokens) {
  return embed_in_chunks(texts, batch_tokens, tokenize, [&](TokenBatch b) { return device.submit(std::move(b)); })
      .wait();
}

TEST(ChunkedEmbed, HandsOnWholeRunsWhileTokenisingAndGathersEveryRowInOrder) {
  Device device;
  const std::vector<std::string> texts = texts_of(kManyTexts);
  Result<Embeddings> got = run(device, texts, 256);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(got->count(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(got->row(i)[0], static_cast<float>(i));
    EXPECT_EQ(got->tokens[i], i % 7 + 1);
  }
  ASSERT_EQ(device.submitted.size(), 4u);  // after each of the first three chunks, and the rest
  for (std::size_t k = 0; k + 1 < device.submitted.size(); ++k) {
    const TokenBatch& batch = device.submitted[k];
    // Whole runs only: split at 256 tokens, each of its runs is as full as the next sequence allows.
    std::uint32_t run = 0;
    for (std::size_t s = 0; s < batch.sequences(); ++s) {
      if (run + batch.length(s) > 256) {
        EXPECT_GT(run + 7, 256u) << "a run handed on before it was full";
        run = 0;
      }
      run += batch.length(s);
    }
  }
}

TEST(ChunkedEmbed, AFewTextsAreOneBatchAndNoneIsAnEmptyOne) {
  Device device;
  ASSERT_TRUE(run(device, texts_of(300), 256).ok());
  EXPECT_EQ(device.submitted.size(), 1u);
  EXPECT_EQ(device.submitted[0].sequences(), 300u);
  Device empty;
  Result<Embeddings> none = run(empty, {}, 256);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->count(), 0u);
  EXPECT_EQ(empty.submitted.size(), 1u);
}

TEST(ChunkedEmbed, ATokenisingErrorStopsTheCallAndIsAnsweredAfterTheRunsHandedOn) {
  Device device;
  std::vector<std::string> texts = texts_of(kManyTexts);
  const std::size_t bad = 2 * kChunkTexts + kChunkTexts / 3;  // in the third chunk
  texts[bad] = "bad";
  Result<Embeddings> got = run(device, texts, 256);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(), "text " + std::to_string(bad) + " is bad");
  EXPECT_EQ(device.submitted.size(), 2u);  // the first two chunks' runs, nothing after the error
}

TEST(ChunkedEmbed, ARunsErrorIsTheCallsAndEveryPartIsStillAwaited) {
  Device device;
  device.fail_at = 1;
  Result<Embeddings> got = run(device, texts_of(kManyTexts), 256);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.code(), Code::internal);
  EXPECT_EQ(device.submitted.size(), 4u);
}

}  // namespace
}  // namespace accel::embed
