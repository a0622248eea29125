#include "jit/jit_bench_common.hpp"

#include <random>

namespace accel::bench {

BufferHandle random_buffer(const Device& device, DType dtype, std::uint64_t count, std::uint64_t seed, float scale) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-scale, scale);
  std::vector<std::byte> bytes(count * size_of(dtype));
  for (std::uint64_t i = 0; i < count; ++i) {
    const float v = uniform(rng);
    switch (dtype) {
      case DType::f16: reinterpret_cast<Half*>(bytes.data())[i] = to_half(v); break;
      case DType::bf16: reinterpret_cast<BFloat16*>(bytes.data())[i] = to_bfloat16(v); break;
      case DType::fp8_e4m3: reinterpret_cast<Float8E4M3*>(bytes.data())[i] = to_float8_e4m3(v); break;
      default: reinterpret_cast<float*>(bytes.data())[i] = v; break;
    }
  }
  BufferHandle buffer = require(device.ask(Allocate{.dtype = dtype, .count = count}).wait(), "allocate");
  require(device.ask(CopyToDevice{.source = {bytes.data(), count, dtype}, .destination = buffer}).wait(), "upload");
  return buffer;
}

GemmBuffers gemm_buffers(const Device& device, DType input, DType output, std::int64_t m, std::int64_t n,
                         std::int64_t k) {
  return {random_buffer(device, input, m * k, 1), random_buffer(device, input, k * n, 2),
          random_buffer(device, output, m * n, 3), random_buffer(device, output, n, 4)};
}

CutlassGemm cutlass_gemm(const GemmBuffers& g, DType input, DType output, std::int64_t m, std::int64_t n,
                         std::int64_t k) {
  return {.m = m, .n = n, .k = k, .input = input, .output = output, .a = g.a, .b = g.b, .d = g.d};
}

Gemm library_gemm(const GemmBuffers& g, DType input, DType output, std::int64_t m, std::int64_t n, std::int64_t k,
                  Epilogue epilogue) {
  return {.shape = {.order = MatrixOrder::row_major,
                    .transpose_b = Transpose::transpose,
                    .m = m,
                    .n = n,
                    .k = k,
                    .input_type = input,
                    .output_type = output,
                    .epilogue = epilogue},
          .a = g.a,
          .b = g.b,
          .c = g.d,
          .bias = epilogue.has_bias() ? g.bias : BufferHandle{}};
}

CutlassGroupedGemm moe_problem(const Device& device, DType dtype, double* flops, std::int64_t* total_m,
                               std::vector<Gemm>* loop) {
  constexpr int kGroups = 32;
  constexpr std::int64_t kN = 4096, kK = 4096;
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int> log_m(4, 11);  // M from 16 to 2048
  CutlassGroupedGemm grouped{.input = dtype, .output = dtype};
  *flops = 0;
  *total_m = 0;
  for (int i = 0; i < kGroups; ++i) {
    const std::int64_t m = std::int64_t{1} << log_m(rng);
    *total_m += m;
    const GemmBuffers g = gemm_buffers(device, dtype, dtype, m, kN, kK);
    GemmGroup group{.m = m, .n = kN, .k = kK};
    group.a.buffer = g.a;
    group.b.buffer = g.b;
    group.d.buffer = g.d;
    grouped.groups.push_back(group);
    if (loop != nullptr) loop->push_back(library_gemm(g, dtype, dtype, m, kN, kK));
    *flops += 2.0 * m * kN * kK;
  }
  return grouped;
}

ConvShape resnet_shape(std::int64_t c, std::int64_t k, std::int64_t hw, std::int64_t rs, int stride) {
  const int pad = static_cast<int>(rs / 2);
  return {.layout = dnn::TensorLayout::channels_last,
          .dtype = DType::f16,
          .n = 32,
          .c = c,
          .k = k,
          .input = {hw, hw},
          .filter = {rs, rs},
          .pre_padding = {pad, pad},
          .post_padding = {pad, pad},
          .stride = {stride, stride}};
}

}  // namespace accel::bench
