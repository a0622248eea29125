// What the CUDA graph kernel tests share: device buffers poisoned with NaN and filled from floats rounded to a
// storage type, per-type tolerances, and a fixture with a stream that skips without a GPU.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "graph/kernels/cpu_kernels.hpp"

namespace accel::graph::testing {

// A device buffer of `count` elements of `dtype`, poisoned with all-ones bytes (NaN in every float type).
class Buffer {
 public:
  Buffer(DType dtype, std::int64_t count) : dtype_(dtype), count_(count) {
    EXPECT_EQ(cudaMalloc(&data_, bytes() + 16), cudaSuccess);
    EXPECT_EQ(cudaMemset(data_, 0xff, bytes() + 16), cudaSuccess);
  }
  Buffer(DType dtype, const std::vector<float>& values) : Buffer(dtype, static_cast<std::int64_t>(values.size())) {
    std::vector<std::byte> host(bytes());
    EXPECT_TRUE(cpu::cast(DType::f32, values.data(), dtype_, host.data(), count_));
    EXPECT_EQ(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  }
  template <class I>
  static Buffer of_ints(const std::vector<I>& values) {
    Buffer buffer(DType::i32, static_cast<std::int64_t>(values.size()));
    EXPECT_EQ(cudaMemcpy(buffer.data_, values.data(), buffer.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    return buffer;
  }
  Buffer(Buffer&& other) noexcept : dtype_(other.dtype_), count_(other.count_), data_(other.data_) {
    other.data_ = nullptr;
  }
  ~Buffer() { cudaFree(data_); }

  std::vector<float> read() const {
    std::vector<std::byte> host(bytes());
    EXPECT_EQ(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    std::vector<float> values(static_cast<std::size_t>(count_));
    EXPECT_TRUE(cpu::cast(dtype_, host.data(), DType::f32, values.data(), count_));
    return values;
  }
  template <class T = void>
  T* get() const {
    return static_cast<T*>(data_);
  }

 private:
  std::size_t bytes() const { return static_cast<std::size_t>(count_) * size_of(dtype_); }
  DType dtype_;
  std::int64_t count_;
  void* data_ = nullptr;
};

// The values as the device stores them.
inline std::vector<float> rounded(const std::vector<float>& values, DType dtype) {
  return Buffer(dtype, values).read();
}

struct Tolerance {
  double absolute, relative;
};
inline Tolerance tolerance(DType dtype) {
  switch (dtype) {
    case DType::f16: return {3e-3, 3e-3};
    case DType::bf16: return {2e-2, 2e-2};
    default: return {2e-5, 2e-5};
  }
}

inline void expect_close(const std::vector<float>& actual, const std::vector<float>& expected, DType dtype,
                         const char* what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  const Tolerance t = tolerance(dtype);
  for (std::size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], t.absolute + t.relative * std::abs(expected[i]))
        << what << " " << to_string(dtype) << " at " << i;
}

class CudaKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no CUDA GPU";
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  void finish(cudaError_t launched) {
    ASSERT_EQ(launched, cudaSuccess) << cudaGetErrorString(launched);
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  }
  cudaStream_t stream_ = nullptr;
};

}  // namespace accel::graph::testing
