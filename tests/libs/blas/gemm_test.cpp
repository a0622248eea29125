// GEMM through the device actor against a naive float64 reference, on fresh random shapes and data.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "accel/device/device.hpp"
#include "testing/status_matchers.hpp"
#include "testing/test_seed.hpp"

namespace accel {
namespace {

using testing::IsOk;
using testing::StatusIs;

// Element (row, col) of a stored matrix.
std::int64_t at(MatrixOrder order, std::int64_t row, std::int64_t col, std::int64_t ld) {
  return order == MatrixOrder::row_major ? row * ld + col : col * ld + row;
}

// The epilogues Gemm fuses other than identity: relu and gelu_tanh, each with and without the bias along C's
// contiguous dimension.
std::vector<Epilogue> fused_epilogues(MatrixOrder order) {
  const BiasVector bias = order == MatrixOrder::row_major ? BiasVector::per_column : BiasVector::per_row;
  return {{.bias = bias},
          {.activation = Activation::relu},
          {.activation = Activation::relu, .bias = bias},
          {.activation = Activation::gelu_tanh},
          {.activation = Activation::gelu_tanh, .bias = bias}};
}

template <class T>
std::vector<double> reference(const GemmGeometry& g, const std::vector<T>& a, const std::vector<T>& b,
                              const std::vector<T>& c, const std::vector<T>& bias, double alpha, double beta) {
  const GemmShape& s = g.shape;
  std::vector<double> out(c.begin(), c.end());
  const bool ta = s.transpose_a == Transpose::transpose, tb = s.transpose_b == Transpose::transpose;
  for (std::int64_t batch = 0; batch < s.batch; ++batch)
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) {
        double acc = 0;
        for (std::int64_t p = 0; p < s.k; ++p) {
          const double av = a[batch * s.stride_a + (ta ? at(s.order, p, i, s.lda) : at(s.order, i, p, s.lda))];
          const double bv = b[batch * s.stride_b + (tb ? at(s.order, j, p, s.ldb) : at(s.order, p, j, s.ldb))];
          acc += av * bv;
        }
        const std::int64_t ci = batch * s.stride_c + at(s.order, i, j, s.ldc);
        double v = alpha * acc + (beta == 0 ? 0.0 : beta * c[ci]);
        if (s.epilogue.bias == BiasVector::per_column) v += bias[j];
        if (s.epilogue.bias == BiasVector::per_row) v += bias[i];
        out[ci] = activate(s.epilogue.activation, v);
      }
  return out;
}

class GemmTest : public ::testing::Test {
 protected:
  template <class T>
  void check(GemmShape shape, double alpha, double beta, double tolerance) {
    shape.input_type = shape.output_type = dtype_of<T>();
    Result<GemmGeometry> geometry = plan_gemm_geometry(shape);
    ASSERT_THAT(geometry, IsOk());
    std::uniform_real_distribution<double> dist(-1, 1);
    auto random = [&](std::uint64_t n) {
      std::vector<T> v(std::max<std::uint64_t>(n, 1));
      for (T& x : v) x = static_cast<T>(dist(rng_));
      return v;
    };
    std::vector<T> a = random(geometry->a_extent), b = random(geometry->b_extent), c = random(geometry->c_extent);
    std::vector<T> bias = random(std::max<std::uint64_t>(geometry->bias_extent, 1));
    Buffer<T> da = *device_.allocate<T>(a.size()).wait(), db = *device_.allocate<T>(b.size()).wait();
    Buffer<T> dc = *device_.allocate<T>(c.size()).wait(), dbias = *device_.allocate<T>(bias.size()).wait();
    ASSERT_THAT(device_.upload(std::span<const T>(a), da).wait(), IsOk());
    ASSERT_THAT(device_.upload(std::span<const T>(b), db).wait(), IsOk());
    ASSERT_THAT(device_.upload(std::span<const T>(c), dc).wait(), IsOk());
    ASSERT_THAT(device_.upload(std::span<const T>(bias), dbias).wait(), IsOk());

    Gemm gemm{.shape = shape, .a = da, .b = db, .c = dc, .alpha = alpha, .beta = beta};
    if (shape.epilogue.has_bias()) gemm.bias = dbias;
    ASSERT_THAT(device_.gemm(gemm).wait(), IsOk()) << to_string(shape);
    std::vector<T> got(c.size());
    ASSERT_THAT(device_.download(dc, std::span<T>(got)).wait(), IsOk());

    const std::vector<double> want = reference(*geometry, a, b, c, bias, alpha, beta);
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_TRUE(std::isfinite(static_cast<double>(got[i])));
      diff += (got[i] - want[i]) * (got[i] - want[i]);
      norm += want[i] * want[i];
    }
    EXPECT_LE(std::sqrt(diff / std::max(norm, 1e-300)), tolerance) << to_string(geometry->shape);
  }

