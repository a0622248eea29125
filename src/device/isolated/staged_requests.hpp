// Requests that are not plain data (a graph, a program's source, a list of groups) cross to the worker as a
// Staged<Request> in the channel slot, with their encoding in the staging region. The worker decodes them
// again and trusts nothing it did not check: a damaged encoding is an error, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "accel/device/protocol.hpp"

namespace accel::device::isolated {

template <class Request>
inline constexpr bool kStaged = !std::is_trivially_copyable_v<Request>;

template <class Request>
struct Staged {
  static constexpr const char* kName = Request::kName;
  using Response = response_t<Request>;
  std::uint64_t offset = 0;  // in the staging region
  std::uint64_t bytes = 0;
};

[[nodiscard]] std::vector<std::byte> encode_staged(const RunGraph& request);
[[nodiscard]] std::vector<std::byte> encode_staged(const LaunchKernel& request);
[[nodiscard]] std::vector<std::byte> encode_staged(const CutlassGroupedGemm& request);

[[nodiscard]] Result<RunGraph> decode_staged(std::span<const std::byte> bytes, std::type_identity<RunGraph>);
[[nodiscard]] Result<LaunchKernel> decode_staged(std::span<const std::byte> bytes, std::type_identity<LaunchKernel>);
[[nodiscard]] Result<CutlassGroupedGemm> decode_staged(std::span<const std::byte> bytes,
                                                       std::type_identity<CutlassGroupedGemm>);

}  // namespace accel::device::isolated
