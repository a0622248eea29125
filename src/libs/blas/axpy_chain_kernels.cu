// Chains of 16-bit Axpys in one launch (blas_kernels.hpp's launch_narrow_axpy_chain): the requests a burst or a
// recording sends one after another on the same vectors (y += a x again and again, an update applied in turns). One
// launch costs the stream's thread 2.7-4.9 µs on an H100's host (PERFORMANCE.md §106) against well under a
// microsecond of the kernel's work on 65,536 elements, so a chain of 32 is one launch where 32 were. Each thread
// takes the same elements of every axpy, in order, as launch_narrow_axpy's kernel maps them on this grid; the
// chain's rule (any two vectors that meet are the same vector) makes every element's reads and writes one thread's.
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
  ChainedAxpy axpy[kMostChainedAxpys];
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

// A vector's bytes.
struct Bytes {
  std::uintptr_t begin, end;
  bool meets(const Bytes& other) const { return begin < other.end && other.begin < end; }
  bool same(const Bytes& other) const { return begin == other.begin && end == other.end; }
  bool apart_or_same(const Bytes& other) const { return !meets(other) || same(other); }
};

Bytes bytes_of(const void* vector, std::int64_t n) {
  const auto begin = reinterpret_cast<std::uintptr_t>(vector);
  return {begin, begin + static_cast<std::uintptr_t>(n) * 2};
}

bool chain_member(const NarrowAxpy& axpy) {
  const bool aligned = (reinterpret_cast<std::uintptr_t>(axpy.x) | reinterpret_cast<std::uintptr_t>(axpy.y)) % 16 == 0;
  return axpy.n > 0 && axpy.x != nullptr && axpy.y != nullptr && aligned &&
         bytes_of(axpy.x, axpy.n).apart_or_same(bytes_of(axpy.y, axpy.n));
}

bool continues_chain(const NarrowAxpy* chain, int count, const NarrowAxpy& next) {
  if (count >= kMostChainedAxpys || next.bf16 != chain[0].bf16 || !chain_member(next)) return false;
  const Bytes x = bytes_of(next.x, next.n), y = bytes_of(next.y, next.n);
  for (int a = 0; a < count; ++a) {
    const Bytes earlier_x = bytes_of(chain[a].x, chain[a].n), earlier_y = bytes_of(chain[a].y, chain[a].n);
    if (!x.apart_or_same(earlier_y) || !y.apart_or_same(earlier_y) || !y.apart_or_same(earlier_x)) return false;
  }
  return true;
}

}  // namespace

int narrow_axpy_chain_length(const NarrowAxpy* axpys, std::size_t count) {
  if (axpys == nullptr || count == 0 || !chain_member(axpys[0])) return 0;
  int length = 1;
  while (static_cast<std::size_t>(length) < count && continues_chain(axpys, length, axpys[length])) ++length;
  return length;
}

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

}  // namespace accel::blas
