// Chains of 16-bit Axpys, of Copies of contiguous vectors and of Gers, each chain in one launch (blas_kernels.hpp's
// launch_narrow_axpy_chain, launch_copy_chain, launch_ger_chain): the requests a burst or a recording sends one after
// another on the same operands (y += a x again and again, an update applied in turns, a vector copied along, rank-one
// updates of one matrix). One launch costs the
// stream's thread 2.7-4.9 µs on an H100's host (PERFORMANCE.md §106) against well under a microsecond of the kernel's
// work on 65,536 elements, so a chain of 32 is one launch where 32 were. Each thread takes the same 16 bytes of every
// vector of the chain, in order; the chain's rule (any two vectors of which one is written either do not meet or are
// the same vector) makes every element's reads and writes one thread's.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

#include "core/chained_launch.cuh"
#include "libs/blas/kernel_common.cuh"

namespace accel::blas {
namespace {

using namespace kernels;

struct ChainedAxpy {
  const void* x;
  void* y;
  std::int64_t n;
  float alpha;
};

struct AxpyChain {
  ChainedAxpy axpy[kMostChainedVectorSteps];
  int count;
};

// Launched on the grid of the longest axpy's vectors: vector v of every axpy is thread v's (axpy_contiguous).
template <class T>
__global__ void axpy_chain_kernel(const __grid_constant__ AxpyChain chain) {
  wait_for_prior_kernel();
  for (int a = 0; a < chain.count; ++a)
    axpy_contiguous(static_cast<const T*>(chain.axpy[a].x), static_cast<T*>(chain.axpy[a].y), chain.axpy[a].n,
                    chain.axpy[a].alpha);
}

struct CopyChain {
  ContiguousCopy copy[kMostChainedVectorSteps];
  int count;
};

// 16 bytes a thread a step of a grid-stride loop, then the last few bytes two at a time by the first threads (every
// element type is two bytes or a multiple of two).
__global__ void copy_chain_kernel(const __grid_constant__ CopyChain chain) {
  wait_for_prior_kernel();
  const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int c = 0; c < chain.count; ++c) {
    const ContiguousCopy copy = chain.copy[c];
    const std::uint64_t vectors = copy.bytes / sizeof(uint4);
    for (std::uint64_t v = first; v < vectors; v += step)
      static_cast<uint4*>(copy.y)[v] = static_cast<const uint4*>(copy.x)[v];
    const std::uint64_t tail = vectors * (sizeof(uint4) / 2) + first;  // in two-byte units
    if (tail < copy.bytes / 2)
      static_cast<std::uint16_t*>(copy.y)[tail] = static_cast<const std::uint16_t*>(copy.x)[tail];
  }
}

template <class T>
struct GerChain {
  GerTyped<T> ger[kMostChainedVectorSteps];
  int count;
};

// Launched on the grid of the chain's most rows and columns: element (i, j) of every A is thread (i, J)'s.
template <class T>
__global__ void __launch_bounds__(kThreads) ger_chain_kernel(const __grid_constant__ GerChain<T> chain) {
  wait_for_prior_kernel();
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  for (int g = 0; g < chain.count; ++g)
    if (row < chain.ger[g].m) ger_member(chain.ger[g], row, 0);
}

// A vector's bytes.
struct Bytes {
  std::uintptr_t begin, end;
  bool meets(const Bytes& other) const { return begin < other.end && other.begin < end; }
  bool same(const Bytes& other) const { return begin == other.begin && end == other.end; }
  bool apart_or_same(const Bytes& other) const { return !meets(other) || same(other); }
};

Bytes bytes_of(const void* vector, std::uint64_t bytes) {
  const auto begin = reinterpret_cast<std::uintptr_t>(vector);
  return {begin, begin + static_cast<std::uintptr_t>(bytes)};
}

Bytes x_of(const NarrowAxpy& axpy) { return bytes_of(axpy.x, static_cast<std::uint64_t>(axpy.n) * 2); }
Bytes y_of(const NarrowAxpy& axpy) { return bytes_of(axpy.y, static_cast<std::uint64_t>(axpy.n) * 2); }
Bytes x_of(const ContiguousCopy& copy) { return bytes_of(copy.x, copy.bytes); }
Bytes y_of(const ContiguousCopy& copy) { return bytes_of(copy.y, copy.bytes); }
bool same_kind(const NarrowAxpy& a, const NarrowAxpy& b) { return a.bf16 == b.bf16; }
bool same_kind(const ContiguousCopy&, const ContiguousCopy&) { return true; }

template <class Step>
bool chain_member(const Step& step) {
  const Bytes x = x_of(step), y = y_of(step);
  return x.end > x.begin && step.x != nullptr && step.y != nullptr && (x.begin | y.begin) % 16 == 0 &&
         x.apart_or_same(y);
}

// Whether `next` may follow the first `count` steps of `chain`: of their kind, and each of its vectors the same as or
// apart from every vector of the chain that one of the two writes.
template <class Step>
bool continues_chain(const Step* chain, int count, const Step& next) {
  if (count >= kMostChainedVectorSteps || !same_kind(next, chain[0]) || !chain_member(next)) return false;
  const Bytes x = x_of(next), y = y_of(next);
  for (int s = 0; s < count; ++s) {
    const Bytes earlier_x = x_of(chain[s]), earlier_y = y_of(chain[s]);
    if (!x.apart_or_same(earlier_y) || !y.apart_or_same(earlier_y) || !y.apart_or_same(earlier_x)) return false;
  }
  return true;
}

std::uint64_t element_bytes(const GerLaunch& ger) { return ger.f64 ? 8 : 4; }

// A's elements from its first to its last, padding between columns included.
Bytes a_of(const GerLaunch& ger) {
  return bytes_of(ger.a, static_cast<std::uint64_t>((ger.n - 1) * ger.lda + ger.m) * element_bytes(ger));
}

Bytes vector_of(const void* vector, std::int64_t length, std::int64_t inc, const GerLaunch& ger) {
  const auto span = static_cast<std::uint64_t>((length - 1) * (inc < 0 ? -inc : inc) + 1);
  return bytes_of(vector, span * element_bytes(ger));
}

bool chain_member(const GerLaunch& ger) {
  return ger.a != nullptr && ger.x != nullptr && ger.y != nullptr && ger.m > 0 && ger.n > 0 && ger.batch == 1 &&
         ger.alpha != 0.0 && ger.lda >= ger.m;
}

bool same_matrix(const GerLaunch& a, const GerLaunch& b) {
  return a.a == b.a && a.m == b.m && a.n == b.n && a.lda == b.lda;
}

// Gers chain on their own rule: a matrix the same as or apart from every other, and no x or y meeting a matrix.
bool continues_chain(const GerLaunch* chain, int count, const GerLaunch& next) {
  if (count >= kMostChainedVectorSteps || next.f64 != chain[0].f64 || !chain_member(next)) return false;
  const Bytes a = a_of(next), x = vector_of(next.x, next.m, next.incx, next),
              y = vector_of(next.y, next.n, next.incy, next);
  for (int g = 0; g < count; ++g) {
    const GerLaunch& earlier = chain[g];
    const Bytes earlier_a = a_of(earlier);
    if (a.meets(earlier_a) && !same_matrix(next, earlier)) return false;
    if (x.meets(earlier_a) || y.meets(earlier_a)) return false;
    if (a.meets(vector_of(earlier.x, earlier.m, earlier.incx, earlier)) ||
        a.meets(vector_of(earlier.y, earlier.n, earlier.incy, earlier)))
      return false;
  }
  return true;
}

template <class Step>
int chain_length(const Step* steps, std::size_t count) {
  if (steps == nullptr || count == 0 || !chain_member(steps[0])) return 0;
  int length = 1;
  while (static_cast<std::size_t>(length) < count && continues_chain(steps, length, steps[length])) ++length;
  return length;
}

template <class T>
cudaError_t ger_chain(const GerLaunch* gers, int count, cudaStream_t stream) {
  GerChain<T> chain{};
  chain.count = count;
  std::int64_t rows = 0, columns = 0;
  for (int g = 0; g < count; ++g) {
    chain.ger[g] = GerTyped<T>::of(gers[g]);
    rows = std::max(rows, gers[g].m);
    columns = std::max(columns, gers[g].n);
  }
  const dim3 grid(
      static_cast<unsigned>((rows + kThreads - 1) / kThreads),
      static_cast<unsigned>(std::min<std::int64_t>((columns + kGerColumns - 1) / kGerColumns, kMaxGridExtent)));
  return launch_chained(ger_chain_kernel<T>, grid, dim3(kThreads), 0, stream, chain);
}

}  // namespace

