// Requests that are not plain data (a graph, a program's source, a list of groups) cross to the worker as a
// Staged<Request> in the channel slot, with their encoding in the staging region: the family's
// Operation<Request>::encode / decode (Note [The operation contract]); a RunRecorded's is recorded_codec.hpp. The
// worker decodes them again and trusts nothing it did not check: a damaged encoding is an error, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "accel/core/byte_codec.hpp"
#include "accel/device/protocol.hpp"
#include "device/isolated/recorded_codec.hpp"
#include "device/library_operations.hpp"

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

template <class Request>
void encode_staged(ByteWriter& out, const Request& request) {
  if constexpr (std::is_same_v<Request, RunRecorded>) {
    encode_recorded(out, request);
  } else {
    Operation<Request>::encode(out, request);
  }
}

template <class Request>
[[nodiscard]] std::vector<std::byte> encode_staged(const Request& request) {
  ByteWriter out;
  encode_staged(out, request);
  return out.take();
}

// The bytes encode_staged writes for `request` where they are known before it is encoded (a RunRecorded's: a
// recording's launch, sent again and again), so that it goes straight into the staging region; nothing otherwise.
template <class Request>
[[nodiscard]] std::optional<std::size_t> staged_bytes(const Request& request) {
  if constexpr (std::is_same_v<Request, RunRecorded>) {
    return recorded_bytes(request);
  } else {
    return std::nullopt;
  }
}

template <class Request>
[[nodiscard]] Result<Request> decode_staged(std::span<const std::byte> bytes) {
  ByteReader in(bytes);
  if constexpr (std::is_same_v<Request, RunRecorded>) {
    return decode_recorded(in);
  } else {
    return Operation<Request>::decode(in);
  }
}

}  // namespace accel::device::isolated
