// How a RunRecorded (include/accel/device/run_recorded.hpp) crosses to an isolated worker: staged like a
// library request that is not plain data (staged_requests.hpp). Its steps are plain data: each is its index in
// RecordedStep and its bytes.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <type_traits>
#include <utility>
#include <variant>

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
  run.steps.resize(count);
  for (RecordedStep& step : run.steps) {
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
  return run;
}

}  // namespace accel::device::isolated
