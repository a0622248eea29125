// Every BLAS routine of levels 1-3 beside GEMM (blas_recording_pipeline.hpp) recorded on a CUDA device, on every way
// it runs requests (each completion strategy, and isolated): launched three times, each launch on the values the last
// left, it equals the same requests sent one by one on the same device and, within f32 or f64 rounding, on the CPU
// device; Iamax and Iamin name the first largest and smallest element of the vectors they read, on every device.
// Orders 1 to 513 take every path of the CUDA contracts (Symm by cuBLAS's symm and by a GEMM from 512). Skipped
// without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "device/blas_recording_pipeline.hpp"
#include "testing/buffer_values.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/numeric_error.hpp"
#include "testing/test_seed.hpp"

namespace accel {
namespace {

using accel::testing::BlasRoutinesPipeline;
using accel::testing::contents;
using accel::testing::GpuTestTarget;
using accel::testing::IsOk;
using accel::testing::relative_error;

template <class T>
std::vector<double> doubles(const Device& device, const Buffer<T>& buffer) {
  const std::vector<T> v = contents(device, buffer);
  return {v.begin(), v.end()};
}

// Whether `index` (1-based) names the first element of largest (or smallest) magnitude among `count` elements of
// `vector`, `increment` apart.
template <class T>
void expect_first_extreme(const std::vector<T>& vector, std::int64_t count, std::int64_t increment, std::int32_t index,
                          bool largest, const char* what) {
  ASSERT_GE(index, 1) << what;
  ASSERT_LE(index, count) << what;
  std::int64_t want = 0;
  for (std::int64_t i = 1; i < count; ++i) {
    const T a = std::abs(vector[i * increment]), best = std::abs(vector[want * increment]);
    if (largest ? a > best : a < best) want = i;
  }
  EXPECT_EQ(index, want + 1) << what;
}

template <class T>
void expect_recorded_blas_routines_equal_direct(const Device& gpu, const Device& cpu, std::int64_t n,
                                                std::uint64_t seed) {
  using Pipeline = BlasRoutinesPipeline<T>;
  SCOPED_TRACE(::testing::Message() << to_string(dtype_of<T>()) << " n=" << n << " seed=" << seed);
  Result<Pipeline> direct = Pipeline::make(gpu, n, seed), replayed = Pipeline::make(gpu, n, seed);
  Result<Pipeline> reference = Pipeline::make(cpu, n, seed);
  ASSERT_THAT(direct, IsOk());
  ASSERT_THAT(replayed, IsOk());
  ASSERT_THAT(reference, IsOk());
  Result<Recording> recording = replayed->record(gpu);
  ASSERT_THAT(recording, IsOk());
  const double same_device = std::is_same_v<T, float> ? 1e-6 : 1e-14;
  const double against_cpu = std::is_same_v<T, float> ? 1e-4 : 1e-11;
  for (int launch = 0; launch < 3; ++launch) {
    SCOPED_TRACE(::testing::Message() << "launch " << launch);
    ASSERT_THAT(direct->run_one_by_one(gpu), IsOk());
    ASSERT_THAT(reference->run_one_by_one(cpu), IsOk());
    ASSERT_THAT(recording->launch().wait(), IsOk());
    const auto got = replayed->outputs(), want = direct->outputs(), cpu_want = reference->outputs();
    for (std::size_t i = 0; i < got.size(); ++i) {
      const std::vector<double> recorded = doubles(gpu, *got[i]);
      EXPECT_LE(relative_error(recorded, doubles(gpu, *want[i])), same_device) << "output " << i;
      EXPECT_LE(relative_error(recorded, doubles(cpu, *cpu_want[i])), against_cpu) << "output " << i;
    }
    for (const auto& [device, pipeline] : {std::pair{&gpu, &*replayed}, {&gpu, &*direct}, {&cpu, &*reference}}) {
      expect_first_extreme(contents(*device, pipeline->z), n, 2, contents(*device, pipeline->at_most)[0], true,
                           "Iamax");
      expect_first_extreme(contents(*device, pipeline->y), 2 * n, 1, contents(*device, pipeline->at_least)[0], false,
                           "Iamin");
    }
  }
}

class CudaBlasRecordingTest : public ::testing::TestWithParam<GpuTestTarget> {
 protected:
  System system_;
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

TEST_P(CudaBlasRecordingTest, EveryRoutineLaunchedEqualsTheRequestsOneByOneAndTheCpuDevice) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), gpu);
  Device cpu = *Device::open(system_, {.kind = DeviceKind::cpu});
  for (const std::int64_t n : {1, 7, 130, 513}) {
    expect_recorded_blas_routines_equal_direct<float>(gpu, cpu, n, rng_());
    expect_recorded_blas_routines_equal_direct<double>(gpu, cpu, n, rng_());
  }
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, CudaBlasRecordingTest, ::testing::ValuesIn(accel::testing::kEveryGpuTarget),
                         accel::testing::target_name);

}  // namespace
}  // namespace accel
