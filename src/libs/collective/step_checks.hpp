// What every collective request is checked for before anything runs (communicator fields, kinds, dtypes, counts,
// roots and peers, buffer ranges, overlaps), and the ranges of buffers each step reads and writes.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "accel/core/result.hpp"
#include "accel/libs/collective/collective.hpp"
#include "operation/operation.hpp"

namespace accel::collective {

// One checked step: which of its buffers it uses on this rank, and how many elements of each.
struct StepUse {
  Step step;
  bool reads_send = false;
  bool writes_recv = false;
  std::uint64_t send_count = 0;  // elements read from send_offset
  std::uint64_t recv_count = 0;  // elements written from recv_offset
  // Send and recv are the same range in NCCL's in-place sense (the run passes one address for both).
  bool in_place = false;
};

// A checked Collective or Group: its communicator and its steps in order.
struct CheckedSteps {
  Comm comm;
  std::vector<StepUse> steps;
};

[[nodiscard]] Status check_comm(std::string_view request, const Comm& comm);
// A timeout of 0 is refused: it would abort every communicator at once.
[[nodiscard]] Status check_timeout(std::string_view request, std::uint32_t timeout_ms);
[[nodiscard]] Result<CheckedSteps> check_steps(std::string_view request, const Comm& comm, std::span<const Step> steps);

// The operands of checked steps: two per step (send read, recv written), absent where the step does not use them
// on this rank. A step's operands are at 2 * index and 2 * index + 1.
void step_operands(const CheckedSteps& checked, Operands& operands);
inline constexpr std::size_t send_slot(std::size_t step) noexcept { return 2 * step; }
inline constexpr std::size_t recv_slot(std::size_t step) noexcept { return 2 * step + 1; }

// How a step is named in errors: "collective::Group step 2 (all_gather)".
[[nodiscard]] std::string step_name(std::string_view request, std::size_t index, std::size_t steps, Kind kind);

}  // namespace accel::collective
