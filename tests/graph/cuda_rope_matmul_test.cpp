// The packed projection fused with its rope (cuda_rope_matmul.cu) against the product in double, rounded to the
// storage type, then the CPU's rope (cpu::rope, with the same q/k norms): Qwen3-0.6B's heads with norms, Qwen2-style
// heads with a bias and no norms, heads of 64 whose tiles span q and k heads and end past the columns; rows that fill
// no tile and several waves; positions across a 32K context; nothing written past the output; what it refuses.
// Skipped without a GPU; on a GPU other than sm_90 it must refuse the device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "graph/kernels/cpu_kernels.hpp"
#include "graph/kernels/cuda_rope_matmul.hpp"
#include "testing/cuda_kernel_buffers.hpp"
#include "testing/kernel_inputs.hpp"

namespace accel::graph {
namespace {

using testing::Buffer;
using testing::CudaKernels;
using testing::random;
using testing::rounded;

struct Case {
  std::int64_t rows, k;
  int heads, kv_heads, head_dim;
  bool normed, biased;
};

class CudaRopeMatmul : public CudaKernels {
 protected:
  void check(DType dtype, const Case& c, cuda::TileSchedule schedule = {}) {
    SCOPED_TRACE(::testing::Message() << to_string(dtype) << ", " << c.rows << " rows, k " << c.k << ", " << c.heads
                                      << "+" << c.kv_heads << " heads of " << c.head_dim << (c.normed ? ", normed" : "")
                                      << (c.biased ? ", biased" : "") << ", swizzle " << schedule.swizzle
                                      << ", variant " << schedule.variant);
    const std::int64_t columns = std::int64_t{c.heads + 2 * c.kv_heads} * c.head_dim;
    const std::vector<float> x = rounded(random(c.rows * c.k, -1.0f, 1.0f), dtype);
    const float bound = 2.0f / std::sqrt(static_cast<float>(c.k));
    const std::vector<float> w = rounded(random(columns * c.k, -bound, bound), dtype);
    const std::vector<float> bias = rounded(random(columns, -0.5f, 0.5f), dtype);
    const std::vector<float> q_gamma = rounded(random(c.head_dim, 0.5f, 1.5f), dtype);
    const std::vector<float> k_gamma = rounded(random(c.head_dim, 0.5f, 1.5f), dtype);
    std::vector<std::int32_t> positions(static_cast<std::size_t>(c.rows));
    for (std::size_t r = 0; r < positions.size(); ++r) positions[r] = static_cast<std::int32_t>((r * 7919) % 32768);
    const Buffer dx(dtype, x), dw(dtype, w), db(dtype, bias), dq(dtype, q_gamma), dk(dtype, k_gamma);
    const Buffer dp = Buffer::of_ints(positions);
    constexpr std::int64_t kGuard = 64;
    const Buffer y(dtype, c.rows * columns + kGuard);
    const cuda::RopeMatmulHeads heads{.heads = c.heads,
                                      .kv_heads = c.kv_heads,
                                      .head_dim = c.head_dim,
                                      .theta = 1e6f,
                                      .positions = dp.get<std::int32_t>(),
                                      .query_norm = c.normed ? dq.get() : nullptr,
                                      .key_norm = c.normed ? dk.get() : nullptr,
                                      .eps = 1e-6f};
    finish(cuda::rope_matmul(dtype, dx.get(), dw.get(), c.biased ? db.get() : nullptr, c.rows, c.k, heads, y.get(),
                             stream_, schedule));
    if (HasFatalFailure()) return;
    const std::vector<float> actual = y.read();
    for (std::int64_t i = 0; i < c.rows * columns; ++i)
      ASSERT_TRUE(std::isfinite(actual[i])) << "row " << i / columns << " column " << i % columns << " not written";
    for (std::int64_t i = 0; i < kGuard; ++i)
      ASSERT_TRUE(std::isnan(actual[c.rows * columns + i])) << "written past the output at " << i;
    // Every 7th row and the last: the product in double, rounded as the device stores it, then the CPU's rope.
    std::vector<std::int64_t> sampled;
    for (std::int64_t r = 0; r < c.rows; r += 7) sampled.push_back(r);
    if (sampled.back() != c.rows - 1) sampled.push_back(c.rows - 1);
    std::vector<float> product(sampled.size() * columns), sampled_actual(product.size());
    std::vector<std::int32_t> sampled_positions;
    for (std::size_t s = 0; s < sampled.size(); ++s) {
      const std::int64_t r = sampled[s];
      sampled_positions.push_back(positions[static_cast<std::size_t>(r)]);
      for (std::int64_t j = 0; j < columns; ++j) {
        double sum = c.biased ? bias[j] : 0.0;
        for (std::int64_t q = 0; q < c.k; ++q) sum += double{x[r * c.k + q]} * w[j * c.k + q];
        product[s * columns + j] = static_cast<float>(sum);
        sampled_actual[s * columns + j] = actual[r * columns + j];
      }
    }
    product = rounded(product, dtype);
    std::vector<float> expected(product.size());
    cpu::rope(product.data(), sampled_positions.data(), static_cast<std::int64_t>(sampled.size()),
              {.heads = c.heads,
               .kv_heads = c.kv_heads,
               .head_dim = c.head_dim,
               .query_norm = c.normed ? q_gamma.data() : nullptr,
               .key_norm = c.normed ? k_gamma.data() : nullptr,
               .eps = 1e-6f},
              1e6f, expected.data());
    testing::expect_close(sampled_actual, expected, dtype, "projection with its rope");
  }
};

TEST_F(CudaRopeMatmul, MatchesTheProductThenTheRope) {
  if (!cuda::sm90a_runs_here()) GTEST_SKIP() << "sm_90a code only (its refusal elsewhere: RefusesWhatItCannotRun)";
  // Qwen3-0.6B's (several waves of tiles, and one partial tile of rows); Qwen2-style with a bias; heads of 64 whose
  // tiles hold q and k heads together and whose last tile ends past the columns; a single row.
  const Case cases[] = {{2500, 1024, 16, 8, 128, true, false},
                        {130, 1024, 16, 8, 128, true, false},
                        {300, 256, 12, 2, 128, false, true},
                        {200, 64, 6, 2, 64, true, true},
                        {1, 128, 3, 1, 64, false, false}};
  for (const int variant : {0, 1, 2, 3, 4, 5, 6, 7})
    for (const DType dtype : {DType::bf16, DType::f16})
      for (const Case& c : cases) {
        check(dtype, c, {.variant = variant});
        if (HasFatalFailure()) return;
      }
  for (const int swizzle : {2, 8}) {
    check(DType::bf16, cases[0], {.swizzle = swizzle, .raster = cuda::TileRaster::along_n});
    if (HasFatalFailure()) return;
  }
}

TEST_F(CudaRopeMatmul, RefusesWhatItCannotRun) {
  const Buffer x(DType::bf16, 64 * 64), w(DType::bf16, 4 * 64 * 64), y(DType::bf16, 64 * 4 * 64),
      gamma(DType::bf16, 64);
  const Buffer positions = Buffer::of_ints(std::vector<std::int32_t>(64, 0));
  const cuda::RopeMatmulHeads fitting{
      .heads = 2, .kv_heads = 1, .head_dim = 64, .theta = 1e4f, .positions = positions.get<std::int32_t>()};
  const auto run = [&](DType dtype, cuda::RopeMatmulHeads heads, const void* x_at = nullptr, std::int64_t k = 64) {
    return cuda::rope_matmul(dtype, x_at != nullptr ? x_at : x.get(), w.get(), nullptr, 64, k, heads, y.get(), stream_);
  };
  auto changed = fitting;
  EXPECT_EQ(run(DType::f32, fitting), cudaErrorInvalidValue);
  changed.head_dim = 32;
  EXPECT_EQ(run(DType::bf16, changed), cudaErrorInvalidValue);
  changed = fitting, changed.kv_heads = 0;
  EXPECT_EQ(run(DType::bf16, changed), cudaErrorInvalidValue);
  changed = fitting, changed.positions = nullptr;
  EXPECT_EQ(run(DType::bf16, changed), cudaErrorInvalidValue);
  changed = fitting, changed.query_norm = gamma.get();  // without a key norm
  EXPECT_EQ(run(DType::bf16, changed), cudaErrorInvalidValue);
  EXPECT_EQ(run(DType::bf16, fitting, x.get<char>() + 2), cudaErrorInvalidValue);
  EXPECT_EQ(run(DType::bf16, fitting, nullptr, 60), cudaErrorInvalidValue);
  EXPECT_EQ(
      cuda::rope_matmul(DType::bf16, x.get(), w.get(), nullptr, 64, 64, fitting, y.get(), stream_, {.swizzle = 3}),
      cudaErrorInvalidValue);
  EXPECT_EQ(run(DType::bf16, fitting), cuda::sm90a_runs_here() ? cudaSuccess : cudaErrorInvalidDevice);
  finish(cudaSuccess);
}

}  // namespace
}  // namespace accel::graph
