// GEMM on the GPU (cuBLASLt, and the small kernel of ours below its sizes) against a float64 reference computed from
// the exact input values, over a grid of dtypes, layouts, transposes, shapes, batches and epilogues, on fresh random
// inputs. Skipped without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <optional>
#include <random>

#include "accel/libs/blas/gemm.hpp"
#include "libs/blas/blas_kernels.hpp"
#include "libs/blas/cublaslt_gemm.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/test_seed.hpp"

namespace accel {
namespace {

using testing::HostArray;
using testing::IsOk;
using testing::StatusIs;

struct Case {
  DType input;
  DType output;
  GemmCompute compute;
  double tolerance;
};

std::string describe(const Case& c) {
  return fmt::format("{}->{}{}", to_string(c.input), to_string(c.output),
                     c.compute == GemmCompute::tf32 ? " tf32" : "");
}

// C = epilogue(alpha op(A) op(B) + beta C), in float64 over the stored values.
std::vector<double> reference(const GemmGeometry& g, const HostArray& a, const HostArray& b, const HostArray& c,
                              const HostArray* bias, double alpha, double beta) {
  const GemmShape& s = g.shape;
  const bool rm = s.order == MatrixOrder::row_major;
  auto at = [rm](std::int64_t r, std::int64_t col, std::int64_t ld) { return rm ? r * ld + col : r + col * ld; };
  std::vector<double> out = c.values;
  for (std::int64_t batch = 0; batch < s.batch; ++batch) {
    for (std::int64_t i = 0; i < s.m; ++i) {
      for (std::int64_t j = 0; j < s.n; ++j) {
        double sum = 0;
        for (std::int64_t p = 0; p < s.k; ++p) {
          const std::int64_t ai = s.transpose_a == Transpose::none ? at(i, p, s.lda) : at(p, i, s.lda);
          const std::int64_t bi = s.transpose_b == Transpose::none ? at(p, j, s.ldb) : at(j, p, s.ldb);
          sum += a.values[batch * s.stride_a + ai] * b.values[batch * s.stride_b + bi];
        }
        const std::int64_t ci = batch * s.stride_c + at(i, j, s.ldc);
        double v = alpha * sum + beta * c.values[ci];
        if (bias) v += bias->values[rm ? j : i];
        out[ci] = activate(s.epilogue.activation, v);
      }
    }
  }
  return out;
}

class CudaGemmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ACCEL_OPEN_CUDA_OR_SKIP(system_, {.kind = DeviceKind::cuda}, device);
    device_ = device;
  }

  // Runs `shape` on the GPU with fresh random inputs and checks it against the reference.
  void check(GemmShape shape, double tolerance, double alpha = 0.75, double beta = 0.0) {
    SCOPED_TRACE(to_string(shape));
    Device& device = *device_;
    Result<GemmGeometry> geometry = plan_gemm_geometry(shape);
    ASSERT_THAT(geometry, IsOk());
    HostArray a(shape.input_type, geometry->a_extent), b(shape.input_type, geometry->b_extent);
    HostArray c(shape.output_type, geometry->c_extent), bias(shape.output_type, geometry->bias_extent);
    a.fill_uniform(rng_);
    b.fill_uniform(rng_);
    c.fill_uniform(rng_);
    bias.fill_uniform(rng_);

    auto upload = [&](const HostArray& host) -> BufferHandle {
      if (host.size() == 0) return {};
      Result<BufferHandle> handle = device.ask(Allocate{.dtype = host.dtype, .count = host.size()}).wait();
      EXPECT_THAT(handle, IsOk());
      EXPECT_THAT(device.ask(CopyToDevice{.source = host.source(), .destination = *handle}).wait(), IsOk());
      return *handle;
    };
    Gemm gemm{.shape = shape, .a = upload(a), .b = upload(b), .c = upload(c), .alpha = alpha, .beta = beta};
    if (shape.epilogue.has_bias()) gemm.bias = upload(bias);
    ASSERT_THAT(device.gemm(gemm).wait(), IsOk());

    HostArray out(shape.output_type, c.size());
    ASSERT_THAT(device.ask(CopyToHost{.source = gemm.c, .destination = out.destination()}).wait(), IsOk());
    out.decode();
    const std::vector<double> expected =
        reference(*geometry, a, b, c, shape.epilogue.has_bias() ? &bias : nullptr, alpha, beta);
    const double error = testing::relative_error(out.values, expected);
    EXPECT_LE(error, tolerance) << "relative error " << error;
    for (const BufferHandle& h : {gemm.a, gemm.b, gemm.c, gemm.bias})
      if (!h.is_null()) {
        EXPECT_THAT(device.free(h).wait(), IsOk());
      }
  }

