// What the CUDA BLAS tests share (cuda_blas_test.cpp, cuda_blas_kernels_test.cpp): a fixture that opens a CUDA
// device for each way one runs requests (skipped without a GPU) and runs a request on the CPU device and on the GPU
// with the same fresh random inputs, comparing every buffer it is told to.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <random>
#include <type_traits>
#include <vector>

#include "testing/cuda_fixture.hpp"
#include "testing/test_seed.hpp"

namespace accel::blas {

// One buffer of a request as the test feeds it: the member it goes into, its elements, whether it is compared after
// the run, and what makes its values (uniform in [-1, 1] unless `shape` changes them).
template <class Request>
struct Feed {
  BufferHandle Request::*member;
  DType dtype;
  std::uint64_t count;
  bool compared = false;
  std::function<void(testing::HostArray&)> shape;
};

class CudaBlasFixture : public ::testing::TestWithParam<testing::GpuTestTarget> {
 protected:
  void SetUp() override {
    ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), device);
    gpu_ = device;
  }

  // Runs `request` on the CPU device and on the GPU with the same random inputs, and compares every compared buffer.
  template <class Request>
  void compare(Request request, const std::vector<Feed<Request>>& feeds, double tolerance) {
    std::vector<testing::HostArray> inputs;
    for (const Feed<Request>& feed : feeds) {
      testing::HostArray& host = inputs.emplace_back(feed.dtype, feed.count);
      host.fill_uniform(rng_);
      if (feed.shape) feed.shape(host);
    }
    const std::vector<testing::HostArray> want = run_on(cpu_, request, feeds, inputs);
    const std::vector<testing::HostArray> got = run_on(*gpu_, request, feeds, inputs);
    ASSERT_EQ(want.size(), got.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (got[i].dtype == DType::i32) {
        EXPECT_EQ(got[i].values, want[i].values) << "compared buffer " << i;
      } else {
        const double error = testing::relative_error(got[i].values, want[i].values);
        EXPECT_LE(error, tolerance) << "compared buffer " << i << ": relative error " << error;
      }
    }
  }

  template <class Request>
  std::vector<testing::HostArray> run_on(const Device& device, Request request, const std::vector<Feed<Request>>& feeds,
                                         const std::vector<testing::HostArray>& inputs) {
    std::vector<BufferHandle> buffers;
    for (std::size_t i = 0; i < feeds.size(); ++i) {
      Result<BufferHandle> handle = device.ask(Allocate{.dtype = feeds[i].dtype, .count = feeds[i].count}).wait();
      EXPECT_THAT(handle, testing::IsOk());
      EXPECT_THAT(device.ask(CopyToDevice{.source = inputs[i].source(), .destination = *handle}).wait(),
                  testing::IsOk());
      request.*feeds[i].member = *handle;
      buffers.push_back(*handle);
    }
    EXPECT_THAT(device.ask(request).wait(), testing::IsOk()) << Request::kName;
    std::vector<testing::HostArray> outputs;
    for (std::size_t i = 0; i < feeds.size(); ++i) {
      if (!feeds[i].compared) continue;
      testing::HostArray& out = outputs.emplace_back(feeds[i].dtype, feeds[i].count);
      EXPECT_THAT(device.ask(CopyToHost{.source = buffers[i], .destination = out.destination()}).wait(),
                  testing::IsOk());
      out.decode();
    }
    for (const BufferHandle& buffer : buffers) EXPECT_THAT(device.free(buffer).wait(), testing::IsOk());
    return outputs;
  }

  static std::uint64_t span(std::int64_t n, std::int64_t inc) {
    return n == 0 ? 1 : static_cast<std::uint64_t>((n - 1) * (inc < 0 ? -inc : inc) + 1);
  }
  // Relative errors of a few hundred terms' sums; f16 and bf16 are one rounding of the element type apart at most.
  template <class T>
  static double tolerance() {
    if constexpr (std::is_same_v<T, Half>) return 1e-4;
    if constexpr (std::is_same_v<T, BFloat16>) return 8e-4;
    return sizeof(T) == 4 ? 1e-5 : 1e-12;
  }

  System system_;
  Device cpu_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::optional<Device> gpu_;
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

}  // namespace accel::blas
