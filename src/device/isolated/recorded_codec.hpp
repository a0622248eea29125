// How a RunRecorded (include/accel/device/run_recorded.hpp) crosses to an isolated worker: staged like a
// library request that is not plain data (staged_requests.hpp). Its steps are plain data: each is its index in
// RecordedStep and its bytes. Host copies never cross: refused by name on both sides (refuse_host_copies).
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "accel/core/byte_codec.hpp"
#include "accel/device/run_recorded.hpp"

namespace accel::device::isolated {

namespace detail {
template <class Variant>
struct PlainAlternatives;
template <class... Steps>
struct PlainAlternatives<std::variant<Steps...>> {
  static constexpr bool value = (std::is_trivially_copyable_v<Steps> && ...);
};

// Reads the step of index `index` into `step`; false for an index past the last.
template <std::size_t... I>
bool read_step(ByteReader& in, std::uint8_t index, RecordedStep& step, std::index_sequence<I...>) {
  return ((index == I ? (in.pod(step.emplace<I>()), true) : false) || ...);
}
}  // namespace detail

static_assert(detail::PlainAlternatives<RecordedStep>::value, "a recorded step crosses byte for byte");

// Host copies cannot be recorded on an isolated device: the worker reaches the caller's memory only through the
// staging region, which every copy reuses, so no graph of the worker can name it (and a host address of the caller
// means nothing in the worker).
[[nodiscard]] inline Status refuse_host_copies(const RunRecorded& run) {
  for (std::size_t i = 0; i < run.steps.size(); ++i) {
    if (std::holds_alternative<CopyToDevice>(run.steps[i]) || std::holds_alternative<CopyToHost>(run.steps[i])) {
      return not_supported(fmt::format(
          "launch refused: step {} ({}): an isolated device cannot record host copies (its worker reaches host "
          "memory only through the staging region every copy reuses); copy before and after the launch instead",
          i, step_name(run.steps[i])));
    }
  }
  return Status();
}

// The bytes encode_recorded writes for `run`: known before encoding, so that a launch is encoded straight into the
// staging region.
[[nodiscard]] inline std::size_t recorded_bytes(const RunRecorded& run) {
  std::size_t bytes = sizeof run.recording + sizeof(std::uint64_t);
  for (const RecordedStep& step : run.steps) {
    bytes += sizeof(std::uint8_t) + std::visit([](const auto& request) { return sizeof request; }, step);
  }
  return bytes;
}

inline void encode_recorded(ByteWriter& out, const RunRecorded& run) {
  out.pod(run.recording);
  out.pod(static_cast<std::uint64_t>(run.steps.size()));
  for (const RecordedStep& step : run.steps) {
    out.pod(static_cast<std::uint8_t>(step.index()));
    std::visit([&](const auto& request) { out.pod(request); }, step);
  }
}

inline Result<RunRecorded> decode_recorded(ByteReader& in) {
  RunRecorded run;
  std::uint64_t count = 0;
  in.pod(run.recording).count(count, 1);
  std::vector<RecordedStep> steps(count);
  for (RecordedStep& step : steps) {
    std::uint8_t index = 0;
    in.pod(index);
    if (!in.ok() ||
        !detail::read_step(in, index, step, std::make_index_sequence<std::variant_size_v<RecordedStep>>())) {
      in.fail();
      break;
    }
  }
  if (!in.finished()) {
    return internal_error(fmt::format("the staged encoding of a {} request is damaged", RunRecorded::kName));
  }
  run.steps = std::move(steps);
  ACCEL_RETURN_IF_ERROR(refuse_host_copies(run));
  return run;
}

}  // namespace accel::device::isolated