  System system_;
  Device device_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

TEST_F(GemmTest, RandomShapesAllLayoutsAndTransposesMatchTheReference) {
  std::uniform_int_distribution<std::int64_t> size(1, 70);
  for (MatrixOrder order : {MatrixOrder::row_major, MatrixOrder::column_major})
    for (Transpose ta : {Transpose::none, Transpose::transpose})
      for (Transpose tb : {Transpose::none, Transpose::transpose}) {
        GemmShape shape{
            .order = order, .transpose_a = ta, .transpose_b = tb, .m = size(rng_), .n = size(rng_), .k = size(rng_)};
        check<float>(shape, 1.0, 0.0, 1e-5);
        check<double>(shape, 0.75, -0.5, 1e-12);
      }
}

TEST_F(GemmTest, PaddedLeadingDimensionsAndStridedBatchesMatchTheReference) {
  std::uniform_int_distribution<std::int64_t> size(1, 40), pad(0, 5);
  for (int trial = 0; trial < 6; ++trial) {
    const std::int64_t m = size(rng_), n = size(rng_), k = size(rng_);
    const bool row_major = trial % 2 == 0;
    GemmShape shape{.order = row_major ? MatrixOrder::row_major : MatrixOrder::column_major,
                    .transpose_a = trial % 3 == 0 ? Transpose::transpose : Transpose::none,
                    .m = m,
                    .n = n,
                    .k = k,
                    .batch = 1 + trial};
    Result<GemmGeometry> packed = plan_gemm_geometry(shape);
    ASSERT_THAT(packed, IsOk());
    shape.lda = packed->shape.lda + pad(rng_);
    shape.ldb = packed->shape.ldb + pad(rng_);
    shape.ldc = packed->shape.ldc + pad(rng_);
    Result<GemmGeometry> padded = plan_gemm_geometry(shape);
    shape.stride_a = padded->shape.stride_a + pad(rng_);
    shape.stride_c = padded->shape.stride_c + 3;
    check<float>(shape, 1.5, 0.25, 1e-5);
    check<double>(shape, 1.5, 0.25, 1e-12);
  }
}

TEST_F(GemmTest, EpiloguesMatchTheReference) {
  for (MatrixOrder order : {MatrixOrder::row_major, MatrixOrder::column_major})
    for (const Epilogue& e : fused_epilogues(order)) {
      check<float>({.order = order, .m = 33, .n = 17, .k = 29, .epilogue = e}, 1.0, 0.5, 1e-5);
      check<double>({.order = order, .m = 8, .n = 40, .k = 3, .batch = 3, .epilogue = e}, 2.0, 0.0, 1e-12);
    }
}

TEST_F(GemmTest, KZeroScalesCByBeta) { check<double>({.m = 5, .n = 7, .k = 0}, 1.0, 0.5, 1e-15); }

class GemmValidationTest : public GemmTest {
 protected:
  Status run(const Gemm& gemm) { return device_.gemm(gemm).wait().status(); }
};

TEST_F(GemmValidationTest, ShapesThatDoNotFitTheBuffersAreRefusedBeforeRunning) {
  Buffer<float> a = *device_.allocate<float>(8 * 4).wait(), b = *device_.allocate<float>(4 * 8).wait();
  Buffer<float> c = *device_.allocate<float>(8 * 8).wait();
  EXPECT_THAT(run({.shape = {.m = 8, .n = 8, .k = 4}, .a = a, .b = b, .c = c}), IsOk());
  EXPECT_THAT(run({.shape = {.m = 8, .n = 8, .k = 5}, .a = a, .b = b, .c = c}),
              StatusIs(Code::invalid_argument, "operand 'a'"));
  EXPECT_THAT(run({.shape = {.m = 9, .n = 8, .k = 4}, .a = a, .b = b, .c = c}), StatusIs(Code::invalid_argument));
  EXPECT_THAT(run({.shape = {.m = 8, .n = 8, .k = 4, .batch = 2}, .a = a, .b = b, .c = c}),
              StatusIs(Code::invalid_argument, "lie outside"));
  EXPECT_THAT(run({.shape = {.m = 8, .n = 8, .k = 4, .lda = 3}, .a = a, .b = b, .c = c}),
              StatusIs(Code::invalid_argument, "lda = 3 is smaller"));
  EXPECT_THAT(run({.shape = {.m = -1, .n = 8, .k = 4}, .a = a, .b = b, .c = c}),
              StatusIs(Code::invalid_argument, "negative"));
  EXPECT_THAT(run({.shape = {.m = 8, .n = 8, .k = 4, .batch = 0}, .a = a, .b = b, .c = c}),
              StatusIs(Code::invalid_argument, "batch"));
  EXPECT_THAT(run({.shape = {.m = 8, .n = 8, .k = 4, .batch = 2, .stride_c = 10}, .a = a, .b = b, .c = c}),
              StatusIs(Code::invalid_argument, "overlap"));
  EXPECT_THAT(run({.shape = {.m = 1ll << 40, .n = 1ll << 40, .k = 1, .ldc = 1ll << 40}, .a = a, .b = b, .c = c}),
              StatusIs(Code::invalid_argument, "overflow"));
}

TEST_F(GemmValidationTest, WrongDtypesNullsAliasesAndMissingBiasAreRefused) {
  Buffer<float> a = *device_.allocate<float>(16).wait(), c = *device_.allocate<float>(16).wait();
  Buffer<double> d = *device_.allocate<double>(16).wait();
  const GemmShape shape{.m = 4, .n = 4, .k = 4};
  EXPECT_THAT(run({.shape = shape, .a = a, .b = d, .c = c}), StatusIs(Code::invalid_argument, "operand 'b' holds f64"));
  EXPECT_THAT(run({.shape = shape, .a = a, .c = c}), StatusIs(Code::invalid_argument, "operand 'b' is a null"));
  EXPECT_THAT(run({.shape = shape, .a = a, .b = a, .c = a}), StatusIs(Code::invalid_argument, "alias"));
  EXPECT_THAT(
      run({.shape = {.m = 4, .n = 4, .k = 4, .epilogue = {.bias = BiasVector::per_column}}, .a = a, .b = a, .c = c}),
      StatusIs(Code::invalid_argument, "operand 'bias'"));
  EXPECT_THAT(run({.shape = shape, .a = a, .b = a, .c = c, .bias = c}), StatusIs(Code::invalid_argument, "epilogue"));
  EXPECT_THAT(run({.shape = {.m = 4, .n = 4, .k = 4, .input_type = DType::bf16, .output_type = DType::f32},
                   .a = a,
                   .b = a,
                   .c = c}),
              StatusIs(Code::not_supported, "f32 and f64 only"));
}

TEST_F(GemmValidationTest, ActivationsAndBiasesCuBlasLtCannotFuseAreNotSupportedOnEveryDevice) {
  Buffer<float> a = *device_.allocate<float>(16).wait(), c = *device_.allocate<float>(16).wait();
  const auto with = [](Epilogue epilogue, MatrixOrder order = MatrixOrder::row_major) {
    return GemmShape{.order = order, .m = 4, .n = 4, .k = 4, .epilogue = epilogue};
  };
  for (Activation refused : {Activation::silu, Activation::gelu_erf, Activation::sigmoid, Activation::tanh}) {
    EXPECT_THAT(run({.shape = with({.activation = refused}), .a = a, .b = a, .c = c}),
                StatusIs(Code::not_supported, std::string(to_string(refused))));
  }
  EXPECT_THAT(run({.shape = with({.bias = BiasVector::per_row}), .a = a, .b = a, .c = c, .bias = c}),
              StatusIs(Code::not_supported, "per_row bias"));
  EXPECT_THAT(run({.shape = with({.bias = BiasVector::per_column}, MatrixOrder::column_major),
                   .a = a,
                   .b = a,
                   .c = c,
                   .bias = c}),
              StatusIs(Code::not_supported, "per_column bias"));
  EXPECT_THAT(run({.shape = with({.bias = BiasVector::per_channel}), .a = a, .b = a, .c = c, .bias = c}),
              StatusIs(Code::not_supported, "per_channel bias"));
}

TEST_F(GemmValidationTest, EmptyProductsAreANoOpAndAnEmptySumScalesC) {
  const std::vector<float> ones(64, 1.0f);
  Buffer<float> a = *device_.allocate<float>(64).wait(), b = *device_.allocate<float>(64).wait();
  Buffer<float> c = *device_.allocate<float>(64).wait();
  for (const Buffer<float>& buffer : {a, b, c}) ASSERT_THAT(device_.upload(std::span(ones), buffer).wait(), IsOk());
  EXPECT_THAT(run({.shape = {.m = 0, .n = 4, .k = 4}, .a = a, .b = b, .c = c, .beta = 3.0}), IsOk());
  EXPECT_THAT(run({.shape = {.m = 4, .n = 0, .k = 4}, .a = a, .b = b, .c = c, .beta = 3.0}), IsOk());
  EXPECT_THAT(run({.shape = {.m = 4, .n = 4, .k = 0}, .a = a, .b = b, .c = c, .beta = 0.5}), IsOk());
  std::vector<float> out(64);
  ASSERT_THAT(device_.download(c, std::span(out)).wait(), IsOk());
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], 0.5f) << "element " << i;
  for (int i = 16; i < 64; ++i) EXPECT_EQ(out[i], 1.0f) << "element " << i << " lies outside C";
}

TEST_F(GemmValidationTest, AStaleOperandIsRefused) {
  Buffer<float> a = *device_.allocate<float>(16).wait(), b = *device_.allocate<float>(16).wait();
  Buffer<float> c = *device_.allocate<float>(16).wait();
  ASSERT_THAT(device_.free(b).wait(), IsOk());
  EXPECT_THAT(run({.shape = {.m = 4, .n = 4, .k = 4}, .a = a, .b = b, .c = c}),
              StatusIs(Code::stale_handle, "operand 'b'"));
}

// Found by fuzz/wire_request_fuzzer: a stored A whose extent fits 64 bits but whose packed batch stride (one ld
// more) does not overflowed while the geometry was planned.
TEST(GemmGeometryTest, APackedBatchStrideThatOverflowsIsRefused) {
  EXPECT_THAT(plan_gemm_geometry({.m = 2, .n = 1, .k = 1, .lda = std::int64_t{1} << 62}),
              StatusIs(Code::invalid_argument, "packed batch stride"));
}

}  // namespace
}  // namespace accel
