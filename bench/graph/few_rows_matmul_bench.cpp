// A query's products where the model's weights do not stay in the L2 cache: each product reads its own weights from
// DRAM, as the layers of a 12 x 768 encoder, ModernBERT-base or Qwen3-0.6B do between two queries. For each product
// shape of those models, a chain of products each over its own copy of the weights (copies enough to fill four times
// the L2 cache) is captured as one CUDA graph and replayed: µs a product for cuBLASLt (the plan a compiled graph
// times: the fastest of its heuristic's first 16 candidates) and for the few-rows matmul, launched chained as the
// graphs launch it; for a gated MLP's gate|up product, cuBLASLt followed by the gated pass against the few-rows
// kernel's gated form. Also the same chain over one copy (weights in L2), and the largest difference of the few-rows
// result from cuBLASLt's, relative to its largest value, so that a faster wrong kernel cannot pass.
//   few_rows_matmul_bench [rows,...]   (16,32,64 by default: a query's buckets)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "common/csv_report.hpp"
#include "common/cuda_checks.hpp"
#include "common/half_products.hpp"
#include "graph/kernels/cuda_kernels.hpp"

namespace accel::bench {
namespace {

struct Shape {
  const char* model;
  const char* product;
  DType dtype;
  std::int64_t n, k;
  bool gated = false;
  Activation activation = Activation::identity;  // the gate's, where gated
};

// µs a product of a chain of `count` products (`enqueue(i)` enqueues the i-th) replayed as one CUDA graph: the median
// of 7 replays after 3.
double us_per_product(cudaStream_t stream, int count, const std::function<cudaError_t(int)>& enqueue) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "begin capture");
  for (int i = 0; i < count; ++i) check_cuda(enqueue(i), "a product of the chain");
  check_cuda(cudaStreamEndCapture(stream, &graph), "end capture");
  check_cuda(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  const double us = median_us_per_call(stream, 1, "the chain", [&] { return cudaGraphLaunch(exec, stream); });
  check_cuda(cudaStreamSynchronize(stream), "sync");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return us / count;
}

double largest_relative_difference(const std::vector<float>& got, const std::vector<float>& reference) {
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::abs(got[i] - reference[i])));
    scale = std::max(scale, static_cast<double>(std::abs(reference[i])));
  }
  return scale == 0 ? worst : worst / scale;
}

