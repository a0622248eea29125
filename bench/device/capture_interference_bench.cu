// Which work on another thread ends a stream capture in progress on this one. accel captures a compiled graph's
// steps in cudaStreamCaptureModeThreadLocal, which forbids the capturing thread's own unsafe calls only; yet about one
// model load in 50 failed with an invalidated capture (docs/PERFORMANCE.md §46, §59, §66). This makes 300 captures of
// 50 launches of a small kernel each (§59's form captured memsets) on one thread while a second thread repeats one kind
// of work, and prints how many captures ended in an error, and the first errors:
//   none        the second thread does nothing;
//   devsync     cudaDeviceSynchronize;
//   malloc      cudaMalloc and cudaFree of 1 MiB;
//   streamsync  a memset on a stream of its own and cudaStreamSynchronize of it;
//   query       a memset on its own stream and cudaStreamQuery;
//   memcpy      a synchronous cudaMemcpy of 4 KiB from pageable host memory;
//   memset      a synchronous cudaMemset;
//   freehost    cudaHostAlloc and cudaFreeHost of 1 MiB;
//   hostalloc   cudaHostAlloc of 64 KiB only (freed after the captures);
//   hostfree    cudaFreeHost only, of 64 KiB blocks allocated before the captures began;
//   cublaslt    cuBLASLt's start as a process makes it: the handle, then f16 matmuls of six shapes, each algorithm
//               of the heuristic's first four once (their kernels loaded lazily), as accel's one-time start does;
//   ltcreate    cublasLtCreate only, 400 handles (destroyed after the captures);
//   ltdestroy   cublasLtDestroy only, of 400 handles made before the captures began.
// A mode whose captures or second thread stop making progress for 10 s is reported as such, with both counts, and
// ends the process (exit 3).
//   capture_interference_bench MODE...        (each mode in turn)
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

__global__ void add_one(float* values) { values[threadIdx.x] += 1.0f; }

void start_cublaslt(cudaStream_t stream) {
  cublasLtHandle_t handle = nullptr;
  if (cublasLtCreate(&handle) != CUBLAS_STATUS_SUCCESS) return;
  constexpr std::size_t kWorkspace = 32 << 20;
  void* workspace = nullptr;
  cudaMalloc(&workspace, kWorkspace);
  for (const int n : {64, 128, 384, 1024, 1536, 3072}) {
    void *a = nullptr, *b = nullptr, *c = nullptr;
    const auto bytes = static_cast<std::size_t>(2) * n * n;
    cudaMalloc(&a, bytes);
    cudaMalloc(&b, bytes);
    cudaMalloc(&c, bytes);
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatrixLayout_t layout = nullptr;
    cublasLtMatrixLayoutCreate(&layout, CUDA_R_16F, n, n, n);
    cublasLtMatmulPreference_t preference = nullptr;
    cublasLtMatmulPreferenceCreate(&preference);
    cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &kWorkspace,
                                         sizeof kWorkspace);
    cublasLtMatmulHeuristicResult_t found[4];
    int count = 0;
    cublasLtMatmulAlgoGetHeuristic(handle, op, layout, layout, layout, layout, preference, 4, found, &count);
    const float one = 1, zero = 0;
    for (int i = 0; i < count; ++i)
      cublasLtMatmul(handle, op, &one, a, layout, b, layout, &zero, c, layout, c, layout, &found[i].algo, workspace,
                     kWorkspace, stream);
    cudaStreamSynchronize(stream);
    cublasLtMatmulPreferenceDestroy(preference);
    cublasLtMatrixLayoutDestroy(layout);
    cublasLtMatmulDescDestroy(op);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  cudaFree(workspace);
  cublasLtDestroy(handle);
}

// Pinned blocks for hostalloc to make and hostfree to free: 64 KiB each, the size of accel's smallest staging block;
// cuBLASLt handles for ltcreate to make and ltdestroy to destroy.
struct HostBlocks {
  std::vector<void*> blocks;
  std::size_t freed = 0;
  std::vector<cublasLtHandle_t> handles;
  std::size_t destroyed = 0;
};
constexpr std::size_t kHandles = 400;

