// Kernels of our own where cuBLAS has no routine (Asum of 16-bit vectors) or its routine moves memory slower than it
// could (PERFORMANCE.md §52, §92, §97): Axpy and Dot of 16-bit vectors, Swap of two contiguous vectors, Symv reading
// A's stored triangle once, and the whole matrix a triangle stands for, which Symm and small Trmms hand to a GEMM; Gemv
// of small matrices, where a request's time is its launches (§78); and Ger, one launch for any batch where cuBLAS's
// routine is a call per member; and GEMMs small enough that a request's time is its launch, which cuBLASLt ran on a
// kernel twice as long as they need; and the triangular solves of small order that a Trsm by blocks ends in. Plain
// C++17 and CUDA types: nvcc compiles the kernels' files as C++17.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "libs/blas/streamed_gemv_split.hpp"

namespace accel::blas {

// Exchanges n elements of x and y (contiguous, not overlapping), 8 bytes each if `f64`, else 4.
[[nodiscard]] cudaError_t launch_swap(void* x, void* y, std::int64_t n, bool f64, cudaStream_t stream);

// y = alpha x + y over n elements of increments incx and incy (BLAS's placing, as Gemv's), bf16 if `bf16`, else f16,
// each element computed in f32 and rounded once. cublasAxpyEx's 16-bit form moved memory at half the speed of
// PyTorch's add_ (55 against 25 µs for 2^24 elements, PERFORMANCE.md §92): contiguous vectors go 16 bytes a load.
[[nodiscard]] cudaError_t launch_narrow_axpy(const void* x, std::int64_t incx, void* y, std::int64_t incy,
                                             std::int64_t n, float alpha, bool bf16, cudaStream_t stream);

// Chains of element-wise requests on contiguous vectors, each chain one launch (vector_chain_kernels.cu), as a burst of
// requests or a recording links them (CudaOperation<Axpy>::Link, CudaOperation<Copy>::Link). A chain takes up to
// kMostChainedVectorSteps steps of one kind whose vectors start on 16 bytes, where any two vectors of which one is
// written either do not meet or are the very same vector (address and length). Then every element of every vector is
// read and written by one thread, in the steps' order, so the chain sees each step's writes as the next one did when
// launched alone (a vector y += a x again and again, x and y in turns, a vector copied along). The *_chain_length
// functions say how many steps from the first one launch takes (0: not even the first).
constexpr int kMostChainedVectorSteps = 32;

// One Axpy of contiguous 16-bit vectors; a chain is of one element type. Each element is computed as
// launch_narrow_axpy computes it, so the outputs are those of the launches one by one, bit for bit.
struct NarrowAxpy {
  const void* x = nullptr;
  void* y = nullptr;
  std::int64_t n = 0;
  float alpha = 0.0f;
  bool bf16 = false;
};
[[nodiscard]] int narrow_axpy_chain_length(const NarrowAxpy* axpys, std::size_t count);
[[nodiscard]] cudaError_t launch_narrow_axpy_chain(const NarrowAxpy* axpys, int count, cudaStream_t stream);

// One Copy of contiguous vectors, `bytes` of any element type (a multiple of two).
struct ContiguousCopy {
  const void* x = nullptr;
  void* y = nullptr;
  std::uint64_t bytes = 0;
};
[[nodiscard]] int copy_chain_length(const ContiguousCopy* copies, std::size_t count);
[[nodiscard]] cudaError_t launch_copy_chain(const ContiguousCopy* copies, int count, cudaStream_t stream);

// Writes to `result` the sum of |x_i| (Asum, increment incx > 0) or of x_i y_i (Dot, increments of either sign, placed
// as BLAS places them) over n elements, bf16 if `bf16`, else f16 (result of the same type), summed in f32 and rounded
// once, as cuBLAS's 16-bit routines compute: this cuBLAS has no 16-bit Asum (cublasAsumEx answers not_supported for
// f16 and bf16, PERFORMANCE.md §92), and a request on its DotEx took 16.1-17.0 µs pipelined on 65,536 elements
// against 7.0-10.0 on this kernel (§97). Blocks of 1,024 threads, 16 bytes a load where the vectors are contiguous and
// aligned; up to 65,536 elements one block and one launch, beyond that up to 256 blocks, each block's f32 sum into
// `workspace` (narrow_sum_workspace_bytes) and a second kernel adding them in block order, so that the result does not
// depend on scheduling.
[[nodiscard]] std::uint64_t narrow_sum_workspace_bytes(std::int64_t n);
[[nodiscard]] cudaError_t launch_narrow_asum(const void* x, std::int64_t n, std::int64_t incx, bool bf16, void* result,
                                             void* workspace, cudaStream_t stream);
[[nodiscard]] cudaError_t launch_narrow_dot(const void* x, std::int64_t incx, const void* y, std::int64_t incy,
                                            std::int64_t n, bool bf16, void* result, void* workspace,
                                            cudaStream_t stream);

// The element types of a matrix-vector product's kernels: 16-bit elements are summed in f32 and rounded once.
enum class VectorElement : std::uint8_t { f32, f64, f16, bf16 };

// The operands of y = alpha op(A) x + beta y over a batch, as a Gemv or Symv request resolved them (leading dimension
// and strides never 0). Element i of a vector of increment inc lies at i * inc, or (length - 1 - i) * -inc for a
// negative one, as in BLAS. Symv takes f32 and f64 only.
struct MatrixVectorLaunch {
  VectorElement element = VectorElement::f32;
  const void* a = nullptr;
  std::int64_t lda = 0;
  std::int64_t stride_a = 0;
  const void* x = nullptr;
  std::int64_t incx = 1;
  std::int64_t stride_x = 0;
  void* y = nullptr;
  std::int64_t incy = 1;
  std::int64_t stride_y = 0;
  double alpha = 1.0;
  double beta = 0.0;  // 0: y is not read
  std::int64_t batch = 1;
};

// One Gemv of a batch: A column-major m x n (op(A) n x m when `transpose`).
struct GemvLaunch : MatrixVectorLaunch {
  bool transpose = false;
  std::int64_t m = 0, n = 0;
};

// The most elements of A, and the longest sum, that launch_small_gemv takes: one launch of ours, against cuBLAS's
// routine and its host work, for a request whose time is its launch; larger ones stay cuBLAS's.
constexpr std::int64_t kSmallGemvElements = std::int64_t{1} << 20;
constexpr std::int64_t kSmallGemvSum = 4096;
[[nodiscard]] bool small_gemv(std::int64_t m, std::int64_t n, bool transpose, std::int64_t batch);

// Every member of the launch's batch in one kernel: a block per 32 rows of y, or per 8 where blocks of 32 would be few
// (plain), or a warp per element of y (transposed), each sum in a fixed order; on 16-bit elements as cuBLAS's HSH and
// TST gemv compute (f32 sums, alpha and beta, y rounded once): a 16-bit Gemv of 256 x 256 on those took 10.8-15.9 µs
// pipelined (PERFORMANCE.md §92), an f32 one on this kernel 8.1 (§80). cudaErrorInvalidValue where small_gemv does not
// hold.
[[nodiscard]] cudaError_t launch_small_gemv(const GemvLaunch& launch, cudaStream_t stream);

// Whether A itself is 16-byte aligned, as launch_streamed_gemv needs.
[[nodiscard]] bool streamed_gemv_aligned(const GemvLaunch& launch);
// y = alpha op(A) x + beta y on f32, f16 or bf16 elements beyond small_gemv's bounds, split as streamed_gemv_split says
// (streamed_gemv_split.hpp), A read 16 bytes a load: plain, the rows of a lane's load of a column (8 or 4); transposed,
// a warp per column (x 16 bytes a load too where contiguous and aligned). Sums in f32; where split, each split's sum
// goes to the workspace and a second kernel adds them in split order, so a result does not depend on scheduling; y
// rounded once. cuBLAS's HSH and TST gemv moved a 4,096² matrix at 2.0-2.8 TB/s (PERFORMANCE.md §92), its sgemv a
// 2,048² one slower than PyTorch's mv (§83). cudaErrorInvalidValue for f64, a split with no splits, an unaligned A, or
// a split with no workspace.
[[nodiscard]] cudaError_t launch_streamed_gemv(const GemvLaunch& launch, const StreamedGemvSplit& split,
                                               void* workspace, cudaStream_t stream);

// A = alpha x yᵀ + A over a batch (a Ger request's operands, resolved: leading dimension and strides never 0).
struct GerLaunch {
  bool f64 = false;
  void* a = nullptr;
  std::int64_t lda = 0, stride_a = 0;
  const void* x = nullptr;
  std::int64_t incx = 1, stride_x = 0;
  const void* y = nullptr;
  std::int64_t incy = 1, stride_y = 0;
  double alpha = 1.0;
  std::int64_t m = 0, n = 0, batch = 1;
};

// Every member in one launch, each element of A read and written once; A is untouched where alpha is 0 (as in BLAS)
// or the update is empty.
[[nodiscard]] cudaError_t launch_ger(const GerLaunch& launch, cudaStream_t stream);
// Gers chained as the vector steps above are (vector_chain_kernels.cu): up to kMostChainedVectorSteps single updates
// (batch 1, alpha not 0) of one element type, whose A's are either apart or the very same matrix (address, extents
// and leading dimension), and whose x's and y's meet no A of the chain. Each element of A is updated by one thread,
// in order, as launch_ger updates it (ger_member), so the outputs are those of the launches one by one, bit for bit.
[[nodiscard]] int ger_chain_length(const GerLaunch* gers, std::size_t count);
[[nodiscard]] cudaError_t launch_ger_chain(const GerLaunch* gers, int count, cudaStream_t stream);

// One Symv of a batch: A n x n symmetric.
struct SymvLaunch : MatrixVectorLaunch {
  bool lower = true;  // the triangle of A read; the other is never touched
  std::int64_t n = 0;
};

// How a Symv of order n runs a batch: by rows, or `members_at_once` members a launch (at least one; no more than
// 64 MiB of workspace holds, nor than a grid takes) and the workspace they need.
struct SymvBatching {
  std::int64_t members_at_once = 1;
  std::uint64_t workspace_bytes = 0;
  bool by_rows = false;  // the whole batch in one launch, as a small Gemv's, no workspace
};
// Orders up to this run by rows: a request whose time is its launches gets one, where the tiles take two.
constexpr std::int64_t kSmallSymvOrder = 512;
[[nodiscard]] SymvBatching symv_batching(std::int64_t n, bool f64, std::int64_t batch);

// y = alpha A x + beta y for each member. By rows: each row's sum over the triangle and its mirror, as Gemv's plain
// form. Else `batching`'s members at once in its workspace: each
// 64 x 64 tile of the stored triangle is read once and gives its rows' sums and, off the diagonal, its columns' sums,
// into a slot of its own in the workspace; a second kernel adds each row's slots in a fixed order, so the result does
// not depend on scheduling.
[[nodiscard]] cudaError_t launch_symv(const SymvLaunch& launch, const SymvBatching& batching, void* workspace,
                                      cudaStream_t stream);

// What the triangle of A stored (`lower`, else upper) stands for, made whole by launch_whole_matrix.
enum class StoredTriangle {
  symmetric,        // the other triangle mirrors it
  triangular,       // the other triangle is zero
  unit_triangular,  // zero, and ones on the diagonal, whatever is stored there
};

// Writes the order x order matrix (leading dimension `order`) that the triangle `lower` (or upper) of a (leading
// dimension lda) stands for into `whole`; the other triangle of a is never read.
[[nodiscard]] cudaError_t launch_whole_matrix(const void* a, std::int64_t lda, std::int64_t order, bool lower,
                                              StoredTriangle form, bool f64, void* whole, cudaStream_t stream);

// -- Triangular solves of small order --------------------------------------------------------------------------------

// T y = alpha c for each of `rhs` right-hand sides c, in place: T is order x order, triangular, its element (i, j) at
// t + i * t_row + j * t_col; element i of right-hand side r lies at c + r * c_rhs + i * c_element.
struct TriangularSolveLaunch {
  bool f64 = false;
  const void* t = nullptr;
  std::int64_t t_row = 0, t_col = 0;
  bool lower = true;  // T lower triangular, solved top down; else upper, bottom up. The other triangle is never read.
  bool unit = false;  // T's diagonal taken as ones, never read
  void* c = nullptr;
  std::int64_t c_element = 0, c_rhs = 0;
  std::int64_t order = 0, rhs = 0;
  double alpha = 1.0;
};

// The largest order launch_triangular_solve takes: a right-hand side's elements are the registers of a lane in each of
// 8 warps (f64) or 16 (f32; with 16 warps an f64 block of T in registers would spill).
constexpr std::int64_t triangular_solve_order(bool f64) { return f64 ? 64 : 128; }

// A lane per right-hand side in each of order / 8 warps of 8 rows, substituting in a fixed order; each diagonal element
// divides as its reciprocal. cudaErrorInvalidValue past triangular_solve_order.
[[nodiscard]] cudaError_t launch_triangular_solve(const TriangularSolveLaunch& launch, cudaStream_t stream);
// Lets launch_triangular_solve's kernels for the element type take the shared memory they need on the current device:
// a host call a capture must not hold, so made before it (a Trsm's plan). Launches make it too where it was not.
[[nodiscard]] cudaError_t prepare_triangular_solve(bool f64);

// -- GEMM of small matrices -----------------------------------------------------------------------------------------

// What a small GEMM's epilogue applies after alpha op(A) op(B) + beta C + bias: as cuBLASLt's (Activation's).
enum class GemmActivation : std::uint8_t { identity, relu, gelu_tanh };

// C = activation(alpha op(A) op(B) + beta C + bias) over a strided batch of f32 matrices, every layout as strides:
// element (i, p) of op(A) lies at a + i * a_row + p * a_col, (p, j) of op(B) at b + p * b_row + j * b_col, (i, j) of C
// at c + i * c_row + j * c_col and of the bias at bias + i * bias_row + j * bias_col; member z adds z times its stride.
struct SmallGemmLaunch {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  const void* bias = nullptr;  // null: none
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  std::int64_t a_row = 0, a_col = 0, stride_a = 0;
  std::int64_t b_row = 0, b_col = 0, stride_b = 0;
  std::int64_t c_row = 0, c_col = 0, stride_c = 0;
  std::int64_t bias_row = 0, bias_col = 0;
  double alpha = 1.0;
  double beta = 0.0;  // 0: C is not read
  GemmActivation activation = GemmActivation::identity;
};

// Whether an f32 GEMM of these extents takes launch_small_gemm: at most 160 x 160 outputs in all and sums of at most
// 128 terms, where one launch of ours took 0.40-0.85x cuBLASLt's kernel time in a CUDA graph from 32 x 32 x 32 up and
// 0.61-0.88x its time waited on at once (PERFORMANCE.md §87). cuBLASLt's won the shapes measured past those bounds,
// and f64 products in a graph (its FP64 tensor cores), so those stay its.
[[nodiscard]] bool small_gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch);

