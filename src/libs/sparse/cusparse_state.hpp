// cuSPARSE's generic API on a CUDA stream, as the sparse requests share it: a handle per stream bound to it, and the
// analysis of each matrix structure — its descriptor, the buffer cuSPARSE asked for, what *_preprocess or SpSV's
// analysis left in it — kept in the stream's cache (the one cache, src/cache) so that a repeated request over the
// same structure asks for no size and analyses nothing again (Matrix::structure says when that is allowed).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "accel/libs/sparse/sparse.hpp"
#include "cache/cache.hpp"
#include "cache/hit_counts.hpp"
#include "libs/sparse/cusparse_library.hpp"
#include "libs/sparse/structure.hpp"
#include "libs/sparse/structure_verdicts.hpp"
#include "operation/cuda_operation.hpp"

namespace accel::sparse {

[[nodiscard]] Status cusparse_status(cusparseStatus_t status, std::string_view what);
[[nodiscard]] cudaDataType to_cuda(DType dtype) noexcept;
// What cuSPARSE computes in for values of `dtype`: f32 for the 16-bit types.
[[nodiscard]] cudaDataType compute_type(DType dtype) noexcept;

// cuSPARSE's objects for one structure. Destroyed with the cache entry; its buffer is freed in stream order.
struct Analysis {
  explicit Analysis(const CusparseApi& api) noexcept : api(api) {}
  Analysis(const Analysis&) = delete;
  Analysis& operator=(const Analysis&) = delete;
  ~Analysis();

  const CusparseApi& api;
  cudaStream_t stream = nullptr;
  cusparseSpMatDescr_t matrix = nullptr;
  cusparseSpSVDescr_t spsv = nullptr;
  void* buffer = nullptr;
  std::uint64_t buffer_bytes = 0;
  // The versions of the index arrays (offsets, indices) that the structure was last checked and analysed at; 0 when
  // one is not tracked. Only its stream's runs, one at a time, read and write it, though the analysis is shared.
  mutable std::array<std::uint64_t, 2> structure_versions{};
};

// What an analysis depends on: the request kind, its operations and the matrix's structure (its index buffers —
// whose handles name one allocation for its whole life — shape, types and a blocked ELL's block size), and the dense
// operands' layouts.
using AnalysisKey = std::array<std::int64_t, 16>;
enum class Kind : std::uint8_t { spmv, spmm, spsv, to_dense, sddmm };
[[nodiscard]] AnalysisKey analysis_key(Kind kind, const Matrix& m, std::int64_t a, std::int64_t b, std::int64_t c,
                                       std::int64_t d, std::int64_t e);

// Device memory of one request's cuSPARSE step, from the stream's pool, freed in stream order after the work that
// used it.
class StreamBuffer {
 public:
  explicit StreamBuffer(cudaStream_t stream) noexcept : stream_(stream) {}
  ~StreamBuffer();
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;

  // `bytes` from the pool (nothing for 0); `what` names it in an error.
  [[nodiscard]] Status allocate(CudaTarget& target, std::size_t bytes, std::string_view what);
  [[nodiscard]] void* data() const noexcept { return data_; }
  // Gives up the memory, which someone else frees from now on (a buffer it was handed to, CudaTarget::adopt).
  void release() noexcept { data_ = nullptr; }

 private:
  cudaStream_t stream_;
  void* data_ = nullptr;
};

// cuSPARSE's descriptors of one product A·B within one request.
struct SpGemmWork {
  explicit SpGemmWork(const CusparseApi& api) noexcept : api(api) {}
  SpGemmWork(const SpGemmWork&) = delete;
  SpGemmWork& operator=(const SpGemmWork&) = delete;
  ~SpGemmWork();

  const CusparseApi& api;
  cusparseSpMatDescr_t a = nullptr, b = nullptr, c = nullptr;
  cusparseSpGEMMDescr_t spgemm = nullptr;
};

// A product A·B that SpGemmCount computed in full into scratch columns and values (alpha 1), kept so that the
// SpGemm after it hands them to C's buffers, or copies them, rather than multiply again.
struct CountedProduct {
  explicit CountedProduct(cudaStream_t stream) noexcept : columns(stream), values(stream) {}

