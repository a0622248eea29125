#include "libs/sparse/structure.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace accel::sparse {
namespace {

template <class I>
StructureReport check(const StructureShape& s, const I* offsets, const I* indices) noexcept {
  StructureReport r;
  auto fault = [&](std::uint32_t kind, std::uint64_t& first, std::uint64_t at) {
    r.faults |= kind;
    first = std::min(first, at);
  };
  const auto nnz = static_cast<std::uint64_t>(s.nnz);
  // A blocked-ELL's padding blocks are -1; it has no offsets.
  const I lowest = s.format == Format::blocked_ell ? I{-1} : I{0};
  if (s.format == Format::coo) {
    for (std::uint64_t p = 0; p < nnz; ++p) {
      if (offsets[p] < 0 || offsets[p] >= s.outer) fault(kRowOutOfRange, r.first_offset, p);
      if (p + 1 < nnz && offsets[p + 1] < offsets[p]) fault(kRowsUnsorted, r.first_offset, p + 1);
    }
  } else if (s.format != Format::blocked_ell) {
    const auto outer = static_cast<std::uint64_t>(s.outer);
    if (offsets[0] != 0) fault(kFirstOffsetNotZero, r.first_offset, 0);
    for (std::uint64_t i = 0; i < outer; ++i) {
      if (offsets[i + 1] < offsets[i]) fault(kOffsetsDecrease, r.first_offset, i);
      if (offsets[i + 1] > offsets[i])
        r.longest = std::max(r.longest, static_cast<std::uint64_t>(offsets[i + 1] - offsets[i]));
    }
    if (static_cast<std::uint64_t>(offsets[outer]) != nnz) fault(kLastOffsetNotNnz, r.first_offset, outer);
  }
  for (std::uint64_t p = 0; p < nnz; ++p)
    if (indices[p] < lowest || indices[p] >= s.inner) fault(kIndexOutOfRange, r.first_index, p);
  return r;
}

}  // namespace

std::string_view to_string(Format format) noexcept {
  switch (format) {
    case Format::csr: return "csr";
    case Format::csc: return "csc";
    case Format::coo: return "coo";
    case Format::blocked_ell: return "blocked_ell";
  }
  return "format";
}

StructureShape structure_shape(const Matrix& m) noexcept {
  switch (m.format) {
    case Format::csc: return {.format = m.format, .outer = m.cols, .inner = m.rows, .nnz = m.nnz};
    case Format::blocked_ell: {
      const std::int64_t bs = std::max<std::int64_t>(m.ell_block_size, 1);
      return {.format = m.format, .outer = m.rows / bs, .inner = m.cols / bs, .nnz = m.rows / bs * (ell_cols(m) / bs)};
    }
    case Format::csr:
    case Format::coo: break;
  }
  return {.format = m.format, .outer = m.rows, .inner = m.cols, .nnz = m.nnz};
}

StructureReport check_structure(const StructureShape& shape, DType index, const void* offsets,
                                const void* indices) noexcept {
  if (index == DType::i64) {
    return check(shape, static_cast<const std::int64_t*>(offsets), static_cast<const std::int64_t*>(indices));
  }
  return check(shape, static_cast<const std::int32_t*>(offsets), static_cast<const std::int32_t*>(indices));
}

Status structure_status(std::string_view request, std::string_view name, const StructureShape& shape,
                        const StructureReport& report) {
  if (report.faults == 0) return Status();
  const std::string_view outer = shape.format == Format::csc ? "column" : "row";
  const std::string_view inner = shape.format == Format::csc ? "row" : "column";
  std::string what;
  if (report.faults & kFirstOffsetNotZero) {
    what = fmt::format("its first {} offset is not 0", outer);
  } else if (report.faults & kOffsetsDecrease) {
    what = fmt::format("{} offsets decrease at {} {}", outer, outer, report.first_offset);
  } else if (report.faults & kLastOffsetNotNnz) {
    what = fmt::format("its last {} offset is not nnz = {}", outer, shape.nnz);
  } else if (report.faults & kRowOutOfRange) {
    what = fmt::format("the row of entry {} is outside [0, {})", report.first_offset, shape.outer);
  } else if (report.faults & kRowsUnsorted) {
    what = fmt::format("its rows are not sorted: entry {} has a lower row than the one before", report.first_offset);
  } else if (shape.format == Format::blocked_ell) {
    what = fmt::format("the column block of slot {} is neither -1 nor inside [0, {})", report.first_index, shape.inner);
  } else {
    what = fmt::format("the {} of entry {} is outside [0, {})", inner, report.first_index, shape.inner);
  }
  return Status(Code::failed_precondition, fmt::format("{}: {} is malformed: {}", request, name, what));
}

}  // namespace accel::sparse
