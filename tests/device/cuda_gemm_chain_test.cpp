// Small f32 GEMMs recorded one after another, each reading the one before's C as its B (or as its A), run as one launch
// (libs/blas's launch_small_gemm_chain, PERFORMANCE.md §107), on every way a CUDA device runs requests (each
// completion strategy, and isolated). A recording of them launched equals the same requests sent one by one on the
// same device bit for bit, and the CPU device within f32 rounding, on fresh values each launch: a chain longer than
// one launch takes, buffers taken in turn, a stack of layers in column order with transposes, odd extents, padded
// leading dimensions and alpha 0, and one in row order (X W^T, chained as its transposes); and the products a chain
// must not take beside them (an A the chain writes, a C that overlaps another matrix of the chain, beta, more than 64
// rows or terms, a B that is not the C before, an A whose rows do not start on 16 bytes); and which products a chain
// takes, tested without a device. The rest is skipped without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "accel/device/recording.hpp"
#include "accel/libs/blas/gemm.hpp"
#include "libs/blas/blas_kernels.hpp"
#include "testing/buffer_values.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/numeric_error.hpp"
#include "testing/test_seed.hpp"

namespace accel {
namespace {

using accel::testing::contents;
using accel::testing::GpuTestTarget;
using accel::testing::IsOk;
using accel::testing::relative_error;

constexpr std::int64_t kElements = 160 * 160;  // every buffer's: room for any operand below
constexpr int kBuffers = 10;

// C = alpha op(A) op(B) + beta C over buffers a, b and c of the set.
struct Product {
  int a, b, c;
  GemmShape shape;
  double alpha = 1.0, beta = 0.0;
};

GemmShape shape(std::int64_t m, std::int64_t n, std::int64_t k, MatrixOrder order = MatrixOrder::row_major,
                Transpose ta = Transpose::none, Transpose tb = Transpose::none) {
  return {.order = order, .transpose_a = ta, .transpose_b = tb, .m = m, .n = n, .k = k};
}

GemmShape with_ld(GemmShape s, std::int64_t lda, std::int64_t ldb, std::int64_t ldc) {
  s.lda = lda;
  s.ldb = ldb;
  s.ldc = ldc;
  return s;
}

std::vector<Product> products() {
  const auto col = MatrixOrder::column_major;
  const auto row = MatrixOrder::row_major;
  const auto t = Transpose::transpose, none = Transpose::none;
  std::vector<Product> out;
  // X_{i+1} = W X_i / 5 over buffers 1, 2, 3, 1, ...: a chain of 36, more than one launch takes (32 and 4). W's entries
  // are uniform in (-1, 1), so its spectral radius is about 8 / sqrt(3): X keeps its scale rather than underflowing.
  for (int i = 0; i < 36; ++i) out.push_back({0, 1 + i % 3, 1 + (i + 1) % 3, shape(64, 64, 64), 0.2});
  // One W, transposed, in column order with odd extents and padded leading dimensions, applied three times: a chain
  // whose products share their A (read once); its last C in buffer 8, which no product after it reads as its B.
  out.push_back({4, 5, 6, with_ld(shape(37, 29, 37, col, t), 40, 37, 50), 0.5});
  out.push_back({4, 6, 7, with_ld(shape(37, 29, 37, col, t), 40, 50, 37), -1.0});
  out.push_back({4, 7, 8, with_ld(shape(37, 29, 37, col, t), 40, 37, 40), 0.25});
  // The same W not transposed, its terms 40 apart (read one at a time), applied twice: a chain of its own sharing A.
  out.push_back({4, 9, 5, with_ld(shape(37, 29, 37, col), 40, 37, 40), 0.5});
  out.push_back({4, 5, 6, with_ld(shape(37, 29, 37, col), 40, 40, 37), -2.0});
  // A stack of layers in column order, odd extents and padded leading dimensions, each reading the last one's C: one
  // chain of four (alpha 0 in it; its last C the buffer of its first B and of the second product's C, the same
  // matrices).
  out.push_back({4, 5, 6, with_ld(shape(48, 29, 37, col, t), 40, 37, 50), 0.5});   // X1 = W1ᵀ X0, 48 x 29
  out.push_back({7, 6, 8, with_ld(shape(64, 29, 48, col), 64, 50, 64)});           // X2 = W2 X1, 64 x 29
  out.push_back({9, 8, 5, with_ld(shape(37, 29, 64, col), 40, 64, 37), 0.0});      // X0 = 0 W3 X2
  out.push_back({4, 5, 6, with_ld(shape(48, 29, 37, col, t), 40, 37, 50), -1.0});  // X1 = -W1ᵀ X0
  // Its A is the chain's last C: a chain of its own begins, and ends where the next product writes that A.
  out.push_back({6, 6, 3, with_ld(shape(8, 29, 48, col), 8, 50, 8)});
  out.push_back({0, 3, 6, with_ld(shape(8, 29, 8, col), 8, 8, 8)});
  out.push_back({0, 6, 1, shape(8, 8, 8, row, t, none), 1.0, 0.5});  // beta: launched alone
  out.push_back({0, 1, 2, shape(8, 8, 8, row, none, t)});            // B is not the C before: alone, then a chain
  out.push_back({0, 2, 4, shape(100, 8, 8)});                        // 100 rows: more than a chain takes
  out.push_back({0, 4, 7, shape(64, 8, 100, row, t, none)});         // 100 terms: alone too
  // op(B) transposed is the C before, stored in rows, but that one began no chain; then a chain of two, the second's
  // op(B) (rows of B) the first's C (columns).
  out.push_back({8, 7, 9, shape(7, 8, 64, col, t, t)});
  out.push_back({1, 9, 2, with_ld(shape(1, 8, 7, row, none, t), 8, 7, 8)});
  out.push_back({1, 9, 3, shape(1, 8, 7, row, none, t)});  // the same but A's rows 7 apart: not copied whole, alone
  // Rows of activations through layers (nn.Linear's layout, X W^T), each reading the one before's C as op(A): a chain
  // of the products' transposes, its last C the buffer of its first A.
  out.push_back({1, 0, 2, with_ld(shape(29, 48, 40, row, none, t), 40, 40, 48)});
  out.push_back({2, 3, 4, with_ld(shape(29, 64, 48, row, none, t), 48, 48, 64)});
  out.push_back({4, 5, 1, with_ld(shape(29, 40, 64, row, none, t), 64, 64, 40), -0.5});
  // The same layer applied again and again to rows of activations (X W^T, one W): a chain of transposes sharing A.
  out.push_back({7, 3, 8, with_ld(shape(29, 40, 40, row, none, t), 40, 40, 40), 0.5});
  out.push_back({8, 3, 7, with_ld(shape(29, 40, 40, row, none, t), 40, 40, 40), 0.5});
  out.push_back({7, 3, 8, with_ld(shape(29, 40, 40, row, none, t), 40, 40, 40), 0.5});
  return out;
}

Gemm request(const Product& p, const std::vector<Buffer<float>>& buffers) {
  return {.shape = p.shape,
          .a = buffers[p.a].handle(),
          .b = buffers[p.b].handle(),
          .c = buffers[p.c].handle(),
          .alpha = p.alpha,
          .beta = p.beta};
}

std::vector<Buffer<float>> buffers_of(const Device& device, const std::vector<std::vector<float>>& values) {
  std::vector<Buffer<float>> buffers;
  for (const std::vector<float>& v : values) {
    buffers.push_back(*device.allocate<float>(kElements).wait());
    EXPECT_THAT(device.upload(std::span<const float>(v), buffers.back()).wait(), IsOk());
  }
  return buffers;
}

class CudaGemmChainTest : public ::testing::TestWithParam<GpuTestTarget> {
 protected:
  System system_;
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

TEST_P(CudaGemmChainTest, RecordedChainsOfSmallGemmsEqualTheRequestsOneByOneAndTheCpuDevice) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), gpu);
  Device cpu = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<std::vector<float>> values(kBuffers, std::vector<float>(kElements));
  auto fresh = [&] {
    for (std::vector<float>& v : values)
      for (float& x : v) x = dist(rng_);
  };
  fresh();
  const std::vector<Buffer<float>> direct = buffers_of(gpu, values), replayed = buffers_of(gpu, values),
                                   reference = buffers_of(cpu, values);
  const std::vector<Product> chain = products();
  Recording recording(gpu);
  for (const Product& p : chain) ASSERT_THAT(recording.record(request(p, replayed)), IsOk());
  for (int launch = 0; launch < 3; ++launch) {
    SCOPED_TRACE(::testing::Message() << "launch " << launch);
    if (launch != 0) {  // fresh values each launch: the chain's products would otherwise grow past f32's range
      fresh();
      for (int i = 0; i < kBuffers; ++i) {
        const std::span<const float> v(values[i]);
        ASSERT_THAT(gpu.upload(v, direct[i]).wait(), IsOk());
        ASSERT_THAT(gpu.upload(v, replayed[i]).wait(), IsOk());
        ASSERT_THAT(cpu.upload(v, reference[i]).wait(), IsOk());
      }
    }
    for (const Product& p : chain) {
      ASSERT_THAT(gpu.ask(request(p, direct)).wait(), IsOk());
      ASSERT_THAT(cpu.ask(request(p, reference)).wait(), IsOk());
    }
    ASSERT_THAT(recording.launch().wait(), IsOk());
    for (int i = 0; i < kBuffers; ++i) {
      SCOPED_TRACE(::testing::Message() << "buffer " << i);
      const std::vector<float> got = contents(gpu, replayed[i]);
      EXPECT_EQ(got, contents(gpu, direct[i]));
      const std::vector<float> want = contents(cpu, reference[i]);
      EXPECT_LE(relative_error({got.begin(), got.end()}, {want.begin(), want.end()}), 1e-4);
    }
  }
}

