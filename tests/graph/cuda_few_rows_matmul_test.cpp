// The few-rows matmul (a query's products) against a double-precision product with the same epilogue, on fresh
// random inputs rounded to the storage type: every row count a 64-token bucket can hold, the encoders' and decoders'
// shapes and odd column counts, every epilogue (bias, activations, residual), and its gated form (the gated op after
// the product in the same kernel). Then chains of them, launched directly and captured as a CUDA graph: each kernel
// reads its weights before the kernel before it has finished, so a product reading the one before's output, or writing
// over the one before's input, checks the chain's ordering. Skipped without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "graph/kernels/cpu_kernels.hpp"
#include "graph/kernels/cuda_kernels.hpp"
#include "testing/cuda_kernel_buffers.hpp"
#include "testing/kernel_inputs.hpp"

namespace accel::graph {
namespace {

using testing::Buffer;
using testing::CudaKernels;
using testing::random;
using testing::rounded;
using testing::Tolerance;
using testing::tolerance;

struct Product {
  std::vector<float> expected, magnitude;
};

// act(a wᵀ + bias) + residual in double, and the sum of |terms| a product's rounding scales with.
Product reference(const std::vector<float>& a, const std::vector<float>& w, const std::vector<float>* bias,
                  Activation activation, const std::vector<float>* residual, std::int64_t rows, std::int64_t n,
                  std::int64_t k) {
  Product p{std::vector<float>(rows * n), std::vector<float>(rows * n)};
  std::vector<float> sums(rows * n);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0, magnitude = 0;
      for (std::int64_t q = 0; q < k; ++q) {
        const double term = double{a[r * k + q]} * w[j * k + q];
        sum += term;
        magnitude += std::abs(term);
      }
      sums[r * n + j] = static_cast<float>(sum);
      p.magnitude[r * n + j] = static_cast<float>(magnitude);
    }
  }
  cpu::bias_activation(sums.data(), bias != nullptr ? bias->data() : nullptr, rows, n, activation, p.expected.data());
  if (residual != nullptr)
    for (std::size_t i = 0; i < p.expected.size(); ++i) p.expected[i] += (*residual)[i];
  return p;
}

void expect_product(const std::vector<float>& actual, const Product& p, DType dtype, const std::string& what) {
  ASSERT_EQ(actual.size(), p.expected.size());
  const Tolerance t = tolerance(dtype);
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double bound = t.absolute + t.relative * std::abs(p.expected[i]) + 4 * 0x1p-24 * p.magnitude[i];
    ASSERT_NEAR(actual[i], p.expected[i], bound) << what << " at " << i;
  }
}

std::string describe(DType dtype, std::int64_t rows, std::int64_t n, std::int64_t k, Activation activation,
                     bool with_bias, bool with_residual) {
  return std::string(to_string(dtype)) + " " + std::to_string(rows) + "x" + std::to_string(n) + "x" +
         std::to_string(k) + " activation " + std::to_string(static_cast<int>(activation)) +
         (with_bias ? " bias" : "") + (with_residual ? " residual" : "");
}

TEST_F(CudaKernels, FewRowsMatmulMatchesTheProductWithItsEpilogue) {
  struct Shape {
    std::int64_t n, k;
  };
  // MiniLM's four, BERT-base's q/k/v and FFN down, Qwen3-0.6B's gate|up, a deep product taking 8 chunks a warp,
  // and columns that fill no tile.
  const Shape shapes[] = {{1152, 384}, {384, 384},   {1536, 384}, {384, 1536}, {2304, 768},
                          {768, 3072}, {6144, 1024}, {40, 4096},  {13, 64},    {1, 32}};
  const std::int64_t row_counts[] = {1, 7, 16, 17, 40, 64};
  const Activation activations[] = {Activation::identity, Activation::gelu_erf, Activation::relu, Activation::silu};
  int round = 0;
  for (DType dtype : {DType::f16, DType::bf16}) {
    for (const Shape& s : shapes) {
      for (std::int64_t rows : row_counts) {
        const Activation activation = activations[round % 4];
        const bool with_bias = round % 3 != 2, with_residual = activation == Activation::identity && round % 2 == 0;
        ++round;
        const auto a = rounded(random(rows * s.k, -1, 1), dtype), w = rounded(random(s.n * s.k, -1, 1), dtype);
        const auto bias = rounded(random(s.n), dtype), residual = rounded(random(rows * s.n), dtype);
        const Buffer da(dtype, a), dw(dtype, w), dbias(dtype, bias), dresidual(dtype, residual);
        const Buffer out(dtype, rows * s.n);
        ASSERT_TRUE(cuda::few_rows_matmul_fits(dtype, rows, s.n, s.k, da.get(), dw.get()));
        finish(cuda::few_rows_matmul(dtype, da.get(), dw.get(), with_bias ? dbias.get() : nullptr, activation,
                                     with_residual ? dresidual.get() : nullptr, rows, s.n, s.k, out.get(), stream_));
        expect_product(out.read(),
                       reference(a, w, with_bias ? &bias : nullptr, activation, with_residual ? &residual : nullptr,
                                 rows, s.n, s.k),
                       dtype, describe(dtype, rows, s.n, s.k, activation, with_bias, with_residual));
      }
    }
  }
}

