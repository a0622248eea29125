// The CUDA graph kernels against the CPU kernels, per storage type, on fresh random inputs rounded to that type
// (so both sides see the same values): outputs are poisoned with NaN first, so an element left unwritten fails,
// and padding rows that must stay unwritten are checked to still hold the poison. Skipped without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "graph/kernels/cpu_kernels.hpp"
#include "graph/kernels/cuda_kernels.hpp"
#include "testing/cuda_kernel_buffers.hpp"
#include "testing/kernel_inputs.hpp"
#include "testing/pool_reference.hpp"

namespace accel::graph {
namespace {

using testing::Buffer;
using testing::CudaKernels;
using testing::expect_close;
using testing::kPoolModes;
using testing::offsets_of;
using testing::random;
using testing::rng;
using testing::rounded;
using testing::Tolerance;
using testing::tolerance;

constexpr DType kTypes[] = {DType::f32, DType::f16, DType::bf16};
const std::vector<std::int64_t> kWidths{1, 7, 8, 33, 384, 1000};

TEST_F(CudaKernels, GatherRowsAndPositions) {
  for (DType dtype : kTypes) {
    for (std::int64_t width : kWidths) {
      const auto table = rounded(random(10 * width), dtype);
      const std::vector<std::int32_t> indices{3, -1, 9, 10, 0, 3, 7};
      const Buffer t(dtype, table), i = Buffer::of_ints(indices), out(dtype, 7 * width);
      finish(cuda::gather_rows(dtype, t.get(), 10, width, i.get<std::int32_t>(), 7, out.get(), stream_));
      std::vector<float> expected(7 * width);
      cpu::gather_rows(table.data(), 10, width, indices.data(), 7, expected.data());
      expect_close(out.read(), expected, dtype, "gather_rows");
    }
  }
  const auto offsets = offsets_of({3, 0, 1, 4, 0});
  const Buffer o = Buffer::of_ints(offsets), positions(DType::i32, 11);
  finish(cuda::sequence_positions(o.get<std::int32_t>(), 5, 11, positions.get<std::int32_t>(), stream_));
  std::vector<std::int32_t> actual(11), expected(11);
  ASSERT_EQ(cudaMemcpy(actual.data(), positions.get(), 44, cudaMemcpyDeviceToHost), cudaSuccess);
  cpu::sequence_positions(offsets.data(), 5, 11, expected.data());
  EXPECT_EQ(actual, expected);
}

TEST_F(CudaKernels, ActivationsAndBinaryOps) {
  for (DType dtype : kTypes) {
    for (std::int64_t width : kWidths) {
      const std::int64_t rows = 5;
      const auto x = rounded(random(rows * width, -6, 6), dtype), bias = rounded(random(width), dtype);
      const auto b = rounded(random(rows * width, 0.5f, 2.0f), dtype);
      const Buffer dx(dtype, x), dbias(dtype, bias), db(dtype, b);
      std::vector<float> expected(x.size());
      for (Activation act : {Activation::identity, Activation::relu, Activation::gelu_erf, Activation::gelu_tanh,
                             Activation::silu, Activation::sigmoid, Activation::tanh, Activation::log1p_relu}) {
        const Buffer y(dtype, rows * width), z(dtype, rows * width);
        finish(cuda::bias_activation(dtype, dx.get(), dbias.get(), rows, width, act, y.get(), stream_));
        cpu::bias_activation(x.data(), bias.data(), rows, width, act, expected.data());
        expect_close(y.read(), expected, dtype, "bias_activation");
        finish(cuda::unary(dtype, act, dx.get(), z.get(), rows * width, stream_));
        cpu::unary(act, x.data(), expected.data(), rows * width);
        expect_close(z.read(), expected, dtype, "unary");
      }
      for (BinaryOp op : {BinaryOp::add, BinaryOp::sub, BinaryOp::mul, BinaryOp::div}) {
        for (Broadcast shape : {Broadcast::none, Broadcast::row}) {
          const Buffer out(dtype, rows * width);
          // A row divides by b's first row (0.5 to 2), not by the bias: a bias near zero took a quotient past f16's
          // range (-inf against -111,281 for one seed).
          const bool bias_row = shape == Broadcast::row && op != BinaryOp::div;
          const Buffer& second = bias_row ? dbias : db;
          finish(cuda::binary(dtype, op, dx.get(), second.get(), shape, rows, width, out.get(), stream_));
          cpu::binary(op, x.data(), bias_row ? bias.data() : b.data(), shape, rows, width, expected.data());
          expect_close(out.read(), expected, dtype, "binary");
          // The first operand activated: against the activation in double (the CPU kernels' vector math flushes
          // GELU's tail below x = -4.5 to zero, an error a product with b can scale past f32's tolerance). Not
          // divided: float GELU's cancellation below x = -3 (a relative error of 1e-4 there), divided by a bias
          // near zero, leaves f32's tolerance; gated MLPs multiply.
          for (Activation act : {Activation::silu, Activation::gelu_erf}) {
            if (op == BinaryOp::div) continue;
            finish(cuda::binary(dtype, op, dx.get(), second.get(), shape, rows, width, out.get(), stream_, act));
            for (std::int64_t i = 0; i < rows * width; ++i) {
              const double u = activate(act, double{x[i]});
              const double w = shape == Broadcast::row ? bias[i % width] : b[i];
              expected[i] = static_cast<float>(op == BinaryOp::add   ? u + w
                                               : op == BinaryOp::sub ? u - w
                                               : op == BinaryOp::mul ? u * w
                                                                     : u / w);
            }
            expect_close(out.read(), expected, dtype, "activated binary");
          }
        }
      }
    }
  }
}

// A gated block's activation(x[:, :w]) * x[:, w:] against the CPU kernel, 8-wide rows and others.
TEST_F(CudaKernels, GatedMatchesTheCpu) {
  for (DType dtype : kTypes) {
    for (std::int64_t width : kWidths) {
      const std::int64_t rows = 5;
      const auto x = rounded(random(rows * 2 * width, -4, 4), dtype);
      const Buffer dx(dtype, x), y(dtype, rows * width);
      for (Activation act : {Activation::identity, Activation::silu, Activation::gelu_erf}) {
        finish(cuda::gated(dtype, dx.get(), rows, width, act, y.get(), stream_));
        std::vector<float> expected(rows * width);
        cpu::gated(x.data(), rows, width, act, expected.data());
        expect_close(y.read(), expected, dtype, "gated");
      }
    }
  }
}

// The graphs' own matmul against a double-precision product with the CPU kernels' epilogue, over shapes at, inside
// and across its 64 x 64 x 16 tiles, both B layouts, with and without bias; the bound adds to the storage type's
// tolerance the float accumulation's own (a few ulp of the sum of |terms|).
TEST_F(CudaKernels, MatmulMatchesTheProductWithItsEpilogue) {
  struct Case {
    std::int64_t rows, n, k;
  };
  const Case cases[] = {{1, 1, 1},       {3, 7, 5},       {64, 64, 16},     {65, 130, 33},
                        {200, 384, 384}, {37, 1536, 384}, {129, 384, 1536}, {4, 5, 0}};
  for (DType dtype : kTypes) {
    for (const Case& c : cases) {
      for (bool transpose_b : {false, true}) {
        for (Activation act : {Activation::identity, Activation::gelu_erf, Activation::relu}) {
          const bool with_bias = act != Activation::relu;
          const auto a = rounded(random(c.rows * c.k, -1, 1), dtype), b = rounded(random(c.k * c.n, -1, 1), dtype);
          const auto bias = rounded(random(c.n), dtype);
          std::vector<float> product(c.rows * c.n), scale(c.rows * c.n), expected(c.rows * c.n);
          for (std::int64_t r = 0; r < c.rows; ++r) {
            for (std::int64_t j = 0; j < c.n; ++j) {
              double sum = 0, magnitude = 0;
              for (std::int64_t q = 0; q < c.k; ++q) {
                const double term = double{a[r * c.k + q]} * (transpose_b ? b[j * c.k + q] : b[q * c.n + j]);
                sum += term;
                magnitude += std::abs(term);
              }
              product[r * c.n + j] = static_cast<float>(sum);
              scale[r * c.n + j] = static_cast<float>(magnitude);
            }
          }
          cpu::bias_activation(product.data(), with_bias ? bias.data() : nullptr, c.rows, c.n, act, expected.data());
          const Buffer da(dtype, a), db(dtype, b), dbias(dtype, bias), out(dtype, c.rows * c.n);
          finish(cuda::matmul(dtype, da.get(), db.get(), transpose_b, with_bias ? dbias.get() : nullptr, act, c.rows,
                              c.n, c.k, out.get(), stream_));
          const std::vector<float> actual = out.read();
          const Tolerance t = tolerance(dtype);
          for (std::size_t i = 0; i < actual.size(); ++i) {
            const double bound = t.absolute + t.relative * std::abs(expected[i]) + 4 * 0x1p-24 * scale[i];
            ASSERT_NEAR(actual[i], expected[i], bound)
                << "matmul " << to_string(dtype) << " " << c.rows << "x" << c.n << "x" << c.k
                << (transpose_b ? " Bt " : " B ") << static_cast<int>(act) << " at " << i;
          }
        }
      }
    }
  }
}

TEST_F(CudaKernels, NormsWithResidualAndSum) {
  for (DType dtype : kTypes) {
    for (std::int64_t width : kWidths) {
      for (bool with_residual : {false, true}) {
        const std::int64_t rows = 37;
        const auto x = rounded(random(rows * width, 3, 5), dtype), residual = rounded(random(rows * width), dtype),
                   gamma = rounded(random(width), dtype), beta = rounded(random(width), dtype);
        const Buffer dx(dtype, x), dr(dtype, residual), dg(dtype, gamma), db(dtype, beta);
        const void* r = with_residual ? dr.get() : nullptr;
        const float* hr = with_residual ? residual.data() : nullptr;
        std::vector<float> expected(x.size()), expected_sum(x.size());
        // A query's few rows with constant weights read gamma and beta before waiting (another kernel).
        for (auto [rms, constant_weights] : {std::pair{false, false}, {true, false}, {false, true}, {true, true}}) {
          const Buffer y(dtype, rows * width), sum(dtype, rows * width);
          if (rms) {
            finish(cuda::rms_norm(dtype, dx.get(), r, dg.get(), rows, width, 1e-6f, y.get(), sum.get(), stream_,
                                  constant_weights));
            cpu::rms_norm(x.data(), hr, gamma.data(), rows, width, 1e-6f, expected.data(), expected_sum.data());
          } else {
            finish(cuda::layer_norm(dtype, dx.get(), r, dg.get(), db.get(), rows, width, 1e-5f, y.get(), sum.get(),
                                    stream_, constant_weights));
            cpu::layer_norm(x.data(), hr, gamma.data(), beta.data(), rows, width, 1e-5f, expected.data(),
                            expected_sum.data());
          }
          expect_close(y.read(), expected, dtype, rms ? "rms_norm" : "layer_norm");
          expect_close(sum.read(), expected_sum, dtype, "norm sum");
        }
      }
    }
  }
}

TEST_F(CudaKernels, EmbeddingLayerNormWritesZeroPaddingRows) {
  for (DType dtype : kTypes) {
    for (std::int64_t width : kWidths) {
      const auto offsets = offsets_of({3, 0, 5, 1, 40});
      const std::int64_t rows = offsets.back() + 3, words = 30, positions = 16;
      const auto word = rounded(random(words * width), dtype), position = rounded(random(positions * width), dtype),
                 type = rounded(random(width), dtype), gamma = rounded(random(width), dtype),
                 beta = rounded(random(width), dtype);
      std::vector<std::int32_t> ids(rows);
      for (auto& id : ids) id = static_cast<std::int32_t>(rng()() % (words + 2)) - 1;
      const Buffer dw(dtype, word), dp(dtype, position), dt(dtype, type), dg(dtype, gamma), db(dtype, beta),
          di = Buffer::of_ints(ids), doff = Buffer::of_ints(offsets), y(dtype, rows * width);
      finish(cuda::embedding_layer_norm(dtype, dw.get(), words, dp.get(), positions, dt.get(), di.get<std::int32_t>(),
                                        doff.get<std::int32_t>(), 5, rows, width, dg.get(), db.get(), 1e-12f, y.get(),
                                        stream_));
      std::vector<float> expected(rows * width);
      cpu::embedding_layer_norm(word.data(), words, position.data(), positions, type.data(), ids.data(), offsets.data(),
                                5, rows, width, gamma.data(), beta.data(), 1e-12f, expected.data());
      expect_close(y.read(), expected, dtype, "embedding_layer_norm");
    }
  }
}

struct AttentionCase {
  std::vector<int> lengths;
  int heads, head_dim;
  std::int64_t extra_stride;  // added to the fused QKV row stride: not a multiple of 8 takes the generic kernel
};

TEST_F(CudaKernels, PackedAttentionMatchesTheCpuAndLeavesPaddingRows) {
  const std::vector<AttentionCase> cases{{{1, 1, 1}, 12, 32, 0},
                                         {{1, 17, 64, 65, 0, 130}, 12, 32, 0},
                                         {{256, 3, 256}, 12, 32, 0},
                                         {{512, 100, 1}, 4, 64, 0},
                                         {{63, 64, 129, 0}, 6, 64, 0},
                                         {{5, 90}, 3, 48, 0},
                                         {{33, 128, 2}, 2, 128, 0},
                                         {{40, 7}, 12, 32, 2},
                                         {{20, 77}, 2, 8, 0},
                                         // The tensor-core kernel that holds a sequence's keys in shared memory
                                         // takes up to 512 tokens at d 32, 256 at d 64, 128 at d 128; the
                                         // streaming one the rest.
                                         {{600, 31, 7}, 12, 32, 0},
                                         {{160, 1, 33}, 4, 64, 0},
                                         {{200, 3}, 4, 64, 0},  // over 48 KiB of shared memory
                                         {{129, 5, 0}, 2, 128, 0}};
  for (DType dtype : kTypes) {
    for (const AttentionCase& c : cases) {
      const auto offsets = offsets_of(c.lengths);
      const std::int64_t hidden = std::int64_t{c.heads} * c.head_dim, stride = 3 * hidden + c.extra_stride;
      const std::int64_t rows = offsets.back() + 5;
      const auto qkv = rounded(random(rows * stride), dtype);
      const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
      const Buffer dqkv(dtype, qkv), doff = Buffer::of_ints(offsets), out(dtype, rows * hidden);
      const auto at = [&](std::int64_t column) { return dqkv.get<std::byte>() + column * size_of(dtype); };
      const auto sequences = static_cast<std::int64_t>(c.lengths.size());
      const int max_length = *std::max_element(c.lengths.begin(), c.lengths.end());
      finish(cuda::packed_attention(dtype, at(0), stride, at(hidden), stride, at(2 * hidden), stride,
                                    doff.get<std::int32_t>(), sequences, rows, max_length, c.heads, c.head_dim, scale,
                                    out.get(), hidden, stream_));
      std::vector<float> expected(rows * hidden, NAN);
      cpu::packed_attention(qkv.data(), stride, qkv.data() + hidden, stride, qkv.data() + 2 * hidden, stride,
                            offsets.data(), sequences, c.heads, c.head_dim, scale, expected.data(), hidden);
      const auto actual = out.read();
      for (std::int64_t i = offsets.back() * hidden; i < rows * hidden; ++i)
        ASSERT_TRUE(std::isnan(actual[i])) << "padding row written at " << i;
      const std::vector<float> written(actual.begin(), actual.begin() + offsets.back() * hidden);
      expect_close(written, {expected.begin(), expected.begin() + offsets.back() * hidden}, dtype,
                   ("attention d" + std::to_string(c.head_dim)).c_str());
    }
  }
}

TEST_F(CudaKernels, PackedAttentionRefusesHeadDimsOver128) {
  EXPECT_EQ(cuda::packed_attention(DType::f16, nullptr, 0, nullptr, 0, nullptr, 0, nullptr, 1, 4, 4, 1, 136, 1.0f,
                                   nullptr, 0, stream_),
            cudaErrorInvalidValue);
}

TEST_F(CudaKernels, EveryPoolModeAndL2Normalize) {
  for (DType dtype : kTypes) {
    for (std::int64_t width : kWidths) {
      const auto offsets = offsets_of({2, 0, 5, 1, 200});
      const auto x = rounded(random((offsets.back() + 2) * width), dtype);
      const Buffer dx(dtype, x), doff = Buffer::of_ints(offsets);
      std::vector<float> expected(5 * width);
      for (PoolMode mode : kPoolModes) {
        const Buffer pooled(dtype, 5 * width);  // poisoned afresh, so that each mode must write every element
        finish(cuda::pool(mode, dtype, dx.get(), width, doff.get<std::int32_t>(), 5, offsets.back() + 2, pooled.get(),
                          stream_));
        cpu::pool(mode, x.data(), width, offsets.data(), 5, expected.data());
        expect_close(pooled.read(), expected, dtype, std::string(to_string(mode)).c_str());
        if (mode != PoolMode::mean) continue;
        const auto stored = pooled.read();
        const Buffer unit(dtype, 5 * width);
        std::vector<float> expected_unit(5 * width);
        finish(cuda::l2_normalize(dtype, pooled.get(), 5, width, 1e-12f, unit.get(), stream_));
        cpu::l2_normalize(stored.data(), 5, width, 1e-12f, expected_unit.data());
        expect_close(unit.read(), expected_unit, dtype, "l2_normalize");
      }
    }
  }
}

TEST_F(CudaKernels, CastsAndStridedCopies) {
  for (DType from : kTypes) {
    for (DType to : kTypes) {
      for (std::int64_t count : {1, 8, 1003, 4096}) {
        const auto x = rounded(random(count, -100, 100), from);
        const Buffer dx(from, x), y(to, count);
        finish(cuda::cast(from, dx.get(), to, y.get(), count, stream_));
        expect_close(y.read(), rounded(x, to), DType::f32, "cast");
      }
    }
    const auto t = rounded(random(2 * 3 * 50), from);
    const Buffer dt(from, t), y(from, 50 * 3 * 2);
    const StridedLayout transpose{.rank = 3, .shape = {50, 3, 2}, .strides = {1, 50, 150}};
    finish(cuda::strided_copy(from, dt.get(), transpose, y.get(), stream_));
    std::vector<float> expected(300);
    cpu::strided_copy(t.data(), transpose, expected.data());
    expect_close(y.read(), expected, DType::f32, "strided_copy");
  }
}

// Offsets are data from outside: wrong ones (past the rows, falling, sequences longer than max_length) must never
// make a kernel touch memory outside its buffers (compute-sanitizer memcheck would name it) or fault.
TEST_F(CudaKernels, WrongOffsetsStayInsideTheBuffers) {
  const std::vector<std::int32_t> offsets{-7, 40, 3, 100000, 12};
  const std::int64_t rows = 16, heads = 2, head_dim = 32, hidden = heads * head_dim;
  for (DType dtype : kTypes) {
    const auto values = rounded(random(rows * hidden), dtype);
    const Buffer x(dtype, values), doff = Buffer::of_ints(offsets), out(dtype, rows * hidden),
                                   pooled(dtype, 4 * hidden);
    finish(cuda::packed_attention(dtype, x.get(), hidden, x.get(), hidden, x.get(), hidden, doff.get<std::int32_t>(), 4,
                                  rows, 8, heads, head_dim, 0.2f, out.get(), hidden, stream_));
    for (PoolMode mode : kPoolModes)
      finish(cuda::pool(mode, dtype, x.get(), hidden, doff.get<std::int32_t>(), 4, rows, pooled.get(), stream_));
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  }
}

}  // namespace
}  // namespace accel::graph
