// What a CUDA stream remembers of the structural checks it ran (sparse.hpp: a matrix's index arrays are checked
// before any library reads them): which index arrays passed, by handles and versions, and how many checks it ran
// and skipped. A stream state of its own, apart from cuSPARSE's, so that requests that load no library (the
// conversions' kernels) skip a check as the products do.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>

#include "accel/libs/sparse/sparse.hpp"
#include "cache/cache.hpp"
#include "cache/hit_counts.hpp"
#include "operation/cuda_operation.hpp"

namespace accel::sparse {

// A matrix's index arrays by buffer: the slot, generation and epoch of its offsets, then of its indices. Each names
// one allocation for its whole life, so a key holding them names these very arrays.
using IndexArrays = std::array<std::int64_t, 6>;
[[nodiscard]] inline IndexArrays index_arrays(const Matrix& m) noexcept {
  auto slot = [](const BufferHandle& h) { return std::int64_t{h.device} << 32 | h.slot; };
  return {slot(m.offsets), static_cast<std::int64_t>(m.offsets.generation), m.offsets.epoch,
          slot(m.indices), static_cast<std::int64_t>(m.indices.generation), m.indices.epoch};
}

// A structure check passed; its key says of which arrays, at which versions. With what it found of the rows.
struct PassedStructure {
  std::uint64_t longest = 0;  // StructureReport::longest
};

class StructureVerdicts final : public TargetState {
 public:
  static Result<std::unique_ptr<StructureVerdicts>> open(CudaTarget& target);

  [[nodiscard]] cache::Cache<PassedStructure>& passed() noexcept { return passed_; }
  // Counts a check: run, or skipped because the index arrays still had the versions of a passed one.
  void count(bool skipped) noexcept { counts_.count(skipped); }
  // "sparse-structure-verdicts": hits are the checks skipped, misses (and builds) the checks run.
  [[nodiscard]] CacheStats stats() const { return counts_.stats("sparse-structure-verdicts"); }

 private:
  StructureVerdicts();
  cache::Cache<PassedStructure> passed_;
  cache::HitCounts counts_;
};

// The structural check of `m` (check_structure_on_device), skipped when the stream has passed these very index
// arrays (handles and versions, docs/ARCHITECTURE.md, "Versions of a buffer's contents") under the same shape: equal
// versions, equal contents. For requests that keep no analysis of the structure (SpGEMM, the conversions); an
// analysis remembers its own versions (analysis_of).
[[nodiscard]] Result<PassedStructure> check_structure_once(CudaRun& run, StructureVerdicts& verdicts,
                                                           std::string_view request, std::string_view name,
                                                           const Matrix& m, const BufferView& offsets,
                                                           const BufferView& indices);

// Reports the stream's verdicts, if it has any.
void describe_structure_verdicts(CudaTarget& target, LibraryReport& report);

}  // namespace accel::sparse