// y = act(gate) * up over the product in groups of 8 (gate 8 i + j at column 16 i + j, its up 8 on), the gate and up
// rounded to the storage type first as the product's output is, in double; the bound allows either of the two to round
// to the neighbouring value, as a float sum in another order may.
void expect_gated(const std::vector<float>& actual, const std::vector<float>& a, const std::vector<float>& w,
                  const std::vector<float>* bias, Activation activation, std::int64_t rows, std::int64_t n,
                  std::int64_t k, DType dtype, const std::string& what) {
  const std::int64_t width = n / 2;
  ASSERT_EQ(actual.size(), static_cast<std::size_t>(rows * width));
  const Product product = reference(a, w, bias, Activation::identity, nullptr, rows, n, k);
  const std::vector<float> stored = rounded(product.expected, dtype);
  const Tolerance t = tolerance(dtype);
  const double ulp = dtype == DType::f16 ? 0x1p-10 : 0x1p-7;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t j = 0; j < width; ++j) {
      const std::int64_t g = r * n + 16 * (j / 8) + j % 8, u = g + 8;
      const float gate = stored[g], up = stored[u];
      float activated = 0;
      cpu::bias_activation(&gate, nullptr, 1, 1, activation, &activated);
      const double expected = double{activated} * up;
      const double bound = t.absolute + t.relative * std::abs(expected) +
                           2 * ulp * std::abs(up) * (1.2 * std::abs(gate) + std::abs(activated));
      ASSERT_NEAR(actual[r * width + j], expected, bound) << what << " at row " << r << " column " << j;
    }
  }
}

TEST_F(CudaKernels, FewRowsGatedMatmulMatchesTheProductThenTheGate) {
  struct Shape {
    std::int64_t n, k;
  };
  // ModernBERT-base's GeGLU input (2 x 1,152 of 768), Qwen3-0.6B's gate|up (2 x 3,072 of 1,024), one chunk a warp,
  // and the fewest columns.
  const Shape shapes[] = {{2304, 768}, {6144, 1024}, {1024, 512}, {16, 32}};
  const Activation activations[] = {Activation::gelu_erf, Activation::silu, Activation::gelu_tanh};
  int round = 0;
  for (DType dtype : {DType::f16, DType::bf16}) {
    for (const Shape& s : shapes) {
      for (std::int64_t rows : {1, 9, 16, 33, 64}) {
        const Activation activation = activations[round % 3];
        const bool with_bias = round % 2 == 0;
        ++round;
        const auto a = rounded(random(rows * s.k, -1, 1), dtype);
        const auto w = rounded(random(s.n * s.k, -0.1f, 0.1f), dtype);
        const auto bias = rounded(random(s.n), dtype);
        const Buffer da(dtype, a), dw(dtype, w), dbias(dtype, bias), y(dtype, rows * s.n / 2);
        ASSERT_TRUE(cuda::few_rows_gated_matmul_fits(dtype, rows, s.n, s.k, da.get(), dw.get()));
        finish(cuda::few_rows_gated_matmul(dtype, da.get(), dw.get(), with_bias ? dbias.get() : nullptr, activation,
                                           rows, s.n, s.k, y.get(), stream_));
        expect_gated(y.read(), a, w, with_bias ? &bias : nullptr, activation, rows, s.n, s.k, dtype,
                     describe(dtype, rows, s.n, s.k, activation, with_bias, false) + " gated");
      }
    }
  }
}