// Whether `launch` is a plain product, which launch_small_gemm runs on a form of its own: one member, C = alpha op(A)
// op(B), and every offset a thread works out an int (rows and columns up to the edge of the last tile, terms up to
// the end of the last stage).
[[nodiscard]] bool plain_small_gemm(const SmallGemmLaunch& launch);

// Every member in one launch, a block of 256 threads per 8 x 8 tile of C, each output's sum split among four lanes
// (every fourth term each); A and B unread where alpha is 0 or k is 0, C unread where beta is 0.
[[nodiscard]] cudaError_t launch_small_gemm(const SmallGemmLaunch& launch, cudaStream_t stream);

// -- chains of small GEMMs in one launch ----------------------------------------------------------------------------

// The most products launch_small_gemm_chain runs in one launch (its parameters hold each one's operands).
constexpr int kMostChainedGemms = 32;

// Lets the chain's kernel take the shared memory it needs on the current device (64 KiB, past the default): called
// before any chain is captured (a GEMM's plan), since it may set the kernel's attribute, which a capture must not.
[[nodiscard]] cudaError_t allow_small_gemm_chains();

// Whether a chain may begin with `launch`: a plain product (one member, C = alpha op(A) op(B)) of at most 64 rows and
// 64 terms, whose C overlaps neither A nor B.
[[nodiscard]] bool begins_small_gemm_chain(const SmallGemmLaunch& launch);