  System system_;
  std::optional<Device> device_;
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

const Case kCases[] = {
    {DType::f32, DType::f32, GemmCompute::standard, 1e-5},  {DType::f32, DType::f32, GemmCompute::tf32, 2e-3},
    {DType::f64, DType::f64, GemmCompute::standard, 1e-12}, {DType::f16, DType::f16, GemmCompute::standard, 2e-3},
    {DType::f16, DType::f32, GemmCompute::standard, 1e-5},  {DType::bf16, DType::bf16, GemmCompute::standard, 1e-2},
    {DType::bf16, DType::f32, GemmCompute::standard, 1e-5},
};

TEST_F(CudaGemmTest, DtypesOrdersTransposesAndShapesMatchTheReference) {
  const std::int64_t sizes[][3] = {{64, 64, 64}, {127, 65, 33}, {256, 128, 512}};
  for (const Case& c : kCases) {
    for (MatrixOrder order : {MatrixOrder::row_major, MatrixOrder::column_major}) {
      for (Transpose ta : {Transpose::none, Transpose::transpose}) {
        for (Transpose tb : {Transpose::none, Transpose::transpose}) {
          for (const auto& mnk : sizes) {
            SCOPED_TRACE(describe(c));
            check({.order = order,
                   .transpose_a = ta,
                   .transpose_b = tb,
                   .m = mnk[0],
                   .n = mnk[1],
                   .k = mnk[2],
                   .input_type = c.input,
                   .output_type = c.output,
                   .compute = c.compute},
                  c.tolerance);
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

TEST_F(CudaGemmTest, Fp8E4M3InTheTnLayoutMatchesTheReference) {
  for (DType output : {DType::bf16, DType::f16, DType::f32}) {
    for (MatrixOrder order : {MatrixOrder::row_major, MatrixOrder::column_major}) {
      const bool rm = order == MatrixOrder::row_major;
      for (const auto& mnk : {std::array<std::int64_t, 3>{64, 64, 64}, {128, 256, 512}, {48, 80, 1024}}) {
        check({.order = order,
               .transpose_a = rm ? Transpose::none : Transpose::transpose,
               .transpose_b = rm ? Transpose::transpose : Transpose::none,
               .m = mnk[0],
               .n = mnk[1],
               .k = mnk[2],
               .input_type = DType::fp8_e4m3,
               .output_type = output},
              // Hopper's fp8 tensor-core instructions accumulate with fewer bits than f32: about 1e-4 was measured.
              output == DType::f32 ? 5e-4 : 1e-2);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_F(CudaGemmTest, EpiloguesMatchTheReference) {
  for (const Case& c : kCases) {
    for (MatrixOrder order : {MatrixOrder::row_major, MatrixOrder::column_major}) {
      const BiasVector bias = order == MatrixOrder::row_major ? BiasVector::per_column : BiasVector::per_row;
      for (Epilogue e : std::initializer_list<Epilogue>{{.bias = bias},
                                                        {.activation = Activation::relu},
                                                        {.activation = Activation::relu, .bias = bias},
                                                        {.activation = Activation::gelu_tanh},
                                                        {.activation = Activation::gelu_tanh, .bias = bias}}) {
        SCOPED_TRACE(describe(c));
        // cuBLASLt's GELU does not keep f64 precision: 2e-10 relative error was measured on the H100.
        const bool f64_gelu = c.input == DType::f64 && e.activation == Activation::gelu_tanh;
        // The small kernel's size, then cuBLASLt's.
        for (const auto& mnk : {std::array<std::int64_t, 3>{96, 80, 128}, {320, 288, 256}}) {
          check({.order = order,
                 .m = mnk[0],
                 .n = mnk[1],
                 .k = mnk[2],
                 .input_type = c.input,
                 .output_type = c.output,
                 .compute = c.compute,
                 .epilogue = e},
                f64_gelu ? 1e-9 : c.tolerance);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST_F(CudaGemmTest, StridedBatchesPaddedLeadingDimensionsAndBeta) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(describe(c));
    check({.m = 64,
           .n = 48,
           .k = 40,
           .lda = 48,
           .ldb = 56,
           .ldc = 64,
           .batch = 3,
           .input_type = c.input,
           .output_type = c.output,
           .compute = c.compute},
          c.tolerance, 1.25, 0.5);
    if (HasFatalFailure()) return;
    check({.order = MatrixOrder::column_major,
           .transpose_a = Transpose::transpose,
           .m = 33,
           .n = 17,
           .k = 65,
           .batch = 4,
           .stride_a = 65 * 40,
           .input_type = c.input,
           .output_type = c.output,
           .compute = c.compute,
           .epilogue = {.activation = Activation::relu, .bias = BiasVector::per_row}},
          c.tolerance, 0.5, 1.0);
    if (HasFatalFailure()) return;
    // Past the small kernel's sizes: cuBLASLt's batch.
    check({.m = 160,
           .n = 144,
           .k = 136,
           .lda = 144,
           .ldb = 160,
           .ldc = 160,
           .batch = 2,
           .input_type = c.input,
           .output_type = c.output,
           .compute = c.compute},
          c.tolerance, 0.75, -0.5);
    if (HasFatalFailure()) return;
  }
}

// The small kernel's shapes (f32 within blas::small_gemm's bounds, each checked to be inside them, so that moving the
// bounds keeps this test on the kernel): partial tiles, sums of one stage and of two, batches, over orders,
// transposes, padded leading dimensions, alpha 0, beta and the epilogues, through both of the kernel's forms (a plain
// product's: one member, beta 0, no epilogue; the rest's). f64, f16 and bf16 run the same shapes on cuBLASLt.
TEST_F(CudaGemmTest, SmallProductsMatchTheReference) {
  struct SmallCase {
    std::int64_t m, n, k, batch;
  };
  const SmallCase shapes[] = {{8, 8, 8, 1}, {31, 45, 17, 1}, {100, 150, 128, 1}, {128, 128, 65, 1}, {16, 30, 33, 20}};
  for (const SmallCase& shape : shapes)
    ASSERT_TRUE(blas::small_gemm(shape.m, shape.n, shape.k, shape.batch))
        << shape.m << "x" << shape.n << "x" << shape.k;
  int variant = 0;
  for (const Case& c : kCases) {
    if (c.compute == GemmCompute::tf32) continue;  // cuBLASLt's at every size
    for (const SmallCase& shape : shapes) {
      SCOPED_TRACE(describe(c));
      const MatrixOrder order = variant % 2 == 0 ? MatrixOrder::row_major : MatrixOrder::column_major;
      const Transpose ta = variant % 3 == 0 ? Transpose::transpose : Transpose::none;
      const Transpose tb = variant % 4 < 2 ? Transpose::none : Transpose::transpose;
      const BiasVector bias = order == MatrixOrder::row_major ? BiasVector::per_column : BiasVector::per_row;
      const Epilogue epilogues[] = {
          {}, {.bias = bias}, {.activation = Activation::relu, .bias = bias}, {.activation = Activation::gelu_tanh}};
      // Leading dimensions padded by 3 on every other variant.
      const std::int64_t pad = variant % 2 == 0 ? 0 : 3;
      const bool rm = order == MatrixOrder::row_major;
      const std::int64_t a_cols = (ta == Transpose::none) == rm ? shape.k : shape.m;
      const std::int64_t a_rows = (ta == Transpose::none) == rm ? shape.m : shape.k;
      const std::int64_t b_cols = (tb == Transpose::none) == rm ? shape.n : shape.k;
      const std::int64_t b_rows = (tb == Transpose::none) == rm ? shape.k : shape.n;
      const std::int64_t c_cols = rm ? shape.n : shape.m, c_rows = rm ? shape.m : shape.n;
      check({.order = order,
             .transpose_a = ta,
             .transpose_b = tb,
             .m = shape.m,
             .n = shape.n,
             .k = shape.k,
             .lda = pad == 0 ? 0 : std::max<std::int64_t>(a_cols, 1) + pad,
             .ldb = pad == 0 ? 0 : std::max<std::int64_t>(b_cols, 1) + pad,
             .ldc = pad == 0 ? 0 : c_cols + pad,
             .batch = shape.batch,
             .stride_a = pad == 0 ? 0 : a_rows * (std::max<std::int64_t>(a_cols, 1) + pad) + 5,
             .stride_b = pad == 0 ? 0 : b_rows * (std::max<std::int64_t>(b_cols, 1) + pad) + 7,
             .stride_c = pad == 0 ? 0 : c_rows * (c_cols + pad) + 1,
             .input_type = c.input,
             .output_type = c.output,
             .epilogue = epilogues[variant % 4]},
            // cuBLASLt's GELU in f64, as in EpiloguesMatchTheReference.
            c.input == DType::f64 && epilogues[variant % 4].activation == Activation::gelu_tanh ? 1e-9 : c.tolerance,
            variant % 5 == 0 ? 0.0 : 0.75, variant % 3 == 1 ? 0.0 : -1.25);
      if (HasFatalFailure()) return;
      ++variant;
    }
  }
}

// A plan whose requests keep coming (its 8th run with beta = 0) times each algorithm cuBLASLt offers on the run's
// own operands and keeps the fastest (cublaslt_timing.cpp). An encoder layer's products, where it offers several:
// the runs before the timing, the timed run, the runs after it, and accumulations (beta != 0, never timed: each
// timing run would add to C again) all match the reference, an accumulation on a plan not timed yet included.
TEST_F(CudaGemmTest, TimedPlansAnswerAsTheReferenceBeforeAndAfterTheirTiming) {
  for (const DType dtype : {DType::f16, DType::bf16}) {
    SCOPED_TRACE(to_string(dtype));
    const double tolerance = dtype == DType::f16 ? 2e-3 : 1e-2;
    const GemmShape layer{.transpose_b = Transpose::transpose,
                          .m = 512,
                          .n = 1536,
                          .k = 384,
                          .input_type = dtype,
                          .output_type = dtype,
                          .epilogue = {.activation = Activation::gelu_tanh, .bias = BiasVector::per_column}};
    for (std::uint32_t run = 0; run < blas::CublasLtGemm::kRunsBeforeTiming + 2; ++run)
      check(layer, tolerance, 1.0, 0.0);
    check(layer, tolerance, 1.0, 1.0);
    const GemmShape accumulated{
        .transpose_b = Transpose::transpose, .m = 320, .n = 384, .k = 1536, .input_type = dtype, .output_type = dtype};
    check(accumulated, tolerance, 1.0, 1.0);
    for (std::uint32_t run = 0; run < blas::CublasLtGemm::kRunsBeforeTiming + 1; ++run)
      check(accumulated, tolerance, 0.5, 0.0);
    check(accumulated, tolerance, 0.5, -1.0);
    if (HasFatalFailure()) return;
  }
}

// cuBLASLt refuses m = 0 or n = 0 (CUBLAS_STATUS_EXECUTION_FAILED); accel answers them as the no-op they are, as
// the CPU device does, and the stream keeps serving. k = 0 is C = beta C.
TEST_F(CudaGemmTest, EmptyProductsAreANoOpAndAnEmptySumScalesC) {
  Device& device = *device_;
  const std::vector<float> ones(64, 1.0f);
  Buffer<float> a = *device.allocate<float>(64).wait(), b = *device.allocate<float>(64).wait();
  Buffer<float> c = *device.allocate<float>(64).wait();
  for (const Buffer<float>& buffer : {a, b, c}) ASSERT_THAT(device.upload(std::span(ones), buffer).wait(), IsOk());
  for (const GemmShape& shape :
       {GemmShape{.m = 0, .n = 4, .k = 4}, GemmShape{.m = 4, .n = 0, .k = 4}, GemmShape{.m = 0, .n = 0, .k = 0}}) {
    SCOPED_TRACE(to_string(shape));
    EXPECT_THAT(device.gemm({.shape = shape, .a = a, .b = b, .c = c, .alpha = 1.0, .beta = 3.0}).wait(), IsOk());
  }
  ASSERT_THAT(device.gemm({.shape = {.m = 4, .n = 4, .k = 0}, .a = a, .b = b, .c = c, .beta = 0.5}).wait(), IsOk());
  std::vector<float> out(64);
  ASSERT_THAT(device.download(c, std::span(out)).wait(), IsOk());
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], 0.5f) << "element " << i;
  for (int i = 16; i < 64; ++i) EXPECT_EQ(out[i], 1.0f) << "element " << i << " lies outside C";
  check({.m = 32, .n = 16, .k = 8}, 1e-5);
}

TEST_F(CudaGemmTest, UnsupportedCombinationsAreRefusedBeforeLaunch) {
  Device& device = *device_;
  auto buffer = [&](DType dtype, std::uint64_t count) {
    return *device.ask(Allocate{.dtype = dtype, .count = count}).wait();
  };
  const BufferHandle a8 = buffer(DType::fp8_e4m3, 64 * 64), b8 = buffer(DType::fp8_e4m3, 64 * 64);
  const BufferHandle c16 = buffer(DType::bf16, 64 * 64);
  EXPECT_THAT(
      device
          .gemm({.shape = {.m = 64, .n = 64, .k = 64, .input_type = DType::fp8_e4m3, .output_type = DType::bf16},
                 .a = a8,
                 .b = b8,
                 .c = c16})
          .wait(),
      StatusIs(Code::not_supported, "TN"));
  EXPECT_THAT(device
                  .gemm({.shape = {.m = 64,
                                   .n = 64,
                                   .k = 64,
                                   .input_type = DType::bf16,
                                   .output_type = DType::bf16,
                                   .compute = GemmCompute::tf32},
                         .a = c16,
                         .b = c16,
                         .c = c16})
                  .wait(),
              StatusIs(Code::invalid_argument, "tf32"));
  EXPECT_THAT(device
                  .gemm({.shape = {.m = 64, .n = 64, .k = 64, .input_type = DType::f16, .output_type = DType::bf16},
                         .a = c16,
                         .b = c16,
                         .c = c16})
                  .wait(),
              StatusIs(Code::not_supported, "f16"));
  const BufferHandle f = buffer(DType::f32, 64 * 64);
  EXPECT_THAT(device.gemm({.shape = {.m = 64, .n = 64, .k = 64}, .a = f, .b = c16, .c = f}).wait(),
              StatusIs(Code::invalid_argument, "bf16"));
  // The device still serves.
  const BufferHandle g = buffer(DType::f32, 64 * 64);
  EXPECT_THAT(device.gemm({.shape = {.m = 64, .n = 64, .k = 64}, .a = f, .b = f, .c = g}).wait(), IsOk());
}

TEST_F(CudaGemmTest, ThePlanCacheIsConsultedAndEvictsTheLeastRecentlyUsed) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, (DeviceOptions{.kind = DeviceKind::cuda, .blas = {.plan_cache_capacity = 2}}),
                          device);
  // Sizes past the small kernel's (blas::small_gemm), which has no plans.
  const BufferHandle a = *device.ask(Allocate{.count = 224 * 224}).wait();
  const BufferHandle b = *device.ask(Allocate{.count = 224 * 224}).wait();
  const BufferHandle c = *device.ask(Allocate{.count = 224 * 224}).wait();
  auto run = [&](std::int64_t n) {
    EXPECT_THAT(device.gemm({.shape = {.m = n, .n = n, .k = n}, .a = a, .b = b, .c = c}).wait(), IsOk());
  };
  auto plans = [&] {
    const Result<DeviceInfo> info = device.info().wait();
    const CacheStats* stats = info.ok() ? info->cache("cublaslt-plans") : nullptr;
    EXPECT_NE(stats, nullptr);
    return stats != nullptr ? *stats : CacheStats{};
  };
  run(160);
  run(160);
  run(160);
  EXPECT_EQ(plans().misses, 1u);
  EXPECT_EQ(plans().hits, 2u);
  run(192);
  run(224);  // evicts 160
  EXPECT_EQ(plans().evictions, 1u);
  EXPECT_EQ(plans().entries, 2u);
  run(192);  // still cached
  EXPECT_EQ(plans().hits, 3u);
  run(160);  // rebuilt
  EXPECT_EQ(plans().misses, 4u);
}

}  // namespace
}  // namespace accel
