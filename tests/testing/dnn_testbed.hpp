// Runs one graph — or a request equivalent to it — on any device with the same host data, so that a GPU result
// can be compared with the CPU reference of the very same inputs.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>

#include "accel/device/device.hpp"
#include "accel/dnn/graph.hpp"
#include "testing/cuda_fixture.hpp"

namespace accel::testing {

using TensorArrays = std::map<std::uint32_t, HostArray>;
using BufferMap = std::map<std::uint32_t, BufferHandle>;
// Sends the work given a buffer for each bound tensor (a RunGraph, or a ConvFwd naming the same buffers).
using Submit = std::function<Future<Done>(const Device&, const BufferMap&)>;

// Random inputs in [-1, 1] for every tensor the graph reads (`fill` may set some itself, e.g. sequence lengths).
inline TensorArrays random_inputs(const dnn::Graph& graph, std::uint64_t seed,
                                  const std::function<void(std::uint32_t, HostArray&)>& fill = {}) {
  std::mt19937_64 rng(seed);
  TensorArrays inputs;
  for (std::uint32_t uid : graph.bound_uids()) {
    if (graph.writes(uid)) continue;
    const dnn::TensorDesc& t = *graph.find(uid);
    HostArray array(t.dtype, dnn::storage_extent(t));
    array.fill_uniform(rng);
    if (fill) fill(uid, array);
    inputs.emplace(uid, std::move(array));
  }
  return inputs;
}

inline Submit run_graph(std::shared_ptr<const dnn::Graph> graph) {
  return [graph](const Device& device, const BufferMap& buffers) {
    RunGraph run{.graph = graph};
    for (const auto& [uid, handle] : buffers) run.bindings.push_back({uid, handle});
    return device.ask(std::move(run));
  };
}

// Allocates every bound tensor on `device`, uploads the inputs (outputs start as zeros), submits, downloads the
// outputs and frees everything.
inline Result<TensorArrays> run_on(const Device& device, const dnn::Graph& graph, const TensorArrays& inputs,
                                   const Submit& submit) {
  BufferMap buffers;
  TensorArrays outputs;
  Status status;
  for (std::uint32_t uid : graph.bound_uids()) {
    const dnn::TensorDesc& t = *graph.find(uid);
    Result<BufferHandle> buffer = device.ask(Allocate{.dtype = t.dtype, .count = dnn::storage_extent(t)}).wait();
    if (!buffer.ok()) {
      status = buffer.status();
      break;
    }
    buffers[uid] = *buffer;
    if (graph.writes(uid)) {
      HostArray zeros(t.dtype, dnn::storage_extent(t));
      status.update(device.ask(CopyToDevice{.source = zeros.source(), .destination = *buffer}).wait().status());
      outputs.emplace(uid, std::move(zeros));
    } else {
      status.update(
          device.ask(CopyToDevice{.source = inputs.at(uid).source(), .destination = *buffer}).wait().status());
    }
  }
  if (status.ok()) status = submit(device, buffers).wait().status();
  for (auto& [uid, array] : outputs) {
    if (status.ok())
      status = device.ask(CopyToHost{.source = buffers[uid], .destination = array.destination()}).wait().status();
    array.decode();
  }
  for (const auto& [uid, handle] : buffers) (void)device.ask(Free{.buffer = handle}).wait();
  if (!status.ok()) return status;
  return outputs;
}

// max |out - ref| / max |ref|: the error relative to the output's scale, which is what a reduced-precision
// accumulation (TF32, f16 inputs) bounds.
inline double scaled_error(const HostArray& out, const HostArray& ref) {
  double scale = 1e-30;
  for (double r : ref.values) scale = std::isfinite(r) ? std::max(scale, std::abs(r)) : scale;
  return max_abs_error(out.values, ref.values) / scale;
}

// The tolerance of a result stored in `dtype` whose inputs were too (TF32 is allowed for f32).
inline double tolerance_of(DType dtype) {
  switch (dtype) {
    case DType::f64: return 1e-9;
    case DType::f32: return 5e-3;
    case DType::f16: return 1e-2;
    case DType::bf16: return 4e-2;
    default: return 0;
  }
}

}  // namespace accel::testing
