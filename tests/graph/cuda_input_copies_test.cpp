// The graph's input copies on the GPU (graph/cuda/padding.hpp's copy_inputs): several inputs of each element size in
// one launch, each padded with zeros or its last element, nothing written past its padded extent; what it cannot do
// refused before launching. Skipped without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "graph/cuda/padding.hpp"
#include "testing/cuda_kernel_buffers.hpp"

namespace accel::graph::cuda {
namespace {

constexpr std::uint8_t kPoison = 0xAB;

struct Case {
  std::uint32_t element_bytes;
  std::uint64_t real;
  std::uint64_t padded;
  bool repeat_last;
};

// A device copy of `bytes` random bytes and a poisoned destination one element longer than padded.
struct Buffers {
  std::vector<std::uint8_t> source;
  void* from = nullptr;
  void* to = nullptr;
};

// On the graph kernel tests' fixture: its stream, skipped without a GPU.
class CudaInputCopies : public testing::CudaKernels {
 protected:
  void TearDown() override {
    for (Buffers& b : buffers_) {
      cudaFree(b.from);
      cudaFree(b.to);
    }
    CudaKernels::TearDown();
  }
  InputCopy make(const Case& c) {
    Buffers& b = buffers_.emplace_back();
    b.source.resize(std::max<std::uint64_t>(c.real, 1) * c.element_bytes);
    for (std::uint8_t& byte : b.source) byte = static_cast<std::uint8_t>(rng_());
    EXPECT_EQ(cudaMalloc(&b.from, b.source.size()), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(b.from, b.source.data(), b.source.size(), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&b.to, (c.padded + 1) * c.element_bytes), cudaSuccess);
    EXPECT_EQ(cudaMemset(b.to, kPoison, (c.padded + 1) * c.element_bytes), cudaSuccess);
    return {.from = b.from,
            .to = b.to,
            .real = c.real,
            .padded = c.padded,
            .element_bytes = c.element_bytes,
            .repeat_last = c.repeat_last};
  }
  void expect_copied(std::size_t index, const Case& c) {
    const Buffers& b = buffers_[index];
    std::vector<std::uint8_t> got((c.padded + 1) * c.element_bytes);
    ASSERT_EQ(cudaMemcpy(got.data(), b.to, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    const std::size_t e = c.element_bytes;
    for (std::uint64_t i = 0; i <= c.padded; ++i) {
      std::vector<std::uint8_t> want(e, kPoison);
      if (i < c.real) {
        std::memcpy(want.data(), b.source.data() + i * e, e);
      } else if (i < c.padded) {
        if (c.repeat_last && c.real > 0) {
          std::memcpy(want.data(), b.source.data() + (c.real - 1) * e, e);
        } else {
          std::fill(want.begin(), want.end(), 0);
        }
      }
      ASSERT_EQ(0, std::memcmp(got.data() + i * e, want.data(), e))
          << "input " << index << " element " << i << " of " << c.real << " real, " << c.padded << " padded";
    }
  }
  std::mt19937 rng_{54};
  std::vector<Buffers> buffers_;
};

TEST_F(CudaInputCopies, EveryInputOfOneLaunchIsCopiedAndPaddedAsAsked) {
  const std::vector<Case> cases{
      {4, 5, 16, false},  {4, 3, 9, true},
      {1, 0, 4, true},    {2, 7, 7, false},
      {8, 3, 5, true},    {1, 13, 40, false},
      {2, 1, 1000, true}, {4, 100'000, 300'000, true}};  // more elements than one launch has threads
  std::vector<InputCopy> copies;
  for (const Case& c : cases) copies.push_back(make(c));
  finish(copy_inputs(copies.data(), copies.size(), stream_));
  for (std::size_t i = 0; i < cases.size(); ++i) expect_copied(i, cases[i]);
}

TEST_F(CudaInputCopies, WhatOneLaunchCannotDoIsRefusedBeforeLaunching) {
  std::vector<InputCopy> nine(kMostInputCopies + 1, make({4, 1, 1, false}));
  EXPECT_EQ(copy_inputs(nine.data(), nine.size(), stream_), cudaErrorInvalidValue);
  const InputCopy odd = make({3, 2, 2, false});
  EXPECT_EQ(copy_inputs(&odd, 1, stream_), cudaErrorInvalidValue);
  InputCopy shrinking = make({4, 4, 4, false});
  shrinking.padded = 2;
  EXPECT_EQ(copy_inputs(&shrinking, 1, stream_), cudaErrorInvalidValue);
  EXPECT_EQ(copy_inputs(nullptr, 0, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  std::vector<std::uint8_t> odd_destination(3 * 3);
  ASSERT_EQ(cudaMemcpy(odd_destination.data(), odd.to, odd_destination.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(odd_destination, std::vector<std::uint8_t>(odd_destination.size(), kPoison));
}

}  // namespace
}  // namespace accel::graph::cuda
