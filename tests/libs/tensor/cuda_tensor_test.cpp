// The tensor requests on CUDA (cuTENSOR) against the CPU device (OpenBLAS, Eigen), on fresh random inputs over the
// grid of mode patterns and dtypes of tensor_cases.hpp, on CUDA devices in process and isolated; plans cached (a
// repeated request plans nothing new). Skipped without a GPU, and where libcutensor.so.2 cannot be loaded
// (scripts/gpu-send-cutensor sends it to a machine that lacks it) or this build has no cuTENSOR.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <ostream>
#include <random>

#include "tensor_cases.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/test_seed.hpp"

namespace accel::tensor {
namespace {

using accel::testing::IsOk;
using namespace testing;  // NOLINT(google-build-using-namespace): the tensor test helpers

std::string describe(const Spec& s) {
  return fmt::format("op {} {},{}->{} {} compute {} alpha {} beta {} gamma {}{}", static_cast<int>(s.op), s.a, s.b, s.d,
                     to_string(s.dtype), to_string(s.compute), s.alpha, s.beta, s.gamma, s.in_place ? " in place" : "");
}

// The plan cache's entries and hits, as the device reports them.
struct PlanStats {
  std::uint64_t entries = 0;
  std::uint64_t hits = 0;
};

class CudaTensorTest : public ::testing::TestWithParam<Isolation> {
 protected:
  void SetUp() override {
    ACCEL_OPEN_CUDA_OR_SKIP(system_, (DeviceOptions{.kind = DeviceKind::cuda, .isolation = GetParam()}), device);
    gpu_ = device;
    // A 1x1 product tells whether cuTENSOR is there at all: the family names its absence (unavailable, from
    // cuTENSOR, with no library code). Any other failure of the probe is the test's failure.
    const Spec probe{.op = Op::contract, .a = "ik", .b = "kj", .d = "ij", .sizes = {{'i', 1}, {'j', 1}, {'k', 1}}};
    const Outcome out = run(*gpu_, probe, random_inputs(probe, rng_));
    if (out.status.code() == Code::unavailable && out.status.source() == Source::cutensor &&
        out.status.raw_code() == 0) {
      GTEST_SKIP() << "no cuTENSOR: " << out.status.to_string();
    }
    ASSERT_THAT(out.status, IsOk());
  }

  // Each spec on the GPU and on the CPU device, on the same fresh inputs: both near the loops' reference, and near
  // each other.
  void check(const std::vector<Spec>& specs, double low, double high, double slack = 1.0) {
    for (const Spec& spec : specs) {
      SCOPED_TRACE(describe(spec));
      const Inputs inputs = random_inputs(spec, rng_, low, high);
      const Outcome gpu = run(*gpu_, spec, inputs), cpu = run(cpu_, spec, inputs);
      ASSERT_THAT(gpu.status, IsOk());
      ASSERT_THAT(cpu.status, IsOk());
      const std::vector<double> expected = reference(spec, inputs);
      EXPECT_LE(rounding_error(gpu.d, expected, spec, inputs), slack * tolerance(spec.dtype));
      EXPECT_LE(rounding_error(gpu.d, cpu.d, spec, inputs), 2 * slack * tolerance(spec.dtype));
    }
  }

  PlanStats plan_stats() {
    PlanStats stats;
    Result<DeviceInfo> info = gpu_->info().wait();
    EXPECT_THAT(info, IsOk());
    if (!info.ok()) return stats;
    for (const CacheStats& cache : info->caches) {
      if (cache.name == "cutensor-plans") stats = {.entries = cache.entries, .hits = cache.hits};
    }
    return stats;
  }

  System system_;
  Device cpu_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::optional<Device> gpu_;
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

constexpr DType kDtypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

TEST_P(CudaTensorTest, ContractionsMatchTheCpuOverEveryModePattern) {
  for (DType dtype : kDtypes) check(contraction_grid(dtype), -1.0, 1.0);
}

TEST_P(CudaTensorTest, ElementwiseReductionsAndPermutationsMatchTheCpu) {
  for (DType dtype : kDtypes) check(elementwise_grid(dtype), 0.25, 1.25);
}

TEST_P(CudaTensorTest, ReducedPrecisionComputeTypesStayClose) {
  // tf32 and 16-bit compute keep about 10 (bf16: 7) bits of the inputs; 3xtf32 about f32's.
  const std::pair<Compute, double> computes[] = {
      {Compute::tf32, 300}, {Compute::tf32x3, 3}, {Compute::f16, 300}, {Compute::bf16, 2000}};
  for (const auto& [compute, slack] : computes) {
    Spec spec{.op = Op::contract, .a = "bhqd", .b = "bhkd", .d = "bhqk", .sizes = kSizes, .compute = compute};
    check({spec}, -1.0, 1.0, slack);
  }
  for (DType dtype : {DType::f16, DType::bf16}) {
    std::vector<Spec> specs = elementwise_grid(dtype);
    for (Spec& spec : specs) spec.compute = dtype == DType::f16 ? Compute::f16 : Compute::bf16;
    check(specs, 0.25, 1.25, 4.0);
  }
}

TEST_P(CudaTensorTest, LargerContractionsMatchTheCpu) {
  const Sizes sizes = {{'b', 4}, {'h', 8}, {'q', 128}, {'k', 96}, {'d', 64}};
  for (DType dtype : kDtypes) {
    check({{.op = Op::contract, .a = "bhqd", .b = "bhkd", .d = "bhqk", .sizes = sizes, .dtype = dtype},
           {.op = Op::contract, .a = "bhqk", .b = "bhkd", .d = "bqhd", .sizes = sizes, .dtype = dtype, .beta = 1.0}},
          -1.0, 1.0);
  }
}

TEST_P(CudaTensorTest, ARepeatedRequestReusesItsPlan) {
  if (GetParam() == Isolation::worker_process) GTEST_SKIP() << "the plan cache lives in the worker";
  const Spec spec{.op = Op::contract, .a = "abcd", .b = "cdef", .d = "abef", .sizes = kSizes};
  const Inputs inputs = random_inputs(spec, rng_);
  ASSERT_THAT(run(*gpu_, spec, inputs).status, IsOk());
  const PlanStats before = plan_stats();
  for (int i = 0; i < 3; ++i) ASSERT_THAT(run(*gpu_, spec, inputs).status, IsOk());
  const PlanStats after = plan_stats();
  EXPECT_EQ(after.entries, before.entries);
  EXPECT_EQ(after.hits, before.hits + 3);
}

INSTANTIATE_TEST_SUITE_P(Devices, CudaTensorTest, ::testing::Values(Isolation::in_process, Isolation::worker_process),
                         [](const auto& info) {
                           return info.param == Isolation::in_process ? "in_process" : "isolated";
                         });

}  // namespace
}  // namespace accel::tensor
