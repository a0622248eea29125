// What a kernel costs in a chain of small dependent kernels replayed as one CUDA graph, by how it is launched: plainly,
// chained (programmatic dependent launch) and waiting for the kernel before first, chained and also letting the next
// kernel start at once (src/core/chained_launch.cuh's let_next_kernel_start), and that with a read of memory the chain
// does not write (a weight) before the wait. Each kernel is a query-sized row op: 64 rows of 384 floats, 16 blocks.
//   chain_launch_bench [--kernels 48] [--replays 500]
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

namespace {

constexpr int kRows = 64, kWidth = 384, kRowsPerBlock = 4;
enum Mode { plain, chained_wait, chained_wait_and_let_next, weights_first };

template <Mode kMode>
__global__ void row_step(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y) {
  const int row = static_cast<int>(blockIdx.x) * kRowsPerBlock + static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  constexpr int kPerLane = kWidth / 32;
  float weight[kPerLane];
  if constexpr (kMode == weights_first)
    for (int j = 0; j < kPerLane; ++j) weight[j] = w[row * kWidth + j * 32 + lane];
  if constexpr (kMode != plain) asm volatile("griddepcontrol.wait;" ::: "memory");
  if constexpr (kMode == chained_wait_and_let_next || kMode == weights_first)
    asm volatile("griddepcontrol.launch_dependents;");
  if constexpr (kMode != weights_first)
    for (int j = 0; j < kPerLane; ++j) weight[j] = w[row * kWidth + j * 32 + lane];
  float dot = 0;
  for (int j = 0; j < kPerLane; ++j) dot += x[row * kWidth + j * 32 + lane] * weight[j];
  for (int delta = 16; delta > 0; delta /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, delta);
  for (int j = 0; j < kPerLane; ++j)
    y[row * kWidth + j * 32 + lane] = x[row * kWidth + j * 32 + lane] * 0.5f + dot * 1e-3f;
}

#define CHECK(call)                                                                         \
  do {                                                                                      \
    if (const cudaError_t error = (call); error != cudaSuccess) {                           \
      fmt::print(stderr, "chain_launch_bench: {}: {}\n", #call, cudaGetErrorString(error)); \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

// Microseconds per replay of a graph of `kernels` launches ping-ponging between a and b.
template <Mode kMode>
double microseconds_per_replay(cudaStream_t stream, float* a, float* b, const float* w, int kernels, int replays) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < kernels; ++i) {
    cudaLaunchAttribute chained{};
    chained.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    chained.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(kRows / kRowsPerBlock);
    config.blockDim = dim3(kRowsPerBlock * 32);
    config.stream = stream;
    config.attrs = &chained;
    config.numAttrs = kMode == plain ? 0 : 1;
    CHECK(cudaLaunchKernelEx(&config, row_step<kMode>, static_cast<const float*>(i % 2 ? b : a), w, i % 2 ? a : b));
  }
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 20; ++i) CHECK(cudaGraphLaunch(exec, stream));
  cudaEvent_t start = nullptr, stop = nullptr;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, stream));
  for (int i = 0; i < replays; ++i) CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaEventRecord(stop, stream));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return ms * 1e3 / replays;
}

}  // namespace

int main(int argc, char** argv) {
  int kernels = 48, replays = 500;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--kernels") == 0) kernels = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--replays") == 0) replays = std::atoi(argv[i + 1]);
  }
  if (kernels < 1 || replays < 1) {
    fmt::print(stderr, "usage: chain_launch_bench [--kernels N] [--replays N]\n");
    return 1;
  }
  const std::size_t bytes = sizeof(float) * kRows * kWidth;
  float *a = nullptr, *b = nullptr, *w = nullptr;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMalloc(&w, bytes));
  CHECK(cudaMemset(a, 0, bytes));
  CHECK(cudaMemset(w, 0, bytes));
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (int n : {1, kernels}) {
    const double figures[] = {microseconds_per_replay<plain>(stream, a, b, w, n, replays),
                              microseconds_per_replay<chained_wait>(stream, a, b, w, n, replays),
                              microseconds_per_replay<chained_wait_and_let_next>(stream, a, b, w, n, replays),
                              microseconds_per_replay<weights_first>(stream, a, b, w, n, replays)};
    fmt::print(
        "{{\"figure\":\"chain_launch\",\"kernels\":{},\"us_per_replay\":{{\"plain\":{:.2f},\"chained_wait\":{:.2f},"
        "\"chained_wait_and_let_next\":{:.2f},\"weights_first\":{:.2f}}},\"us_per_kernel_chained_wait\":{:.3f}}}\n",
        n, figures[0], figures[1], figures[2], figures[3], figures[1] / n);
  }
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(w));
  return 0;
}