void measure(const Shape& s, std::int64_t rows, std::int64_t l2_bytes, cudaStream_t stream) {
  std::mt19937 rng(static_cast<unsigned>(rows * s.n + s.k));
  std::vector<float> x = uniform(static_cast<std::size_t>(rows * s.k), 1.0f, rng);
  std::vector<float> w = uniform(static_cast<std::size_t>(s.n * s.k), 2.0f / std::sqrt(static_cast<float>(s.k)), rng);
  void* dx = upload(x, s.dtype);
  void* first = upload(w, s.dtype);
  const std::size_t element = size_of(s.dtype), weight_bytes = static_cast<std::size_t>(s.n * s.k) * element;
  const int copies = static_cast<int>(std::max<std::int64_t>(4, (4 * l2_bytes + weight_bytes - 1) / weight_bytes));
  std::vector<void*> weights{first};
  for (int i = 1; i < copies; ++i) {
    void* copy = nullptr;
    check_cuda(cudaMalloc(&copy, weight_bytes), "cudaMalloc");
    check_cuda(cudaMemcpy(copy, first, weight_bytes, cudaMemcpyDeviceToDevice), "copy the weights");
    weights.push_back(copy);
  }
  const std::int64_t width = s.gated ? s.n / 2 : s.n;
  void *product = nullptr, *lt_out = nullptr, *few_out = nullptr;
  check_cuda(cudaMalloc(&product, static_cast<std::size_t>(rows * s.n) * element), "cudaMalloc");
  check_cuda(cudaMalloc(&lt_out, static_cast<std::size_t>(rows * width) * element), "cudaMalloc");
  check_cuda(cudaMalloc(&few_out, static_cast<std::size_t>(rows * width) * element), "cudaMalloc");

  LtProduct lt(s.dtype, rows, s.n, s.k, dx, first, product, stream);
  const auto by_cublaslt = [&](int i) {
    const cudaError_t status = lt.run(dx, weights[i], product, stream);
    if (status != cudaSuccess || !s.gated) return status;
    return graph::cuda::gated(s.dtype, product, rows * (s.n / 16), 8, s.activation, lt_out, stream);
  };
  const auto by_few_rows = [&](int i) {
    return s.gated ? graph::cuda::few_rows_gated_matmul(s.dtype, dx, weights[i], nullptr, s.activation, rows, s.n, s.k,
                                                        few_out, stream)
                   : graph::cuda::few_rows_matmul(s.dtype, dx, weights[i], nullptr, Activation::identity, nullptr, rows,
                                                  s.n, s.k, few_out, stream);
  };
  const std::string name =
      fmt::format("{} {} {}x{}{} rows {}", s.model, s.product, s.n, s.k, s.gated ? " gated" : "", rows);
  const std::string lt_name = s.gated ? "cuBLASLt + gated" : "cuBLASLt";
  const double lt_dram = us_per_product(stream, copies, by_cublaslt);
  const double few_dram = us_per_product(stream, copies, by_few_rows);
  const double lt_l2 = us_per_product(stream, copies, [&](int) { return by_cublaslt(0); });
  const double few_l2 = us_per_product(stream, copies, [&](int) { return by_few_rows(0); });
  row("few_rows_matmul", name, lt_name + ", weights from DRAM", "us", lt_dram);
  row("few_rows_matmul", name, "few-rows, weights from DRAM", "us", few_dram);
  row("few_rows_matmul", name, "few-rows / " + lt_name + ", DRAM", "ratio", few_dram / lt_dram);
  row("few_rows_matmul", name, "few-rows, weights from DRAM", "GB/s", weight_bytes / (few_dram * 1e3));
  row("few_rows_matmul", name, lt_name + ", weights in L2", "us", lt_l2);
  row("few_rows_matmul", name, "few-rows, weights in L2", "us", few_l2);
  const std::vector<float> reference =
      download(s.gated ? lt_out : product, static_cast<std::size_t>(rows * width), s.dtype);
  row("few_rows_matmul", name, "few-rows against cuBLASLt", "difference x1e3",
      1e3 * largest_relative_difference(download(few_out, static_cast<std::size_t>(rows * width), s.dtype), reference));
  for (void* p : weights) cudaFree(p);
  for (void* p : {dx, product, lt_out, few_out}) cudaFree(p);
}

}  // namespace
}  // namespace accel::bench

int main(int argc, char** argv) {
  using namespace accel;
  std::vector<std::int64_t> rows = {16, 32, 64};
  if (argc > 1) {
    rows.clear();
    for (const std::string& item : bench::split_list(argv[1])) rows.push_back(std::stoll(item));
  }
  int device = 0, l2_bytes = 0;
  bench::check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  bench::check_cuda(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device), "the L2 cache's size");
  cudaStream_t stream{};
  bench::check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  const Activation gelu = Activation::gelu_erf, silu = Activation::silu;
  const bench::Shape shapes[] = {
      {"bert-base", "q|k|v", DType::f16, 2304, 768},
      {"bert-base", "attention out", DType::f16, 768, 768},
      {"bert-base", "ffn up", DType::f16, 3072, 768},
      {"bert-base", "ffn down", DType::f16, 768, 3072},
      {"modernbert-base", "Wi (GeGLU)", DType::f16, 2304, 768, true, gelu},
      {"modernbert-base", "mlp Wo", DType::f16, 768, 1152},
      {"qwen3-0.6b", "q|k|v", DType::bf16, 4096, 1024},
      {"qwen3-0.6b", "o", DType::bf16, 1024, 2048},
      {"qwen3-0.6b", "gate|up (SwiGLU)", DType::bf16, 6144, 1024, true, silu},
      {"qwen3-0.6b", "down", DType::bf16, 1024, 3072},
  };
  std::printf("# L2 cache %d bytes\n", l2_bytes);
  for (const bench::Shape& shape : shapes)
    for (std::int64_t r : rows) bench::measure(shape, r, l2_bytes, stream);
  return 0;
}