int ger_chain_length(const GerLaunch* gers, std::size_t count) { return chain_length(gers, count); }

cudaError_t launch_ger_chain(const GerLaunch* gers, int count, cudaStream_t stream) {
  if (count < 1 || ger_chain_length(gers, static_cast<std::size_t>(count)) != count) return cudaErrorInvalidValue;
  return gers[0].f64 ? ger_chain<double>(gers, count, stream) : ger_chain<float>(gers, count, stream);
}

int narrow_axpy_chain_length(const NarrowAxpy* axpys, std::size_t count) { return chain_length(axpys, count); }

int copy_chain_length(const ContiguousCopy* copies, std::size_t count) { return chain_length(copies, count); }

cudaError_t launch_narrow_axpy_chain(const NarrowAxpy* axpys, int count, cudaStream_t stream) {
  if (count < 1 || narrow_axpy_chain_length(axpys, static_cast<std::size_t>(count)) != count)
    return cudaErrorInvalidValue;
  AxpyChain chain{};
  chain.count = count;
  std::int64_t longest = 0;
  for (int a = 0; a < count; ++a) {
    chain.axpy[a] = ChainedAxpy{.x = axpys[a].x, .y = axpys[a].y, .n = axpys[a].n, .alpha = axpys[a].alpha};
    longest = std::max(longest, axpys[a].n);
  }
  const dim3 grid(blocks_for(longest / (sizeof(uint4) / 2)));
  return axpys[0].bf16 ? launch_chained(axpy_chain_kernel<__nv_bfloat16>, grid, dim3(kThreads), 0, stream, chain)
                       : launch_chained(axpy_chain_kernel<__half>, grid, dim3(kThreads), 0, stream, chain);
}

cudaError_t launch_copy_chain(const ContiguousCopy* copies, int count, cudaStream_t stream) {
  if (count < 1 || copy_chain_length(copies, static_cast<std::size_t>(count)) != count) return cudaErrorInvalidValue;
  CopyChain chain{};
  chain.count = count;
  std::uint64_t longest = 0;
  for (int c = 0; c < count; ++c) {
    chain.copy[c] = copies[c];
    longest = std::max(longest, copies[c].bytes);
  }
  const dim3 grid(blocks_for(static_cast<std::int64_t>(longest / sizeof(uint4))));
  return launch_chained(copy_chain_kernel, grid, dim3(kThreads), 0, stream, chain);
}

}  // namespace accel::blas