// Which products a chain takes, on launches as a GEMM's plan makes them (no device: addresses only, 1 MiB apart).
blas::SmallGemmLaunch product(std::uintptr_t a, std::uintptr_t b, std::uintptr_t c, std::int64_t m, std::int64_t n,
                              std::int64_t k) {  // row-major, packed
  constexpr std::uintptr_t kApart = 1 << 20;
  return {.a = reinterpret_cast<const void*>(kApart * (a + 1)),
          .b = reinterpret_cast<const void*>(kApart * (b + 1)),
          .c = reinterpret_cast<void*>(kApart * (c + 1)),
          .m = m,
          .n = n,
          .k = k,
          .a_row = k,
          .a_col = 1,
          .b_row = n,
          .b_col = 1,
          .c_row = n,
          .c_col = 1};
}

// How many products from the first one chain would take.
int chained(const std::vector<blas::SmallGemmLaunch>& launches) {
  return blas::small_gemm_chain_length(launches.data(), launches.size());
}

TEST(SmallGemmChain, TakesEachProductThatReadsTheLastOnesCAndNoMatrixOfTheChainItWrites) {
  std::vector<blas::SmallGemmLaunch> turns;  // X_{i+1} = W X_i over buffers 1, 2, 3 in turn: the last C is the first B
  for (int i = 0; i < 40; ++i) turns.push_back(product(0, 1 + i % 3, 1 + (i + 1) % 3, 64, 64, 64));
  EXPECT_EQ(chained(turns), blas::kMostChainedGemms);

  std::vector<blas::SmallGemmLaunch> layers = {product(0, 1, 2, 48, 29, 40), product(3, 2, 4, 64, 29, 48),
                                               product(5, 4, 6, 8, 29, 64)};
  EXPECT_EQ(chained(layers), 3);
  layers[2].a = layers[0].c;  // an A the chain writes
  EXPECT_EQ(chained(layers), 2);
  layers[2] = product(5, 4, 0, 8, 29, 64);  // a C over an A the chain reads
  EXPECT_EQ(chained(layers), 2);
  layers[2] = product(5, 4, 1, 8, 29, 64);  // a C over the first B, not the same matrix (8 rows, not 40)
  EXPECT_EQ(chained(layers), 2);
  layers[2] = product(5, 4, 2, 48, 29, 64);  // the first C again, the very matrix (buffers taken in turn)
  EXPECT_EQ(chained(layers), 3);
  layers[2] = product(5, 4, 4, 48, 29, 64);  // in place: its C is its B
  EXPECT_EQ(chained(layers), 2);
  layers[2] = product(5, 3, 6, 8, 29, 64);  // a B that is not the C before
  EXPECT_EQ(chained(layers), 2);
  layers[2] = product(5, 4, 6, 8, 29, 64);
  layers[2].b_row = 1;  // the C before read by columns: not the same matrix
  layers[2].b_col = 64;
  EXPECT_EQ(chained(layers), 2);
}

