#include "libs/sparse/structure_verdicts.hpp"

#include <algorithm>
#include <array>
#include <span>

#include "libs/sparse/cusparse_state.hpp"

namespace accel::sparse {
namespace {

// Passed structures cost a key each; this bounds a stream's memory of them against a stream of ever new matrices.
constexpr std::size_t kPassedCapacity = 256;

}  // namespace

StructureVerdicts::StructureVerdicts()
    : passed_(
          cache::CacheOptions<PassedStructure>{.name = "sparse-passed-structures", .max_entries = kPassedCapacity}) {}

Result<std::unique_ptr<StructureVerdicts>> StructureVerdicts::open(CudaTarget&) {
  return std::unique_ptr<StructureVerdicts>(new StructureVerdicts());
}

Result<PassedStructure> check_structure_once(CudaRun& run, StructureVerdicts& verdicts, std::string_view request,
                                             std::string_view name, const Matrix& m, const BufferView& offsets,
                                             const BufferView& indices) {
  if (offsets.version == 0 || indices.version == 0) {
    verdicts.count(false);
    return check_structure_on_device(run, request, name, m, offsets, indices);
  }
  // The shape, the arrays, and the versions their contents had when they passed.
  std::array<std::int64_t, 13> key{static_cast<std::int64_t>(m.format) | static_cast<std::int64_t>(m.index) << 8,
                                   m.rows, m.cols, m.nnz, m.ell_block_size};
  const IndexArrays arrays = index_arrays(m);
  std::copy(arrays.begin(), arrays.end(), key.begin() + 5);
  key[11] = static_cast<std::int64_t>(offsets.version);
  key[12] = static_cast<std::int64_t>(indices.version);
  bool checked = false;
  const Result<std::shared_ptr<const PassedStructure>> passed =
      verdicts.passed().get(std::as_bytes(std::span(key)), [&]() -> Result<PassedStructure> {
        checked = true;
        return check_structure_on_device(run, request, name, m, offsets, indices);
      });
  verdicts.count(!checked);
  ACCEL_RETURN_IF_ERROR(passed.status());
  return **passed;
}

void describe_structure_verdicts(CudaTarget& target, LibraryReport& report) {
  if (StructureVerdicts* verdicts = target.existing_stream_state<StructureVerdicts>()) {
    report.report(verdicts->stats());
  }
}

}  // namespace accel::sparse
