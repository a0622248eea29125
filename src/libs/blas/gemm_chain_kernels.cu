// Chains of small f32 GEMMs in one launch (blas_kernels.hpp's launch_small_gemm_chain): C_s = alpha_s op(A_s) C_{s-1},
// the products a recording captures one after another where each reads the last one's C as its B (a stack of layers,
// an operator applied again and again). Launched one by one, each product in a CUDA graph costs about 1.24 µs on an
// H100, 0.7 of it the launch and the wait for the kernel before (PERFORMANCE.md §106); here the chain is one launch.
// Column j of C_s depends only on column j of C_{s-1}, so block j runs every product on that column in its shared
// memory, waiting for no other block: a product is a barrier of the block and sixteen multiply-adds a lane, and a
// chain of twenty 64³ products takes 16.0-16.5 µs a replay against 25.8-28.3 launched (§107). A cluster of 16 blocks
// taking the chain tile by tile, with the cluster's barrier between products, was slower than the launches (45.6 µs).
// Where every product takes the same A (small_gemm_chain_one_a) there is nothing to copy: 0.38-0.41 µs a product
// against 0.82-0.83 (§109), and with two lanes an output, not four, 0.34 (§115).
// Each lane sums the terms the small kernel's lane sums (gemm_kernels.cu: four lanes an output, lane g every fourth
// term from g, then the lanes' sums added in pairs), in the same order, so every output equals the small kernel's bit
// for bit.
#include <cstddef>
#include <cstdint>

#include "core/chained_launch.cuh"
#include "libs/blas/kernel_common.cuh"