TEST(SmallGemmChain, TakesTheTransposesOfProductsThatEachReadTheLastOnesCAsA) {
  // X_{i+1} = X_i W_i^T, row-major: op(B) = W_i^T read by columns of the stored W_i.
  auto layer = [](std::uintptr_t x, std::uintptr_t w, std::uintptr_t y, std::int64_t rows, std::int64_t out,
                  std::int64_t in) {
    blas::SmallGemmLaunch l = product(x, w, y, rows, out, in);
    l.b_row = 1;  // element (q, j) of op(B) is W's (j, q)
    l.b_col = in;
    return l;
  };
  std::vector<blas::SmallGemmLaunch> layers = {layer(0, 1, 2, 29, 48, 40), layer(2, 3, 4, 29, 64, 48),
                                               layer(4, 5, 0, 29, 40, 64)};
  EXPECT_EQ(chained(layers), 1);
  std::vector<blas::SmallGemmLaunch> transposes;
  for (const blas::SmallGemmLaunch& l : layers) transposes.push_back(blas::transposed_small_gemm(l));
  EXPECT_EQ(chained(transposes), 3);
  const blas::SmallGemmLaunch twice = blas::transposed_small_gemm(transposes[1]);
  EXPECT_EQ(twice.a, layers[1].a);
  EXPECT_EQ(twice.b_col, layers[1].b_col);
  EXPECT_EQ(twice.c_row, layers[1].c_row);
  EXPECT_EQ(twice.m, layers[1].m);
}

