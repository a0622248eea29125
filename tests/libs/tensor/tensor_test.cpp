// The tensor requests on the CPU device (OpenBLAS GEMMs, Eigen arrays), in process and isolated (where requests
// cross to the worker byte for byte), against naive loops in double over a grid of mode patterns and dtypes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <ostream>
#include <random>

#include "tensor_cases.hpp"
#include "testing/test_seed.hpp"

namespace accel::tensor {
namespace {

using accel::testing::IsOk;
using accel::testing::relative_error;
using namespace testing;  // NOLINT(google-build-using-namespace): the tensor test helpers

std::string describe(const Spec& s) {
  return fmt::format("op {} {},{}->{} {} alpha {} beta {} gamma {}{}", static_cast<int>(s.op), s.a, s.b, s.d,
                     to_string(s.dtype), s.alpha, s.beta, s.gamma, s.in_place ? " in place" : "");
}

class TensorTest : public ::testing::TestWithParam<Isolation> {
 protected:
  void check(const std::vector<Spec>& specs, double low, double high) {
    for (const Spec& spec : specs) {
      SCOPED_TRACE(describe(spec));
      const Inputs inputs = random_inputs(spec, rng_, low, high);
      const Outcome out = run(device_, spec, inputs);
      ASSERT_THAT(out.status, IsOk());
      EXPECT_LE(rounding_error(out.d, reference(spec, inputs), spec, inputs), tolerance(spec.dtype));
    }
  }

  System system_;
  Device device_ = *Device::open(system_, {.kind = DeviceKind::cpu, .isolation = GetParam()});
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

constexpr DType kDtypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

TEST_P(TensorTest, ContractionsMatchLoopsOverEveryModePattern) {
  for (DType dtype : kDtypes) check(contraction_grid(dtype), -1.0, 1.0);
}

TEST_P(TensorTest, ElementwiseReductionsAndPermutationsMatchLoops) {
  for (DType dtype : kDtypes) check(elementwise_grid(dtype), 0.25, 1.25);
}

TEST_P(TensorTest, ZeroScalarsReadNothing) {
  // NaN in a tensor whose scalar is 0 must not reach D, as in cuTENSOR.
  Spec spec{.op = Op::contract, .a = "ik", .b = "kj", .d = "ij", .sizes = kSizes, .alpha = 1.0, .beta = 0.0};
  Inputs inputs = random_inputs(spec, rng_);
  for (std::size_t i = 0; i < inputs.c.size(); ++i) inputs.c.set(i, NAN);
  Outcome out = run(device_, spec, inputs);
  ASSERT_THAT(out.status, IsOk());
  EXPECT_LE(relative_error(out.d, reference(spec, inputs)), tolerance(spec.dtype));

  spec = {.op = Op::binary, .a = "ij", .d = "ij", .sizes = kSizes, .alpha = 0.0, .gamma = 1.0};
  inputs = random_inputs(spec, rng_);
  for (std::size_t i = 0; i < inputs.a.size(); ++i) inputs.a.set(i, NAN);
  out = run(device_, spec, inputs);
  ASSERT_THAT(out.status, IsOk());
  EXPECT_LE(relative_error(out.d, reference(spec, inputs)), tolerance(spec.dtype));
}

TEST_P(TensorTest, ComputeTypesOfferedForADtypeRunOnTheCpu) {
  for (Compute compute : {Compute::tf32, Compute::tf32x3, Compute::f16, Compute::bf16}) {
    Spec spec{.op = Op::contract, .a = "bik", .b = "bkj", .d = "bij", .sizes = kSizes, .compute = compute};
    SCOPED_TRACE(to_string(compute));
    const Inputs inputs = random_inputs(spec, rng_);
    const Outcome out = run(device_, spec, inputs);
    ASSERT_THAT(out.status, IsOk());
    EXPECT_LE(relative_error(out.d, reference(spec, inputs)), tolerance(spec.dtype));
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, TensorTest, ::testing::Values(Isolation::in_process, Isolation::worker_process),
                         [](const auto& info) {
                           return info.param == Isolation::in_process ? "in_process" : "isolated";
                         });

}  // namespace
}  // namespace accel::tensor
