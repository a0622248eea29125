// What a new process pays before its first GPU result, step by step, with the raw CUDA calls and nothing of
// accel: the floor under accel's cold start (embed_bench --cold-start) and a map of where that time goes.
// Run it in a fresh process each time; set ACCEL_LAUNCH_NS=$(date +%s%N) to include the time before main.
// `cuda_startup_bench [ALGO_FILE [MODE]]`: the first GEMM's algorithm is written to ALGO_FILE, or, if the file
// exists, read from it and checked (MODE check, the default) or used unchecked (MODE unchecked): what a cache of
// chosen algorithms would save. MODE early: another thread makes cuBLASLt's first heuristic query from the start
// of main, while this one creates the context. Prints one JSON line of milliseconds per step.
#include <cublasLt.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/cuda_checks.hpp"
#include "common/launch_clock.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using accel::bench::check_cuda;
using accel::bench::check_lt;

class Steps {
 public:
  template <class Step>
  void time(std::string name, Step&& step) {
    const Clock::time_point start = Clock::now();
    std::forward<Step>(step)();
    steps_.emplace_back(std::move(name), std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  void add(std::string name, double ms) { steps_.emplace_back(std::move(name), ms); }
  void print() const {
    std::string line = "{\"figure\": \"cuda_startup\"";
    const char* loading = std::getenv("CUDA_MODULE_LOADING");
    line += fmt::format(", \"module_loading\": \"{}\"", loading == nullptr ? "default" : loading);
    for (const auto& [name, ms] : steps_) line += fmt::format(", \"{}\": {:.3f}", name, ms);
    fmt::print("{}}}\n", line);
  }

 private:
  std::vector<std::pair<std::string, double>> steps_;
};

// Row-major C(m×n) = A(m×k)·B(k×n) in f16 with f32 accumulation, the embedding model's GEMM kind. With a stored
// algorithm (`algo`), cuBLASLt only checks it instead of running its heuristic.
struct Matmul {
  cublasLtHandle_t lt;
  cudaStream_t stream;
  void* workspace;
  std::size_t workspace_bytes;
  Steps& steps;
  bool unchecked = false;

  void operator()(const char* name, int m, int n, int k, const void* a, const void* b, void* c,
                  cublasLtMatmulAlgo_t* algo) const {
    cublasLtMatmulDesc_t desc = nullptr;
    check_lt(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    // Column-major view: Cᵀ(n×m) = Bᵀ(n×k)·Aᵀ(k×m).
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
    check_lt(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16F, n, k, n), "layout B");
    check_lt(cublasLtMatrixLayoutCreate(&la, CUDA_R_16F, k, m, k), "layout A");
    check_lt(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16F, n, m, n), "layout C");
    cublasLtMatmulHeuristicResult_t heuristic{};
    const std::string choose = fmt::format("{}_{}", name, algo == nullptr ? "heuristic" : "algo_check");
    steps.time(choose, [&] {
      if (algo != nullptr && unchecked) return;
      if (algo != nullptr) {
        check_lt(cublasLtMatmulAlgoCheck(lt, desc, lb, la, lc, lc, algo, &heuristic), "cublasLtMatmulAlgoCheck");
        return;
      }
      cublasLtMatmulPreference_t preference = nullptr;
      check_lt(cublasLtMatmulPreferenceCreate(&preference), "preference");
      check_lt(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes, sizeof(workspace_bytes)),
               "workspace preference");
      int found = 0;
      check_lt(cublasLtMatmulAlgoGetHeuristic(lt, desc, lb, la, lc, lc, preference, 1, &heuristic, &found),
               "heuristic");
      if (found == 0) check_lt(CUBLAS_STATUS_NOT_SUPPORTED, "no cuBLASLt algorithm");
      cublasLtMatmulPreferenceDestroy(preference);
    });
    if (algo == nullptr) last_algo = heuristic.algo;
    const std::string run = fmt::format("{}_run", name);
    steps.time(run, [&] {
      const float alpha = 1.0F, beta = 0.0F;
      check_lt(cublasLtMatmul(lt, desc, &alpha, b, lb, a, la, &beta, c, lc, c, lc,
                              algo != nullptr ? algo : &heuristic.algo, workspace, workspace_bytes, stream),
               "cublasLtMatmul");
      check_cuda(cudaStreamSynchronize(stream), "sync");
    });
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(desc);
  }
  mutable cublasLtMatmulAlgo_t last_algo{};
};

}  // namespace