TEST(SmallGemmChain, BeginsOnlyWithAPlainProductOfAtMost64RowsAndTermsWhoseARowsStartOn16Bytes) {
  EXPECT_TRUE(blas::begins_small_gemm_chain(product(0, 1, 2, 64, 400, 64)));
  EXPECT_FALSE(blas::begins_small_gemm_chain(product(0, 1, 2, 65, 8, 8)));
  EXPECT_FALSE(blas::begins_small_gemm_chain(product(0, 1, 2, 8, 8, 65)));
  EXPECT_FALSE(blas::begins_small_gemm_chain(product(0, 1, 2, 8, 8, 7)));  // A's rows 7 floats apart
  blas::SmallGemmLaunch by_columns = product(0, 1, 2, 8, 8, 7);
  by_columns.a_row = 1;  // op(A) by columns, 8 floats apart
  by_columns.a_col = 8;
  EXPECT_TRUE(blas::begins_small_gemm_chain(by_columns));
  blas::SmallGemmLaunch shifted = product(0, 1, 2, 8, 8, 8);
  shifted.a = static_cast<const float*>(shifted.a) + 1;  // A's start off 16 bytes
  EXPECT_FALSE(blas::begins_small_gemm_chain(shifted));
  for (auto change : {+[](blas::SmallGemmLaunch& l) { l.beta = 0.5; }, +[](blas::SmallGemmLaunch& l) { l.batch = 2; },
                      +[](blas::SmallGemmLaunch& l) { l.bias = l.a; },
                      +[](blas::SmallGemmLaunch& l) { l.activation = blas::GemmActivation::relu; },
                      +[](blas::SmallGemmLaunch& l) { l.c = const_cast<void*>(l.b); }}) {
    blas::SmallGemmLaunch l = product(0, 1, 2, 8, 8, 8);
    change(l);
    EXPECT_FALSE(blas::begins_small_gemm_chain(l));
  }
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, CudaGemmChainTest, ::testing::ValuesIn(accel::testing::kEveryGpuTarget),
                         accel::testing::target_name);

}  // namespace
}  // namespace accel