// Whether `next` may follow the chain chain[0..count) (count < kMostChainedGemms): its op(B) is the last product's C,
// the very matrix; no product's A overlaps a C of the chain (the A's are what the chain does not write); and its C is
// apart from every other C and from the first product's B, or the very same matrix (as buffers taken in turn).
[[nodiscard]] bool continues_small_gemm_chain(const SmallGemmLaunch* chain, int count, const SmallGemmLaunch& next);

// The same product as Cᵀ = op(B)ᵀ op(A)ᵀ: B's matrix as A and A's as B, rows and columns swapped, the same outputs
// summed over the same terms in the same order. A chain of products each reading the one before's C as op(A) (rows of
// activations through layers) is a chain of their transposes.
[[nodiscard]] SmallGemmLaunch transposed_small_gemm(const SmallGemmLaunch& launch);

// How many of launches[0..count) make one chain from the first (begun and continued as the two above allow, at most
// kMostChainedGemms); 0 where the first begins none.
[[nodiscard]] int small_gemm_chain_length(const SmallGemmLaunch* launches, std::size_t count);

// C_s = alpha_s op(A_s) C_{s-1} for the products of a chain (all `count` of them, small_gemm_chain_length), C_{-1}
// being op(B) of the first: in one launch, a block per column of C. Column j of every C depends only on column j of
// the C before, so a block runs the whole chain in its shared memory with no other block's writes to wait for; each
// output is the same sum in the same order as launch_small_gemm's, so equal to the products launched one by one. A
// chain whose products all take the same op(A) (and alpha not 0) reads that A once, into registers.
[[nodiscard]] cudaError_t launch_small_gemm_chain(const SmallGemmLaunch* chain, int count, cudaStream_t stream);

}  // namespace accel::blas