  // Mutable: the SpGemm that takes the product out of the cache, its one owner from then on, may hand them over.
  mutable StreamBuffer columns;
  mutable StreamBuffer values;
  std::int64_t nnz = 0;
  std::uint64_t bytes = 0;
};

// What a counted product depends on: A's and B's shapes, nnz and types, the versions of their six arrays (`views`,
// the requests' first six, A's then B's) and the version of C's offsets that the count wrote; nullopt when a
// version is not tracked.
using CountedKey = std::array<std::int64_t, 15>;
[[nodiscard]] std::optional<CountedKey> counted_key(const Matrix& a, const Matrix& b, std::span<const BufferView> views,
                                                    std::uint64_t offsets_version);

// What cuSPARSE keeps per stream: its handle, set to the stream, the analyses of the structures used there, and
// the last SpGemmCount's product until an SpGemm uses it or the next count replaces it. Opening the first loads
// the library.
class CusparseState final : public TargetState {
 public:
  static Result<std::unique_ptr<CusparseState>> open(CudaTarget& target);
  ~CusparseState() override;
  CusparseState(const CusparseState&) = delete;
  CusparseState& operator=(const CusparseState&) = delete;

  [[nodiscard]] const CusparseApi& api() const noexcept { return api_; }
  [[nodiscard]] cusparseHandle_t handle() const noexcept { return handle_; }
  [[nodiscard]] cache::Cache<Analysis>& analyses() noexcept { return *analyses_; }
  [[nodiscard]] cache::Cache<CountedProduct>& counted_products() noexcept { return *counted_; }
  // Counts a counted product's columns or values placed in C's buffer: handed over, or copied.
  void count_handover(bool handed_over) noexcept { handovers_.count(handed_over); }
  // "cusparse-spgemm-handovers": hits are the arrays handed to C's buffers, misses (and builds) those copied.
  [[nodiscard]] CacheStats handovers() const { return handovers_.stats("cusparse-spgemm-handovers"); }

 private:
  CusparseState(const CusparseApi& api, cusparseHandle_t handle);
  const CusparseApi& api_;
  cusparseHandle_t handle_;
  std::unique_ptr<cache::Cache<Analysis>> analyses_;  // reset before the handle is destroyed
  std::unique_ptr<cache::Cache<CountedProduct>> counted_;
  cache::HitCounts handovers_;
};

// A planned sparse request: the stream's structure verdicts, and its cuSPARSE state and table unless the request runs
// kernels of our own only. Its runs take a StructureReport of workspace and of host result.
struct SparsePlan {
  StructureVerdicts* verdicts = nullptr;
  CusparseState* state = nullptr;
  const CusparseApi* api = nullptr;
};
inline constexpr std::uint64_t kReportBytes = sizeof(StructureReport);

// The plan of a request that calls cuSPARSE: opens the stream's state, so that the first loads the library (a
// missing one is the request's unavailable error).
[[nodiscard]] Result<SparsePlan> plan_sparse(CudaTarget& target);
// The plan of a request that runs kernels of our own only: the stream's structure verdicts, no library.
[[nodiscard]] Result<SparsePlan> plan_structure_checks(CudaTarget& target);

// The structural check of `m` on the stream; waits for its verdict, so that no library reads a malformed matrix.
[[nodiscard]] Result<PassedStructure> check_structure_on_device(CudaRun& run, std::string_view request,
                                                                std::string_view name, const Matrix& m,
                                                                const BufferView& offsets, const BufferView& indices);

// A new descriptor of `m` over its resolved buffers.
[[nodiscard]] Result<cusparseSpMatDescr_t> make_descriptor(const CusparseApi& api, const Matrix& m,
                                                           const BufferView& offsets, const BufferView& indices,
                                                           const BufferView& values);

// A buffer of `bytes` for `analysis`, from the device's pool in stream order.
[[nodiscard]] Status allocate_buffer(CudaRun& run, Analysis& analysis, std::size_t bytes);

// A cuSPARSE launch's status, with a sticky CUDA error behind a failure taking precedence.
[[nodiscard]] Status launched(CudaRun& run, cusparseStatus_t status, std::string_view what);

void describe_cusparse(CudaTarget& target, LibraryReport& report);

}  // namespace accel::sparse