// One round of the second thread's work; false when the mode is done after one round or unknown.
bool interfere(std::string_view mode, void* scratch, cudaStream_t stream, HostBlocks& host) {
  if (mode == "devsync") {
    cudaDeviceSynchronize();
  } else if (mode == "malloc") {
    void* p = nullptr;
    cudaMalloc(&p, 1 << 20);
    cudaFree(p);
  } else if (mode == "streamsync") {
    cudaMemsetAsync(scratch, 0, 4096, stream);
    cudaStreamSynchronize(stream);
  } else if (mode == "query") {
    cudaMemsetAsync(scratch, 0, 4096, stream);
    cudaStreamQuery(stream);
  } else if (mode == "memcpy") {
    std::vector<float> host(1024);
    cudaMemcpy(scratch, host.data(), 4096, cudaMemcpyHostToDevice);
  } else if (mode == "memset") {
    cudaMemset(scratch, 0, 4096);
  } else if (mode == "freehost") {
    void* p = nullptr;
    cudaHostAlloc(&p, 1 << 20, cudaHostAllocDefault);
    cudaFreeHost(p);
  } else if (mode == "hostalloc") {
    void* p = nullptr;
    cudaHostAlloc(&p, 64 << 10, cudaHostAllocPortable);
    host.blocks.push_back(p);
  } else if (mode == "hostfree") {
    if (host.freed == host.blocks.size()) return false;
    cudaFreeHost(host.blocks[host.freed++]);
  } else if (mode == "cublaslt") {
    start_cublaslt(stream);
    return false;
  } else if (mode == "ltcreate") {
    if (host.handles.size() == kHandles) return false;
    cublasLtCreate(&host.handles.emplace_back());
  } else if (mode == "ltdestroy") {
    if (host.destroyed == host.handles.size()) return false;
    cublasLtDestroy(host.handles[host.destroyed++]);
  } else {
    return false;
  }
  return true;
}

void run(std::string_view mode) {
  void *captured = nullptr, *scratch = nullptr;
  cudaMalloc(&captured, 4096);
  cudaMalloc(&scratch, 4096);
  cudaStream_t capturing = nullptr, other = nullptr;
  cudaStreamCreateWithFlags(&capturing, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking);
  HostBlocks host;
  if (mode == "hostfree") {
    host.blocks.resize(4000);
    for (void*& block : host.blocks) cudaHostAlloc(&block, 64 << 10, cudaHostAllocPortable);
  }
  if (mode == "ltdestroy") {
    host.handles.resize(kHandles);
    for (cublasLtHandle_t& handle : host.handles) cublasLtCreate(&handle);
  }
  constexpr int kCaptures = 300;
  std::atomic<bool> stop{false};
  std::atomic<int> captures{0}, rounds{0};
  std::thread watchdog([&] {
    int seen_captures = -1, seen_rounds = -1;
    while (!stop.load()) {
      for (int i = 0; i < 100 && !stop.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (stop.load()) return;
      if (captures.load() == seen_captures && rounds.load() == seen_rounds) {
        fmt::print("{}: no progress for 10 s: {} of {} captures made, {} rounds of the second thread\n", mode,
                   captures.load(), kCaptures, rounds.load());
        std::fflush(stdout);
        std::_Exit(3);
      }
      seen_captures = captures.load();
      seen_rounds = rounds.load();
    }
  });
  std::thread second([&] {
    while (!stop.load() && interfere(mode, scratch, other, host)) rounds.fetch_add(1);
  });
  int failed = 0;
  std::vector<std::string> first_errors;
  for (int i = 0; i < kCaptures; ++i, captures.fetch_add(1)) {
    cudaError_t error = cudaStreamBeginCapture(capturing, cudaStreamCaptureModeThreadLocal);
    cudaGraph_t graph = nullptr;
    if (error == cudaSuccess) {
      for (int j = 0; j < 50; ++j) add_one<<<1, 256, 0, capturing>>>(static_cast<float*>(captured));
      error = cudaStreamEndCapture(capturing, &graph);
    }
    if (error != cudaSuccess) {
      ++failed;
      if (first_errors.size() < 2) first_errors.emplace_back(cudaGetErrorName(error));
      cudaGetLastError();
    }
    if (graph != nullptr) cudaGraphDestroy(graph);
  }
  stop = true;
  second.join();
  watchdog.join();
  fmt::print("{}: {} of {} captures failed ({} rounds of the second thread){}{}\n", mode, failed, kCaptures,
             rounds.load(), first_errors.empty() ? "" : ", first: ", fmt::join(first_errors, ", "));
  std::fflush(stdout);
  for (std::size_t i = host.freed; i < host.blocks.size(); ++i) cudaFreeHost(host.blocks[i]);
  for (std::size_t i = host.destroyed; i < host.handles.size(); ++i) cublasLtDestroy(host.handles[i]);
  cudaStreamDestroy(capturing);
  cudaStreamDestroy(other);
  cudaFree(captured);
  cudaFree(scratch);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr,
               "usage: capture_interference_bench MODE... (none devsync malloc streamsync query memcpy memset "
               "freehost hostalloc hostfree cublaslt ltcreate ltdestroy)\n");
    return 2;
  }
  for (int i = 1; i < argc; ++i) run(argv[i]);
}