namespace accel::blas {
namespace {

using namespace kernels;

constexpr int kChainRows = 64;                        // most rows of a C, and most terms of a sum, a chain takes
constexpr int kChainSplit = 4;                        // lanes that share an output's sum, as launch_small_gemm's
constexpr int kLaneTerms = kChainRows / kChainSplit;  // terms a lane sums
constexpr int kStages = 4;                            // A's in shared memory: the one summed and three coming
constexpr int kStageWords = kChainRows * kChainRows;
constexpr std::size_t kSharedBytes = kStages * kStageWords * sizeof(float);
static_assert(kChainRows * kChainSplit == static_cast<int>(kThreads));

// A product of a chain, its offsets ints (begins_small_gemm_chain checked that they fit); its B is the C before.
struct ChainedProduct {
  const float* a;
  float* c;
  int m, k;
  int a_row, a_col, c_row, c_col;
  float alpha;
};

struct ChainLaunch {
  ChainedProduct product[kMostChainedGemms];
  const float* b;  // the first product's
  int b_row, b_col;
  int count;
};

// Where element (i, q) of op(A) lies in a stage, its rows whole (by_terms: row i's terms side by side) or its columns
// whole, each turned (XOR) by the other index so that the lanes of a warp, rows i..i+7 and parts 0-3 reading term
// part + 4 t of their rows, read 32 banks, and four elements copied together stay side by side.
__device__ int staged_at(bool by_terms, int i, int q) {
  return by_terms ? i * kChainRows + (q ^ ((i & 7) << 2)) : q * kChainRows + (i ^ ((q & 3) << 3));
}

// Product s's op(A) on its way into `stage`, 16 bytes a copy along A's contiguous side (cp.async), zeros past its
// edges and where alpha is 0 (the small kernel reads no A then). Then the thread's group of copies is committed,
// empty for a product past the chain's end, so that every product is one group.
__device__ void stage_a(const ChainedProduct* table, int count, int s, float* stage) {
  if (s < count) {
    const ChainedProduct& product = table[s];
    const float* a = product.a;
    const bool by_terms = product.a_col == 1;
    const int stride = by_terms ? product.a_row : product.a_col;  // between whole rows (or columns)
    const int lines = by_terms ? product.m : product.k, along = by_terms ? product.k : product.m;
    const int reads = product.alpha != 0.0f;
    for (int e = static_cast<int>(threadIdx.x); e < kStageWords / 4; e += static_cast<int>(kThreads)) {
      const int line = e / (kChainRows / 4), first = e % (kChainRows / 4) * 4;
      const int bytes = line < lines ? reads * 4 * min(max(along - first, 0), 4) : 0;
      const float* from = bytes != 0 ? a + line * stride + first : a;
      const int i = by_terms ? line : first, q = by_terms ? first : line;
      const auto to = static_cast<unsigned>(__cvta_generic_to_shared(stage + staged_at(by_terms, i, q)));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(from), "r"(bytes));
    }
  }
  asm volatile("cp.async.commit_group;\n" ::);
}

// Block j: column j of every C. The A's come through kStages stages of shared memory, each copied while the products
// before it are summed; the column of the C before lies in shared memory too, zeros past its rows, so that terms
// past k add zeros as the small kernel's do. Thread (row i, part g) sums output i's terms g, g + 4, ... The products'
// parameters are read from shared memory: read where they lie, by a product's index, a chain of 20 took 32.2 µs, not
// 23.4 (§107).
__global__ void __launch_bounds__(kThreads) small_gemm_chain(const __grid_constant__ ChainLaunch p) {
  extern __shared__ float stages[];
  __shared__ float columns[2][kChainRows];
  __shared__ ChainedProduct table[kMostChainedGemms];
  const int i = static_cast<int>(threadIdx.x) / kChainSplit, part = static_cast<int>(threadIdx.x) % kChainSplit;
  const int j = static_cast<int>(blockIdx.x), count = p.count;
  static_assert(sizeof(ChainedProduct) % sizeof(int) == 0);
  for (int w = static_cast<int>(threadIdx.x); w < count * static_cast<int>(sizeof(ChainedProduct) / sizeof(int));
       w += static_cast<int>(kThreads))
    reinterpret_cast<int*>(table)[w] = reinterpret_cast<const int*>(p.product)[w];
  __syncthreads();
  wait_for_prior_kernel();  // the A's too may be the kernel before's
  for (int s = 0; s + 1 < kStages; ++s) stage_a(table, count, s, stages + s * kStageWords);
  if (threadIdx.x < kChainRows) {
    const int q = static_cast<int>(threadIdx.x);
    columns[0][q] = q < table[0].k ? p.b[q * p.b_row + j * p.b_col] : 0.0f;
  }
  for (int s = 0; s < count; ++s) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 2));  // this thread's copies of product s are done
    __syncthreads();  // and every thread's, and the column the product before wrote
    const ChainedProduct& product = table[s];
    const float* a = stages + s % kStages * kStageWords;
    const float* column = columns[s % 2];
    float sum = 0.0f;
    // Term q = part + 4 t of row i lies at staged_at(by_terms, i, q), worked out here a layout at a time: as one
    // expression in the loop a chain of 20 took 18.5 µs, not 16.5 (PERFORMANCE.md §107).
    if (product.alpha == 0.0f) {  // A and the column unread, as the small kernel reads neither
    } else if (product.a_col == 1) {
      const float* row = a + i * kChainRows + part;
      const int turn = i & 7;
#pragma unroll
      for (int t = 0; t < kLaneTerms; ++t)
        sum = fma(row[kChainSplit * (t ^ turn)], column[part + kChainSplit * t], sum);
    } else {
      const float* terms = a + part * kChainRows + (i ^ (part << 3));
#pragma unroll
      for (int t = 0; t < kLaneTerms; ++t)
        sum = fma(terms[kChainSplit * kChainRows * t], column[part + kChainSplit * t], sum);
    }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    if (part == 0) {
      const bool inside = i < product.m;
      const float value = inside ? product.alpha * sum : 0.0f;
      columns[(s + 1) % 2][i] = value;
      if (inside) product.c[i * product.c_row + j * product.c_col] = value;
    }
    // Into the stage product s - 1 was summed from, which every thread had left before the barrier above.
    stage_a(table, count, s + kStages - 1, stages + (s + kStages - 1) % kStages * kStageWords);
  }
}

