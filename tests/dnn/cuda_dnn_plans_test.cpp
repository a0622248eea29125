// The cuDNN plan cache (counted builds, LRU, concurrent misses) and its persistent tier (a second process, a
// damaged file), isolated devices, and what cuDNN cannot run.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "accel/dnn/convolution.hpp"
#include "testing/cuda_dnn_fixture.hpp"
#include "testing/dnn_testbed.hpp"

namespace accel::testing {
namespace {

using dnn::GraphBuilder;
using dnn::TensorLayout;
using dnn::TensorRef;

// -- plans ----------------------------------------------------------------------------------------------------

ConvShape small_shape(std::int64_t k) {
  return {.layout = TensorLayout::channels_last,
          .dtype = DType::f16,
          .n = 1,
          .c = 8,
          .k = k,
          .input = {8, 8},
          .filter = {3, 3},
          .pre_padding = {1, 1},
          .post_padding = {1, 1}};
}

Status run_conv(const Device& device, const ConvShape& shape) {
  Result<std::shared_ptr<const dnn::Graph>> graph = dnn::graph_of(ConvFwd{.shape = shape});
  ACCEL_RETURN_IF_ERROR(graph.status());
  return run_on(device, **graph, random_inputs(**graph, 7),
                [&](const Device& d, const BufferMap& b) {
                  return d.ask(ConvFwd{.shape = shape, .x = b.at(1), .w = b.at(2), .y = b.at(3)});
                })
      .status();
}

TEST_F(CudaDnn, ARepeatedShapeIsBuiltOnceAndManyConcurrentMissesBuildOnce) {
  ASSERT_THAT(run_conv(*gpu_, small_shape(8)), IsOk());
  ASSERT_THAT(run_conv(*gpu_, small_shape(8)), IsOk());
  CacheStats stats = plan_stats(*gpu_);
  EXPECT_EQ(stats.builds, 1u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_GE(stats.hits, 1u);

  // Eight streams of the same device miss one new shape at the same moment.
  std::vector<Device> streams;
  for (int i = 0; i < 8; ++i) streams.push_back(*gpu_->open_stream());
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (Device& stream : streams) {
    threads.emplace_back([&] {
      if (!run_conv(stream, small_shape(24)).ok()) ++failures;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  stats = plan_stats(*gpu_);
  EXPECT_EQ(stats.builds, 2u);
  EXPECT_EQ(stats.misses, 2u);
}

TEST_F(CudaDnn, TheLeastRecentlyUsedPlanIsEvictedBeyondCapacity) {
  DeviceOptions options = gpu_options(plans_);
  options.dnn.plan_cache_capacity = 2;
  options.dnn.persistent_plans = false;
  Device small = *Device::open(system_, options);
  for (std::int64_t k : {8, 16, 8, 24, 8, 16}) ASSERT_THAT(run_conv(small, small_shape(k)), IsOk());
  const CacheStats stats = plan_stats(small);
  // 8 (miss) 16 (miss) 8 (hit) 24 (miss, evicts 16) 8 (hit) 16 (miss, evicts 24)
  EXPECT_EQ(stats.misses, 4u);
  EXPECT_EQ(stats.hits, 2u);
  EXPECT_EQ(stats.evictions, 2u);
  EXPECT_EQ(stats.entries, 2u);
}

TEST_F(CudaDnn, ASecondProcessLoadsThePlansFromDiskAndADamagedFileIsRebuilt) {
  const ConvShape shape = small_shape(40);
  CacheStats first;
  {
    Device worker = *Device::open(system_, gpu_options(plans_, Isolation::worker_process));
    ASSERT_THAT(run_conv(worker, shape), IsOk());
    first = plan_stats(worker);
  }
  ASSERT_EQ(first.builds, 1u);
  // cuDNN 9 serialises the engine it picks for this shape (checked on the H100 with 9.14 and 9.19): a skipped store
  // is a regression of the plans' disk tier, or a cuDNN that serialises less (then the test needs another shape).
  ASSERT_EQ(first.disk_skips, 0u) << "the plan for this shape was not written to disk";
  ASSERT_EQ(first.disk_stores, 1u);
  {
    Device worker = *Device::open(system_, gpu_options(plans_, Isolation::worker_process));
    ASSERT_THAT(run_conv(worker, shape), IsOk());
    const CacheStats second = plan_stats(worker);
    EXPECT_EQ(second.builds, 0u);
    EXPECT_EQ(second.disk_loads, 1u);
    std::printf("plan for a new shape: built in %llu us, loaded from disk in %llu us\n",
                static_cast<unsigned long long>(first.build_micros),
                static_cast<unsigned long long>(second.load_micros));
  }
  // Damage every entry: the next process must notice, rebuild, and still compute correctly.
  for (const auto& entry : std::filesystem::directory_iterator(plans_)) {
    std::fstream file(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(std::filesystem::file_size(entry.path()) / 2));
    file.put('\x5a');
  }
  {
    Device worker = *Device::open(system_, gpu_options(plans_, Isolation::worker_process));
    Result<std::shared_ptr<const dnn::Graph>> graph = dnn::graph_of(ConvFwd{.shape = shape});
    ASSERT_THAT(graph, IsOk());
    const TensorArrays inputs = random_inputs(**graph, 11);
    auto submit = [&](const Device& d, const BufferMap& b) {
      return d.ask(ConvFwd{.shape = shape, .x = b.at(1), .w = b.at(2), .y = b.at(3)});
    };
    Result<TensorArrays> on_gpu = run_on(worker, **graph, inputs, submit);
    ASSERT_THAT(on_gpu, IsOk());
    Result<TensorArrays> on_cpu = run_on(*cpu_, **graph, inputs, submit);
    ASSERT_THAT(on_cpu, IsOk());
    EXPECT_LE(scaled_error(on_gpu->at(3), on_cpu->at(3)), tolerance_of(DType::f16));
    const CacheStats third = plan_stats(worker);
    EXPECT_EQ(third.builds, 1u);
    EXPECT_EQ(third.disk_loads, 0u);
    EXPECT_GE(third.disk_rejects, 1u);
  }
}

TEST_F(CudaDnn, AnIsolatedDeviceRunsGraphsLikeTheInProcessOne) {
  Device worker = *Device::open(system_, gpu_options(plans_, Isolation::worker_process));
  GraphBuilder b;
  auto x = b.tensor(DType::f16, {2, 16, 12, 12}, TensorLayout::channels_last);
  auto w = b.tensor(DType::f16, {16, 16, 3, 3}, TensorLayout::channels_last);
  auto bias = b.tensor(DType::f16, {1, 16, 1, 1});
  b.output(b.relu(b.add(b.conv_forward(x, w, {.pre_padding = {1, 1}, .post_padding = {1, 1}}), bias)), DType::f16,
           TensorLayout::channels_last);
  std::shared_ptr<const dnn::Graph> graph = *b.build();
  const TensorArrays inputs = random_inputs(*graph, 12);
  Result<TensorArrays> isolated = run_on(worker, *graph, inputs, run_graph(graph));
  ASSERT_THAT(isolated, IsOk());
  Result<TensorArrays> in_process = run_on(*gpu_, *graph, inputs, run_graph(graph));
  ASSERT_THAT(in_process, IsOk());
  for (const auto& [uid, array] : *in_process) EXPECT_EQ(isolated->at(uid).values, array.values);
}

// -- errors ---------------------------------------------------------------------------------------------------

TEST_F(CudaDnn, WhatCudnnCannotRunIsNotSupportedAndStaleBuffersAreRefused) {
  {
    // Refused before cuDNN sees it: cuDNN's attention engines take 16-bit inputs only.
    GraphBuilder b;
    auto q = b.tensor(DType::f32, {1, 2, 64, 64});
    auto k = b.tensor(DType::f32, {1, 2, 64, 64});
    auto v = b.tensor(DType::f32, {1, 2, 64, 64});
    b.output(b.attention(q, k, v, {.scale = 0.125f}).o, DType::f32);
    std::shared_ptr<const dnn::Graph> graph = *b.build();
    EXPECT_THAT(run_on(*gpu_, *graph, random_inputs(*graph, 13), run_graph(graph)), StatusIs(Code::not_supported));
  }
  {
    // Refused by cuDNN's own support check: a reshape after a matmul.
    GraphBuilder b;
    auto a = b.tensor(DType::f16, {1, 64, 32});
    auto w = b.tensor(DType::f16, {1, 32, 64});
    b.output(b.reshape(b.matmul(a, w), {1, 32, 128}), DType::f16);
    std::shared_ptr<const dnn::Graph> graph = *b.build();
    Result<TensorArrays> unsupported = run_on(*gpu_, *graph, random_inputs(*graph, 14), run_graph(graph));
    EXPECT_THAT(unsupported, StatusIs(Code::not_supported));
    if (!unsupported.ok()) {
      EXPECT_NE(unsupported.status().message().find("not supported by cuDNN"), std::string::npos);
    }
  }
  {
    const ConvShape f64{.layout = TensorLayout::channels_first,
                        .dtype = DType::f64,
                        .n = 1,
                        .c = 4,
                        .k = 4,
                        .input = {7, 7},
                        .filter = {3, 3}};
    Result<std::shared_ptr<const dnn::Graph>> graph = dnn::graph_of(ConvFwd{.shape = f64});
    ASSERT_THAT(graph, IsOk());
    EXPECT_THAT(run_on(*gpu_, **graph, random_inputs(**graph, 15),
                       [&](const Device& d, const BufferMap& b) {
                         return d.ask(ConvFwd{.shape = f64, .x = b.at(1), .w = b.at(2), .y = b.at(3)});
                       }),
                StatusIs(Code::not_supported));
  }

  const ConvShape shape = small_shape(8);
  Buffer<Half> x = *gpu_->allocate<Half>(8 * 64).wait();
  Buffer<Half> w = *gpu_->allocate<Half>(8 * 8 * 9).wait();
  Buffer<Half> y = *gpu_->allocate<Half>(8 * 64).wait();
  const BufferHandle stale = w.handle();
  ASSERT_THAT(gpu_->free(w).wait(), IsOk());
  EXPECT_THAT(gpu_->ask(ConvFwd{.shape = shape, .x = x, .w = stale, .y = y}).wait(), StatusIs(Code::stale_handle));
  Buffer<float> wrong_dtype = *gpu_->allocate<float>(8 * 8 * 9).wait();
  EXPECT_THAT(gpu_->ask(ConvFwd{.shape = shape, .x = x, .w = wrong_dtype, .y = y}).wait(),
              StatusIs(Code::invalid_argument));
  Buffer<Half> too_small = *gpu_->allocate<Half>(8 * 8 * 9 - 1).wait();
  EXPECT_THAT(gpu_->ask(ConvFwd{.shape = shape, .x = x, .w = too_small, .y = y}).wait(),
              StatusIs(Code::invalid_argument));
  EXPECT_THAT(gpu_->health(), IsOk());
}

}  // namespace
}  // namespace accel::testing
