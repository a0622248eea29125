// The fused gated GEMM (cuda_gated_matmul.cu) against act(x Wgᵀ) * (x Wuᵀ) in double, on fresh random inputs
// rounded to the storage type: rows that fill no tile, widths of one interleave group to Qwen3-0.6B's 3,072, both
// storage types, both activations and the scheduler's orders of the tiles; nothing written past the output; what it
// refuses. Skipped without a GPU; on a GPU other than sm_90 it must refuse the device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "graph/kernels/cuda_gated_matmul.hpp"
#include "testing/cuda_kernel_buffers.hpp"
#include "testing/kernel_inputs.hpp"

namespace accel::graph {
namespace {

using cuda::GatedMatmulRaster;
using testing::Buffer;
using testing::CudaKernels;
using testing::random;
using testing::rounded;

// The stacked [gate; up] weight's rows in the kernel's interleaved order.
std::vector<float> interleaved(const std::vector<float>& stacked, std::int64_t width, std::int64_t k) {
  std::vector<float> out(stacked.size());
  for (std::int64_t r = 0; r < 2 * width; ++r)
    std::copy_n(&stacked[cuda::gated_matmul_weight_row(r, width) * k], k, &out[r * k]);
  return out;
}

struct Case {
  std::int64_t rows, width, k;
};

class CudaGatedMatmul : public CudaKernels {
 protected:
  // Runs one case and checks every 7th row and the last against the double reference, every row for NaN (the
  // output starts poisoned), and the poison past the output intact.
  void check(DType dtype, Activation activation, cuda::GatedMatmulTuning tuning, const Case& c) {
    const std::string what =
        std::string(to_string(dtype)) + " rows " + std::to_string(c.rows) + " width " + std::to_string(c.width) +
        " k " + std::to_string(c.k) + " activation " + std::to_string(static_cast<int>(activation)) + " swizzle " +
        std::to_string(tuning.swizzle) + " raster " + std::to_string(static_cast<int>(tuning.raster));
    const std::vector<float> x = rounded(random(c.rows * c.k, -1.0f, 1.0f), dtype);
    const float bound = 2.0f / std::sqrt(static_cast<float>(c.k));
    const std::vector<float> w = rounded(random(2 * c.width * c.k, -bound, bound), dtype);
    const Buffer x_device(dtype, x), w_device(dtype, interleaved(w, c.width, c.k));
    constexpr std::int64_t kGuard = 64;
    const Buffer y_device(dtype, c.rows * c.width + kGuard);
    finish(cuda::gated_matmul(dtype, activation, x_device.get(), w_device.get(), c.rows, c.width, c.k, y_device.get(),
                              stream_, tuning));
    if (HasFatalFailure()) return;
    const std::vector<float> y = y_device.read();
    const testing::Tolerance t = testing::tolerance(dtype);
    for (std::int64_t r = 0; r < c.rows; ++r) {
      const bool sampled = r % 7 == 0 || r == c.rows - 1;
      for (std::int64_t j = 0; j < c.width; ++j) {
        const float actual = y[r * c.width + j];
        ASSERT_TRUE(std::isfinite(actual)) << what << ": row " << r << " column " << j << " not written";
        if (!sampled) continue;
        double gate = 0, up = 0;
        for (std::int64_t q = 0; q < c.k; ++q) {
          gate += double{x[r * c.k + q]} * w[j * c.k + q];
          up += double{x[r * c.k + q]} * w[(c.width + j) * c.k + q];
        }
        const double expected = accel::activate(activation, gate) * up;
        ASSERT_NEAR(actual, expected, t.absolute + t.relative * std::abs(expected))
            << what << ": row " << r << " column " << j;
      }
    }
    for (std::int64_t i = 0; i < kGuard; ++i)
      ASSERT_TRUE(std::isnan(y[c.rows * c.width + i])) << what << ": written past the output at " << i;
  }
};

TEST_F(CudaGatedMatmul, MatchesTheGatedProductInDouble) {
  if (!cuda::gated_matmul_runs_here())
    GTEST_SKIP() << "sm_90a code only (its refusal elsewhere: RefusesWhatItCannotRun)";
  // One interleave group; tiles partly filled in both directions; a 12 × 768 encoder's MLP; Qwen3-0.6B's.
  const Case cases[] = {{1, 8, 8}, {37, 72, 64}, {130, 136, 200}, {300, 3072, 768}, {1000, 3072, 1024}};
  for (const DType dtype : {DType::bf16, DType::f16})
    for (const Activation activation : {Activation::silu, Activation::gelu_erf})
      for (const Case& c : cases) {
        check(dtype, activation, {}, c);
        if (HasFatalFailure()) return;
      }
  // The scheduler's other orders of the output tiles.
  for (const int swizzle : {2, 8})
    for (const GatedMatmulRaster raster : {GatedMatmulRaster::along_m, GatedMatmulRaster::along_n}) {
      check(DType::bf16, Activation::silu, {.swizzle = swizzle, .raster = raster}, {1000, 3072, 1024});
      if (HasFatalFailure()) return;
    }
}

TEST_F(CudaGatedMatmul, RefusesWhatItCannotRun) {
  const Buffer x(DType::bf16, 64 * 64), w(DType::bf16, 2 * 64 * 64), y(DType::bf16, 64 * 64);
  const auto run = [&](DType dtype, Activation activation, std::int64_t width, std::int64_t k, const void* x_at) {
    return cuda::gated_matmul(dtype, activation, x_at, w.get(), 64, width, k, y.get(), stream_);
  };
  const char* misaligned = x.get<char>() + 2;
  EXPECT_EQ(run(DType::f32, Activation::silu, 64, 64, x.get()), cudaErrorInvalidValue);
  EXPECT_EQ(run(DType::bf16, Activation::relu, 64, 64, x.get()), cudaErrorInvalidValue);
  EXPECT_EQ(run(DType::bf16, Activation::silu, 60, 64, x.get()), cudaErrorInvalidValue);
  EXPECT_EQ(run(DType::bf16, Activation::silu, 64, 60, x.get()), cudaErrorInvalidValue);
  EXPECT_EQ(run(DType::bf16, Activation::silu, 64, 64, misaligned), cudaErrorInvalidValue);
  EXPECT_EQ(cuda::gated_matmul(DType::bf16, Activation::silu, x.get(), w.get(), 0, 64, 64, y.get(), stream_),
            cudaErrorInvalidValue);
  EXPECT_EQ(
      cuda::gated_matmul(DType::bf16, Activation::silu, x.get(), w.get(), 64, 64, 64, y.get(), stream_, {.swizzle = 3}),
      cudaErrorInvalidValue);
  const cudaError_t fitting = run(DType::bf16, Activation::silu, 64, 64, x.get());
  EXPECT_EQ(fitting, cuda::gated_matmul_runs_here() ? cudaSuccess : cudaErrorInvalidDevice);
  finish(cudaSuccess);
}

}  // namespace
}  // namespace accel::graph