// A chain whose products all take the same op(A) (a recurrence: X_{s+1} = W X_s, a network's state stepped by one
// matrix, a power iteration) reads it once: two lanes an output, lane (i, h) keeping in registers for the whole chain
// the terms of row i that parts 2h and 2h + 1 sum (g + 4 t for g = 2h, 2h + 1), two sums side by side. A product is
// the block's barrier, eight 16-byte reads of the column (a warp's lanes read two addresses, one broadcast each),
// thirty-two multiply-adds and one shuffle: part 0's sum plus part 1's, then that plus parts 2 and 3's, as
// small_gemm_chain adds them, so each output is the same bit for bit. A chain of 20 replayed back to back in a CUDA
// graph took 6.6-6.7 µs against 8.0-8.1 with four lanes an output, two shuffles and the products' parameters copied
// into shared memory (a chain of one 3.1-3.4 against 3.0-3.2; PERFORMANCE.md §115). The loop's time rests on where
// the compiler puts a few reads, so each choice below says what the other way measured.
constexpr int kOneAParts = 2;                          // lanes an output
constexpr int kOneAThreads = kChainRows * kOneAParts;  // 128
constexpr int kOneATerms = kChainRows / kOneAParts;    // 32 a lane: 16 of each of its two parts

// Lane (i, half)'s terms of op(A), terms[2 t + e] = term 4 t + 2 half + e of row i, zeros past A's edges. Every read
// is made, of A's first element where its term lies past an edge, so that they are issued together, with no branch
// between them (each behind a branch of its own, a chain of one took 0.7 µs longer). Rows whole (copied_whole: on 16
// bytes) and an even k are read two terms at a time (§115's probe).
__device__ void load_terms(const ChainedProduct& a, int i, int half, float (&terms)[kOneATerms]) {
  const float* const base = a.a;
  const int m = a.m, k = a.k, a_row = a.a_row, a_col = a.a_col;
  const bool inside = i < m;
  if (a_col == 1 && k % 2 == 0) {
#pragma unroll
    for (int t = 0; t < kLaneTerms; ++t) {
      const int q = kChainSplit * t + kOneAParts * half;
      const bool there = inside && q < k;  // and q + 1, k being even
      const float2 pair = *reinterpret_cast<const float2*>(base + (there ? i * a_row + q : 0));
      terms[2 * t] = there ? pair.x : 0.0f;
      terms[2 * t + 1] = there ? pair.y : 0.0f;
    }
    return;
  }
#pragma unroll
  for (int e = 0; e < kOneATerms; ++e) {
    const int q = kChainSplit * (e / 2) + kOneAParts * half + e % 2;
    const bool there = inside && q < k;
    const float term = base[there ? i * a_row + q * a_col : 0];
    terms[e] = there ? term : 0.0f;
  }
}

// blockIdx.x, read once: read as blockIdx.x, the compiler read it again in each product, between the sums and the
// column's write, which waited for it (a chain of 20 0.2 µs longer, §115).
__device__ int block_index() {
  unsigned index;
  asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(index));
  return static_cast<int>(index);
}

// The column lies permuted: the 32 terms lane (i, half) multiplies side by side, half's 32 from kHalfPitch * half on,
// so that a product reads it 16 bytes at a time, the two halves' reads on different banks.
constexpr int kHalfPitch = kOneATerms + 4;
__device__ int column_slot(int q) { return q / 2 % 2 * kHalfPitch + q / 4 * 2 + q % 2; }