TEST_F(CudaKernels, FewRowsMatmulRefusesWhatItCannotTake) {
  const Buffer a(DType::f16, 64 * 64), w(DType::f16, 64 * 64);
  EXPECT_TRUE(cuda::few_rows_matmul_fits(DType::f16, 64, 64, 64, a.get(), w.get()));
  EXPECT_FALSE(cuda::few_rows_matmul_fits(DType::f32, 1, 64, 64, a.get(), w.get()));
  EXPECT_FALSE(cuda::few_rows_matmul_fits(DType::f16, 65, 64, 64, a.get(), w.get()));
  EXPECT_FALSE(cuda::few_rows_matmul_fits(DType::f16, 0, 64, 64, a.get(), w.get()));
  EXPECT_FALSE(cuda::few_rows_matmul_fits(DType::f16, 1, 64, 48, a.get(), w.get()));
  EXPECT_FALSE(cuda::few_rows_matmul_fits(DType::f16, 1, 64, 4128, a.get(), w.get()));
  EXPECT_FALSE(cuda::few_rows_matmul_fits(DType::f16, 1, 64, 64, a.get<std::byte>() + 2, w.get()));
  EXPECT_FALSE(cuda::few_rows_matmul_fits(DType::f16, 1, 64, 64, a.get(), w.get<std::byte>() + 8));
  EXPECT_EQ(cuda::few_rows_matmul(DType::f16, a.get(), w.get(), nullptr, Activation::identity, nullptr, 65, 64, 64,
                                  a.get(), stream_),
            cudaErrorInvalidValue);
  // The gated form: columns in whole groups of 16, k up to two chunks a warp.
  const Buffer deep(DType::f16, 64 * 1056);
  EXPECT_TRUE(cuda::few_rows_gated_matmul_fits(DType::f16, 64, 64, 64, a.get(), w.get()));
  EXPECT_FALSE(cuda::few_rows_gated_matmul_fits(DType::f16, 64, 56, 64, a.get(), w.get()));
  EXPECT_FALSE(cuda::few_rows_gated_matmul_fits(DType::f16, 1, 16, 1056, deep.get(), deep.get()));
  EXPECT_FALSE(cuda::few_rows_gated_matmul_fits(DType::f16, 65, 64, 64, a.get(), w.get()));
  EXPECT_EQ(
      cuda::few_rows_gated_matmul(DType::f16, a.get(), w.get(), nullptr, Activation::silu, 1, 56, 64, a.get(), stream_),
      cudaErrorInvalidValue);
}

// x1 = gelu(x0 w1ᵀ + b1); x2 = x1 w2ᵀ + x0, written over x0; x3 = x2 w1ᵀ: each reads what the kernel before wrote, and
// the second writes over what the first read.
TEST_F(CudaKernels, ChainedFewRowsMatmulsSeeTheKernelBeforeDirectAndCaptured) {
  // BERT-base's widths: the first and last products take 16 columns a block (64 KiB of shared memory, which the
  // capture must allow), the second 8 k chunks a warp.
  constexpr std::int64_t kRows = 37, kWidth = 768, kInner = 3072;
  for (DType dtype : {DType::f16, DType::bf16}) {
    for (bool captured : {false, true}) {
      const auto x0 = rounded(random(kRows * kWidth, -1, 1), dtype);
      const auto w1 = rounded(random(kInner * kWidth, -0.1f, 0.1f), dtype);
      const auto w2 = rounded(random(kWidth * kInner, -0.05f, 0.05f), dtype);
      const auto b1 = rounded(random(kInner), dtype);
      const Buffer dx(dtype, x0), dw1(dtype, w1), dw2(dtype, w2), db1(dtype, b1), dx1(dtype, kRows * kInner);
      const Buffer dx3(dtype, kRows * kInner);
      const auto enqueue = [&] {
        ASSERT_EQ(cuda::few_rows_matmul(dtype, dx.get(), dw1.get(), db1.get(), Activation::gelu_erf, nullptr, kRows,
                                        kInner, kWidth, dx1.get(), stream_),
                  cudaSuccess);
        ASSERT_EQ(cuda::few_rows_matmul(dtype, dx1.get(), dw2.get(), nullptr, Activation::identity, dx.get(), kRows,
                                        kWidth, kInner, dx.get(), stream_),
                  cudaSuccess);
        ASSERT_EQ(cuda::few_rows_matmul(dtype, dx.get(), dw1.get(), nullptr, Activation::identity, nullptr, kRows,
                                        kInner, kWidth, dx3.get(), stream_),
                  cudaSuccess);
      };
      if (captured) {
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), cudaSuccess);
        enqueue();
        ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
        ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
        finish(cudaGraphLaunch(exec, stream_));
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
      } else {
        enqueue();
        finish(cudaSuccess);
      }
      const std::vector<float> x1 = dx1.read(), x2 = dx.read();
      const std::string what = std::string(captured ? "captured " : "direct ") + std::string(to_string(dtype));
      expect_product(x1, reference(x0, w1, &b1, Activation::gelu_erf, nullptr, kRows, kInner, kWidth), dtype,
                     what + " x1");
      expect_product(x2, reference(x1, w2, nullptr, Activation::identity, &x0, kRows, kWidth, kInner), dtype,
                     what + " x2");
      expect_product(dx3.read(), reference(x2, w1, nullptr, Activation::identity, nullptr, kRows, kInner, kWidth),
                     dtype, what + " x3");
    }
  }
}

}  // namespace
}  // namespace accel::graph
