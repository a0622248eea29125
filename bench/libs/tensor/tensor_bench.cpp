// Tensor contractions (einsum) on the GPU through the accel device actor (cuTENSOR), on transformer-like and
// tensor-network-like shapes, with the same cases as bench/peers/torch_tensor.py (torch.einsum) so that the two print
// comparable rows. Per case: the first request (its plan built), one-at-a-time latency (median), pipelined time per
// request (many in flight, one wait) and the TFLOP/s that makes.
// Prints CSV rows: part,case,variant,metric,value. Exits 2, saying why, where cuTENSOR cannot be loaded.
//   tensor_bench
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/libs/tensor/tensor.hpp"
#include "common/csv_report.hpp"
#include "common/exit_now.hpp"

namespace {

using namespace accel;
using Clock = std::chrono::steady_clock;
using bench::micros;
using bench::percentile;
using bench::require;
using bench::row;

struct Case {
  std::string name;
  std::string a, b, d;
  std::map<char, std::int64_t> sizes;
  DType dtype;
};

// Keep in step with CASES in bench/peers/torch_tensor.py.
std::vector<Case> cases() {
  const std::map<char, std::int64_t> attention = {{'b', 8}, {'h', 16}, {'q', 1024}, {'k', 1024}, {'d', 64}};
  const std::map<char, std::int64_t> network = {{'a', 24}, {'b', 24}, {'c', 24}, {'d', 24}, {'e', 24}, {'f', 24}};
  return {
      {"scores bhqd,bhkd->bhqk f16", "bhqd", "bhkd", "bhqk", attention, DType::f16},
      {"scores bhqd,bhkd->bhqk f32", "bhqd", "bhkd", "bhqk", attention, DType::f32},
      {"context bhqk,bhkd->bhqd f16", "bhqk", "bhkd", "bhqd", attention, DType::f16},
      {"projection bqhd,hde->bqhe bf16",
       "bqhd",
       "hde",
       "bqhe",
       {{'b', 8}, {'q', 1024}, {'h', 16}, {'d', 64}, {'e', 64}},
       DType::bf16},
      {"matmul ik,kj->ij 4096 f32", "ik", "kj", "ij", {{'i', 4096}, {'j', 4096}, {'k', 4096}}, DType::f32},
      {"network abcd,cdef->abef f32", "abcd", "cdef", "abef", network, DType::f32},
      {"network abcd,cdef->faeb f64", "abcd", "cdef", "faeb", network, DType::f64},
      {"network aib,bjc->aijc f32",
       "aib",
       "bjc",
       "aijc",
       {{'a', 64}, {'i', 16}, {'b', 64}, {'j', 16}, {'c', 64}},
       DType::f32},
      {"small ij,jk->ik 64 f32", "ij", "jk", "ik", {{'i', 64}, {'j', 64}, {'k', 64}}, DType::f32},
  };
}

std::int64_t count_of(const std::string& modes, const std::map<char, std::int64_t>& sizes) {
  std::int64_t n = 1;
  for (char m : modes) n *= sizes.at(m);
  return n;
}

tensor::Tensor shaped(BufferHandle buffer, const std::string& modes, const std::map<char, std::int64_t>& sizes) {
  tensor::Tensor t{.buffer = buffer, .rank = static_cast<std::uint8_t>(modes.size())};
  for (std::size_t i = 0; i < modes.size(); ++i) {
    t.modes[i] = modes[i];
    t.extents[i] = static_cast<std::int32_t>(sizes.at(modes[i]));
  }
  return t;
}

BufferHandle random_buffer(Device& device, DType dtype, std::int64_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<std::byte> bytes(static_cast<std::size_t>(count) * size_of(dtype));
  for (std::int64_t i = 0; i < count; ++i) {
    const float v = uniform(rng);
    std::byte* at = bytes.data() + i * static_cast<std::int64_t>(size_of(dtype));
    if (dtype == DType::f16) {
      const Half h = to_half(v);
      std::memcpy(at, &h, 2);
    } else if (dtype == DType::bf16) {
      const BFloat16 h = to_bfloat16(v);
      std::memcpy(at, &h, 2);
    } else if (dtype == DType::f64) {
      const double d = v;
      std::memcpy(at, &d, 8);
    } else {
      std::memcpy(at, &v, 4);
    }
  }
  const BufferHandle buffer =
      require(device.ask(Allocate{.dtype = dtype, .count = static_cast<std::uint64_t>(count)}).wait(), "allocate");
  require(
      device
          .ask(CopyToDevice{.source = {bytes.data(), static_cast<std::uint64_t>(count), dtype}, .destination = buffer})
          .wait(),
      "upload");
  return buffer;
}

void run_case(Device& device, const Case& c, std::mt19937_64& rng) {
  const tensor::Contract request{
      .dtype = c.dtype,
      .a = shaped(random_buffer(device, c.dtype, count_of(c.a, c.sizes), rng), c.a, c.sizes),
      .b = shaped(random_buffer(device, c.dtype, count_of(c.b, c.sizes), rng), c.b, c.sizes),
      .d = shaped(random_buffer(device, c.dtype, count_of(c.d, c.sizes), rng), c.d, c.sizes)};
  double flops = 2;
  for (const auto& [mode, extent] : c.sizes) flops *= static_cast<double>(extent);

  const auto t0 = Clock::now();
  if (Status first = device.ask(request).wait().status(); !first.ok()) {
    fmt::print(stderr, "tensor_bench: {}: {}\n", c.name, first.to_string());
    accel::bench::exit_now(first.code() == Code::unavailable || first.code() == Code::not_supported ? 2 : 1);
  }
  const double first_us = micros(Clock::now() - t0);
  std::vector<double> latencies;
  for (int i = 0; i < 30; ++i) {
    const auto t = Clock::now();
    require(device.ask(request).wait(), "contract");
    latencies.push_back(micros(Clock::now() - t));
  }
  const int pipelined = 50;
  std::vector<Future<Done>> inflight;
  const auto t1 = Clock::now();
  for (int i = 0; i < pipelined; ++i) inflight.push_back(device.ask(request));
  for (Future<Done>& f : inflight) require(f.wait(), "pipelined contract");
  const double per_request = micros(Clock::now() - t1) / pipelined;

  row("tensor", c.name, "accel", "first_request_us", first_us);
  row("tensor", c.name, "accel", "latency_median_us", percentile(latencies, 0.5));
  row("tensor", c.name, "accel", "pipelined_us", per_request);
  row("tensor", c.name, "accel", "tflops", flops / per_request / 1e6);
  for (BufferHandle h : {request.a.buffer, request.b.buffer, request.d.buffer}) (void)device.free(h).wait();
}

}  // namespace

int main() {
  System system;
  Device device = require(Device::open(system, {.kind = DeviceKind::cuda}), "open cuda:0");
  std::mt19937_64 rng(7);
  fmt::print("part,case,variant,metric,value\n");
  for (const Case& c : cases()) run_case(device, c, rng);
  return 0;
}