// Each product's scale and output are read from the parameters after its sums, where they are used: read before the
// barrier, or from a table in shared memory, a chain of 20 took 7.4-8.3 µs, not 6.2-6.4 (§115's probe). The products
// are not unrolled: unrolled by two, the compiler read them by a register index, a chain of 20 7.2-7.3 µs, and with
// the column read 8 bytes at a time 7.0-7.1.
__global__ void __launch_bounds__(kOneAThreads) small_gemm_chain_one_a(const __grid_constant__ ChainLaunch p) {
  __shared__ __align__(16) float columns[2][kOneAParts * kHalfPitch];
  const int i = static_cast<int>(threadIdx.x) / kOneAParts, half = static_cast<int>(threadIdx.x) % kOneAParts;
  const int j = block_index(), count = p.count;
  wait_for_prior_kernel();  // the A too may be the kernel before's
  const ChainedProduct& a = p.product[0];
  const bool inside = i < a.m;  // every product's m is A's
  float terms[kOneATerms];
  load_terms(a, i, half, terms);
  if (threadIdx.x < kChainRows) {
    const int q = static_cast<int>(threadIdx.x);
    columns[0][column_slot(q)] = q < a.k ? p.b[q * p.b_row + j * p.b_col] : 0.0f;
  }
  __syncthreads();
#pragma unroll 1
  for (int s = 0; s < count; ++s) {
    if (s > 0) __syncthreads();  // the column the product before wrote
    const auto* column = reinterpret_cast<const float4*>(columns[s % 2] + half * kHalfPitch);
    float even = 0.0f, odd = 0.0f;  // parts 2 half and 2 half + 1
#pragma unroll
    for (int v = 0; v < kOneATerms / 4; ++v) {
      const float4 c = column[v];
      even = fma(terms[4 * v], c.x, even);
      odd = fma(terms[4 * v + 1], c.y, odd);
      even = fma(terms[4 * v + 2], c.z, even);
      odd = fma(terms[4 * v + 3], c.w, odd);
    }
    float sum = even + odd;
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    if (half == 0) {
      const ChainedProduct& product = p.product[s];
      const float alpha = product.alpha;  // read whether or not the row is inside: a select, not a branch
      const float value = inside ? alpha * sum : 0.0f;
      columns[(s + 1) % 2][column_slot(i)] = value;
      float* const out = product.c + i * product.c_row + j * product.c_col;
      if (inside) *out = value;
    }
  }
}

// Where a matrix's elements lie: rows x cols of floats, row_stride and col_stride apart.
struct Matrix {
  const void* base;
  std::int64_t rows, cols, row_stride, col_stride;

  [[nodiscard]] std::int64_t last_offset() const { return (rows - 1) * row_stride + (cols - 1) * col_stride; }
  // Whether the bytes from the first element to the last of the two meet (their strides may interleave them; then
  // they count as meeting).
  [[nodiscard]] bool meets(const Matrix& other) const {
    const auto first = reinterpret_cast<std::uintptr_t>(base),
               other_first = reinterpret_cast<std::uintptr_t>(other.base);
    const std::uintptr_t last = first + static_cast<std::uintptr_t>(last_offset()) * sizeof(float) + sizeof(float) - 1;
    const std::uintptr_t other_last =
        other_first + static_cast<std::uintptr_t>(other.last_offset()) * sizeof(float) + sizeof(float) - 1;
    return first <= other_last && other_first <= last;
  }
  [[nodiscard]] bool same(const Matrix& other) const {
    return base == other.base && rows == other.rows && cols == other.cols && row_stride == other.row_stride &&
           col_stride == other.col_stride;
  }
};

Matrix a_of(const SmallGemmLaunch& l) { return {l.a, l.m, l.k, l.a_row, l.a_col}; }
Matrix b_of(const SmallGemmLaunch& l) { return {l.b, l.k, l.n, l.b_row, l.b_col}; }
Matrix c_of(const SmallGemmLaunch& l) { return {l.c, l.m, l.n, l.c_row, l.c_col}; }

// Whether op(A) is copied 16 bytes at a time: one of its sides contiguous, and its start and every row (or column)
// on 16 bytes. Copied 4 bytes at a time, a chain of 20 took 23.4 µs against 13.9 copied 16 (§107's probe).
bool copied_whole(const SmallGemmLaunch& l) {
  constexpr std::int64_t kWords = 4;
  if (reinterpret_cast<std::uintptr_t>(l.a) % (kWords * sizeof(float)) != 0) return false;
  return (l.a_col == 1 && l.a_row % kWords == 0) || (l.a_row == 1 && l.a_col % kWords == 0);
}

// A plain product (plain_small_gemm: its offsets ints, its strides not negative) the chain's kernel takes, its
// operands apart from its C.
bool chain_product(const SmallGemmLaunch& l) {
  return l.m >= 1 && l.m <= kChainRows && l.k >= 1 && l.k <= kChainRows && l.n >= 1 && l.n <= kMaxGridExtent &&
         plain_small_gemm(l) && copied_whole(l) && !c_of(l).meets(a_of(l)) && !c_of(l).meets(b_of(l));
}

