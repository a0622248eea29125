// How a call is cut into runs: the default budget per device and model width, and split_runs' cuts.
#include "embed/run_split.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "accel/embed/model.hpp"
#include "accel/graph/graph.hpp"

namespace accel::embed {
namespace {

std::vector<std::uint32_t> offsets_of(const std::vector<std::uint32_t>& lengths) {
  std::vector<std::uint32_t> offsets{0};
  for (std::uint32_t length : lengths) offsets.push_back(offsets.back() + length);
  return offsets;
}

// Each run's tokens, from split_runs' starts.
std::vector<std::uint32_t> run_tokens(const std::vector<std::uint32_t>& offsets,
                                      const std::vector<std::size_t>& starts) {
  std::vector<std::uint32_t> tokens;
  for (std::size_t i = 0; i + 1 < starts.size(); ++i) tokens.push_back(offsets[starts[i + 1]] - offsets[starts[i]]);
  return tokens;
}

TEST(DefaultBatchTokens, TheCpuRuns16384AndAGpuAsManyAsFit48MiBOfHiddenStates) {
  EXPECT_EQ(default_batch_tokens(256, 384, DeviceKind::cpu), 16384u);
  EXPECT_EQ(default_batch_tokens(512, 4096, DeviceKind::cpu), 16384u);
  EXPECT_EQ(default_batch_tokens(256, 384, DeviceKind::cuda), 65536u);  // all-MiniLM-L6-v2: 48 MiB exactly
  EXPECT_EQ(default_batch_tokens(512, 512, DeviceKind::cuda), 32768u);
  EXPECT_EQ(default_batch_tokens(512, 768, DeviceKind::cuda), 32768u);   // BERT-base
  EXPECT_EQ(default_batch_tokens(256, 1024, DeviceKind::cuda), 16384u);  // Qwen3-0.6B
  EXPECT_EQ(default_batch_tokens(256, 4096, DeviceKind::cuda), 16384u);
  EXPECT_EQ(default_batch_tokens(256, 0, DeviceKind::cuda), 65536u);
}

TEST(DefaultBatchTokens, IsNeverBelowTheModelsLongestSequence) {
  EXPECT_EQ(default_batch_tokens(32768, 1024, DeviceKind::cuda), 32768u);
  EXPECT_EQ(default_batch_tokens(32768, 1024, DeviceKind::cpu), 32768u);
  EXPECT_EQ(default_batch_tokens(131072, 384, DeviceKind::cuda), 131072u);
}

TEST(SplitRuns, WithoutRungsFillsEveryRunToTheBudget) {
  const auto offsets = offsets_of(std::vector<std::uint32_t>(10, 100));
  const auto starts = split_runs(offsets, 250, 1000, {});
  EXPECT_EQ(starts, (std::vector<std::size_t>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(split_runs(offsets, 250, 3, {}).size(), 6u);
  EXPECT_EQ(split_runs(offsets, 1000, 3, {}), (std::vector<std::size_t>{0, 3, 6, 9, 10}));
}

TEST(SplitRuns, CutsTheTokensLeftOnceAtTheRungBelowWhenTheirLargeRungWouldStayMostlyEmpty) {
  const auto rungs = graph::Ladder::powers_of_two(64, 65536).rungs;
  // 40,000 tokens under 65,536: one run would pad 25,536 tokens; cut at 32,768, the rest padded to 8,192.
  const auto offsets = offsets_of(std::vector<std::uint32_t>(400, 100));
  const auto tokens = run_tokens(offsets, split_runs(offsets, 65536, 1u << 20, rungs));
  EXPECT_EQ(tokens, (std::vector<std::uint32_t>{32700, 7300}));
  // A run that fills three quarters of its rung or more is not cut: 60,000 tokens in one run of 65,536.
  const auto full = offsets_of(std::vector<std::uint32_t>(600, 100));
  EXPECT_EQ(run_tokens(full, split_runs(full, 65536, 1u << 20, rungs)), (std::vector<std::uint32_t>{60000}));
  // Tokens left that run at 16,384 or below are not cut: 9,000 in one run.
  const auto few = offsets_of(std::vector<std::uint32_t>(90, 100));
  EXPECT_EQ(run_tokens(few, split_runs(few, 65536, 1u << 20, rungs)), (std::vector<std::uint32_t>{9000}));
  // Full runs first, then the remainder cut: 150,000 tokens are 65,500 + 65,500 + 16,300 + 2,700.
  const auto many = offsets_of(std::vector<std::uint32_t>(1500, 100));
  EXPECT_EQ(run_tokens(many, split_runs(many, 65536, 1u << 20, rungs)),
            (std::vector<std::uint32_t>{65500, 65500, 16300, 2700}));
}

TEST(SplitRuns, KeepsEverySequenceWholeInOrderAndEveryRunWithinItsBudget) {
  const auto rungs = graph::Ladder::powers_of_two(64, 16384).rungs;
  std::vector<std::uint32_t> lengths;
  for (std::uint32_t i = 0; i < 3000; ++i) lengths.push_back(1 + (i * 7919u) % 512);
  const auto offsets = offsets_of(lengths);
  for (const auto& ladder : {rungs, std::vector<std::int64_t>{}}) {
    const auto starts = split_runs(offsets, 16384, 700, ladder);
    ASSERT_GE(starts.size(), 2u);
    EXPECT_EQ(starts.front(), 0u);
    EXPECT_EQ(starts.back(), lengths.size());
    for (std::size_t i = 0; i + 1 < starts.size(); ++i) {
      EXPECT_LT(starts[i], starts[i + 1]);
      EXPECT_LE(starts[i + 1] - starts[i], 700u);
      EXPECT_LE(offsets[starts[i + 1]] - offsets[starts[i]], 16384u);
    }
  }
  // A sequence runs whole even where the tokens left are few.
  const auto one = offsets_of({300});
  EXPECT_EQ(split_runs(one, 16384, 10, rungs), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(split_runs(offsets_of({}), 16384, 10, rungs), (std::vector<std::size_t>{0}));
}

TEST(TokenVectorRuns, HoldThePowerOfTwoTokensWhoseRowsFit2To24Floats) {
  EXPECT_EQ(token_vector_run_tokens(384, 65536, 256), 32768u);  // 43,690 would fit, but pad to 65,536 on a GPU
  EXPECT_EQ(token_vector_run_tokens(384, 16384, 256), 16384u);  // the budget first
  EXPECT_EQ(token_vector_run_tokens(768, 32768, 512), 16384u);
  EXPECT_EQ(token_vector_run_tokens(1024, 16384, 256), 16384u);
  EXPECT_EQ(token_vector_run_tokens(4096, 16384, 256), 4096u);
  EXPECT_EQ(token_vector_run_tokens(1024, 32768, 32768), 32768u);  // yet always the longest sequence
  EXPECT_EQ(token_vector_run_tokens(0, 65536, 256), 65536u);
}

}  // namespace
}  // namespace accel::embed