int main(int argc, char** argv) {
  const auto main_wall = std::chrono::system_clock::now();
  Steps steps;
  if (const std::optional<double> before_main = accel::bench::ms_before_main(main_wall))
    steps.add("until_main", *before_main);
  const std::string mode = argc > 2 ? argv[2] : "check";
  std::thread early;
  double early_ms = 0;
  if (mode == "early") {
    early = std::thread([&early_ms] {
      const Clock::time_point start = Clock::now();
      cublasLtHandle_t handle = nullptr;
      check_lt(cublasLtCreate(&handle), "cublasLtCreate (early)");
      cublasLtMatmulDesc_t desc = nullptr;
      check_lt(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "desc (early)");
      cublasLtMatrixLayout_t layout = nullptr;
      check_lt(cublasLtMatrixLayoutCreate(&layout, CUDA_R_16F, 64, 64, 64), "layout (early)");
      cublasLtMatmulPreference_t preference = nullptr;
      check_lt(cublasLtMatmulPreferenceCreate(&preference), "preference (early)");
      cublasLtMatmulHeuristicResult_t result{};
      int found = 0;
      check_lt(
          cublasLtMatmulAlgoGetHeuristic(handle, desc, layout, layout, layout, layout, preference, 1, &result, &found),
          "heuristic (early)");
      early_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    });
  }
  steps.time("cu_init", [] {
    if (cuInit(0) != CUDA_SUCCESS) check_cuda(cudaErrorInitializationError, "cuInit");
  });
  steps.time("context", [] { check_cuda(cudaFree(nullptr), "cudaFree(nullptr)"); });
  // What a device's description asks: all properties at once, or the few attributes it uses.
  steps.time("device_properties", [] {
    cudaDeviceProp properties{};
    check_cuda(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
  });
  steps.time("device_attributes", [] {
    int major = 0, minor = 0;
    check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), "cudaDeviceGetAttribute");
    check_cuda(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0), "cudaDeviceGetAttribute");
    char name[256];
    if (cuDeviceGetName(name, sizeof name, 0) != CUDA_SUCCESS) check_cuda(cudaErrorUnknown, "cuDeviceGetName");
  });
  cudaStream_t stream = nullptr;
  steps.time("stream", [&] { check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream"); });
  cudaMemPool_t pool = nullptr;
  steps.time("mem_pool", [&] {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    check_cuda(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate");
  });

  constexpr std::size_t kWeightBytes = 48u << 20;  // about the f16 weights of all-MiniLM-L6-v2
  std::vector<unsigned char> pageable(kWeightBytes);
  for (std::size_t i = 0; i < pageable.size(); i += 4096) pageable[i] = static_cast<unsigned char>(i >> 12);
  void* pinned = nullptr;
  steps.time("pinned_alloc_48mb", [&] { check_cuda(cudaHostAlloc(&pinned, kWeightBytes, 0), "cudaHostAlloc"); });
  steps.time("pinned_fill_48mb", [&] { std::memcpy(pinned, pageable.data(), kWeightBytes); });
  void* device = nullptr;
  steps.time("device_alloc_48mb", [&] {
    check_cuda(cudaMallocFromPoolAsync(&device, kWeightBytes, pool, stream), "cudaMallocFromPoolAsync");
    check_cuda(cudaStreamSynchronize(stream), "sync");
  });
  steps.time("upload_pinned_48mb", [&] {
    check_cuda(cudaMemcpyAsync(device, pinned, kWeightBytes, cudaMemcpyHostToDevice, stream), "upload");
    check_cuda(cudaStreamSynchronize(stream), "sync");
  });
  steps.time("upload_pageable_48mb", [&] {
    check_cuda(cudaMemcpy(device, pageable.data(), kWeightBytes, cudaMemcpyHostToDevice), "pageable upload");
  });
  steps.time("host_register_48mb", [&] {
    check_cuda(cudaHostRegister(pageable.data(), kWeightBytes, cudaHostRegisterPortable), "cudaHostRegister");
  });

  cublasLtHandle_t lt = nullptr;
  steps.time("cublaslt_create", [&] { check_lt(cublasLtCreate(&lt), "cublasLtCreate"); });
  constexpr std::size_t kWorkspace = 32u << 20;
  void* workspace = nullptr;
  check_cuda(cudaMallocFromPoolAsync(&workspace, kWorkspace, pool, stream), "workspace");
  auto* base = static_cast<unsigned char*>(device);
  if (early.joinable()) {
    steps.time("early_join_wait", [&] { early.join(); });
    steps.add("early_thread", early_ms);
  }
  const Matmul matmul{lt, stream, workspace, kWorkspace, steps, mode == "unchecked"};
  const char* algo_path = argc > 1 && std::string(argv[1]) != "-" ? argv[1] : nullptr;
  cublasLtMatmulAlgo_t stored{};
  bool have_stored = false;
  if (algo_path != nullptr) {
    if (std::FILE* file = std::fopen(algo_path, "rb"); file != nullptr) {
      have_stored = std::fread(&stored, sizeof stored, 1, file) == 1;
      std::fclose(file);
    }
  }
  matmul("first_gemm", 64, 1152, 384, base, base + (8u << 20), base + (16u << 20), have_stored ? &stored : nullptr);
  if (algo_path != nullptr && !have_stored) {
    if (std::FILE* file = std::fopen(algo_path, "wb"); file != nullptr) {
      std::fwrite(&matmul.last_algo, sizeof matmul.last_algo, 1, file);
      std::fclose(file);
    }
  }
  matmul("second_shape_gemm", 64, 1536, 384, base, base + (8u << 20), base + (16u << 20), nullptr);
  matmul("same_shape_gemm", 64, 1536, 384, base, base + (8u << 20), base + (16u << 20), nullptr);
  steps.time("graph_capture_instantiate_launch", [&] {
    cudaGraph_t graph = nullptr;
    check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "begin capture");
    const float alpha = 1.0F, beta = 0.0F;
    cublasLtMatmulDesc_t desc = nullptr;
    check_lt(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "desc");
    cublasLtMatrixLayout_t l = nullptr;
    check_lt(cublasLtMatrixLayoutCreate(&l, CUDA_R_16F, 64, 64, 64), "layout");
    check_lt(cublasLtMatmul(lt, desc, &alpha, base, l, base + (8u << 20), l, &beta, base + (16u << 20), l,
                            base + (16u << 20), l, nullptr, workspace, kWorkspace, stream),
             "captured matmul");
    check_cuda(cudaStreamEndCapture(stream, &graph), "end capture");
    cudaGraphExec_t exec = nullptr;
    check_cuda(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    check_cuda(cudaGraphLaunch(exec, stream), "launch");
    check_cuda(cudaStreamSynchronize(stream), "sync");
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cublasLtMatrixLayoutDestroy(l);
    cublasLtMatmulDescDestroy(desc);
  });
  const auto first_result_wall = std::chrono::system_clock::now();
  steps.add("main_to_first_result", std::chrono::duration<double, std::milli>(first_result_wall - main_wall).count());
  steps.print();
  return 0;
}