// Whether every product takes the same op(A) and reads it (alpha not 0): small_gemm_chain_one_a's chains.
bool one_a(const SmallGemmLaunch* chain, int count) {
  for (int s = 0; s < count; ++s)
    if (chain[s].alpha == 0.0 || !a_of(chain[s]).same(a_of(chain[0]))) return false;
  return true;
}

}  // namespace

cudaError_t allow_small_gemm_chains() { return allow_shared<small_gemm_chain>(kSharedBytes); }

SmallGemmLaunch transposed_small_gemm(const SmallGemmLaunch& l) {
  SmallGemmLaunch t = l;
  t.a = l.b;
  t.b = l.a;
  t.m = l.n;
  t.n = l.m;
  t.a_row = l.b_col;
  t.a_col = l.b_row;
  t.b_row = l.a_col;
  t.b_col = l.a_row;
  t.c_row = l.c_col;
  t.c_col = l.c_row;
  t.stride_a = l.stride_b;
  t.stride_b = l.stride_a;
  t.bias_row = l.bias_col;
  t.bias_col = l.bias_row;
  return t;
}

bool begins_small_gemm_chain(const SmallGemmLaunch& launch) { return chain_product(launch); }

bool continues_small_gemm_chain(const SmallGemmLaunch* chain, int count, const SmallGemmLaunch& next) {
  if (chain == nullptr || count < 1 || count >= kMostChainedGemms || !chain_product(next)) return false;
  const SmallGemmLaunch& last = chain[count - 1];
  if (!b_of(next).same(c_of(last))) return false;
  const Matrix a = a_of(next), c = c_of(next), first_b = b_of(chain[0]);
  if (c.meets(first_b) && !c.same(first_b)) return false;
  for (int s = 0; s < count; ++s) {
    const Matrix earlier_c = c_of(chain[s]);
    if (a.meets(earlier_c) || c.meets(a_of(chain[s]))) return false;
    if (c.meets(earlier_c) && !c.same(earlier_c)) return false;
  }
  return true;
}

int small_gemm_chain_length(const SmallGemmLaunch* launches, std::size_t count) {
  if (launches == nullptr || count == 0 || !begins_small_gemm_chain(launches[0])) return 0;
  int length = 1;
  while (static_cast<std::size_t>(length) < count && continues_small_gemm_chain(launches, length, launches[length]))
    ++length;
  return length;
}

cudaError_t launch_small_gemm_chain(const SmallGemmLaunch* chain, int count, cudaStream_t stream) {
  if (count < 1 || small_gemm_chain_length(chain, static_cast<std::size_t>(count)) != count)
    return cudaErrorInvalidValue;
  ChainLaunch p{};
  p.b = static_cast<const float*>(chain[0].b);
  p.b_row = static_cast<int>(chain[0].b_row);
  p.b_col = static_cast<int>(chain[0].b_col);
  p.count = count;
  for (int s = 0; s < count; ++s) {
    const SmallGemmLaunch& l = chain[s];
    p.product[s] = ChainedProduct{.a = static_cast<const float*>(l.a),
                                  .c = static_cast<float*>(l.c),
                                  .m = static_cast<int>(l.m),
                                  .k = static_cast<int>(l.k),
                                  .a_row = static_cast<int>(l.a_row),
                                  .a_col = static_cast<int>(l.a_col),
                                  .c_row = static_cast<int>(l.c_row),
                                  .c_col = static_cast<int>(l.c_col),
                                  .alpha = static_cast<float>(l.alpha)};
  }
  const dim3 grid(static_cast<unsigned>(chain[0].n));
  if (one_a(chain, count)) return launch_chained(small_gemm_chain_one_a, grid, dim3(kOneAThreads), 0, stream, p);
  return launch_chained(small_gemm_chain, grid, dim3(kThreads), kSharedBytes, stream, p);
}

}  // namespace accel::blas
