// How device requests and their replies are laid out in the channel's slots.
//
// A request is its plain struct, byte for byte (every DeviceProtocol request is trivially copyable; host
// pointers of copies are rewritten to staging offsets before they are sent). Its tag is its position in
// DeviceProtocol. A reply is the Status (code, source, raw code, message) followed, when OK, by the value:
// plain values byte for byte, DeviceInfo field by field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

#include "accel/core/byte_codec.hpp"
#include "accel/device/protocol.hpp"
#include "device/isolated/staged_requests.hpp"

namespace accel::device::isolated {

// Control messages that are not device requests.
inline constexpr std::uint16_t kCloseStreamTag = 0xff00;

namespace detail {
template <class Request, class P>
struct TagOf;
template <class Request, class... Requests>
struct TagOf<Request, Protocol<Requests...>> {
  static constexpr std::uint16_t value = [] {
    std::uint16_t index = 0;
    [[maybe_unused]] const bool found = ((std::is_same_v<Request, Requests> ? true : (++index, false)) || ...);
    return index;
  }();
};
template <class P>
struct Visit;
template <class... Requests>
struct Visit<Protocol<Requests...>> {
  template <class F>
  static bool apply(std::uint16_t tag, std::span<const std::byte> payload, F& f) {
    bool decoded = false;
    (void)((tag == TagOf<Requests, DeviceProtocol>::value ? (decoded = call<Requests>(payload, f), true) : false) ||
           ...);
    return decoded;
  }
  template <class Request, class F>
  static bool call(std::span<const std::byte> payload, F& f) {
    using Wire = std::conditional_t<kStaged<Request>, Staged<Request>, Request>;
    if (payload.size() != sizeof(Wire)) return false;
    Wire request;
    std::memcpy(static_cast<void*>(&request), payload.data(), sizeof request);
    f(request);
    return true;
  }
};
}  // namespace detail

template <class Request>
inline constexpr std::uint16_t kTag = detail::TagOf<Request, DeviceProtocol>::value;

// How many request tags there are: kTag runs from 0 to one below this.
inline constexpr std::size_t kRequestTagCount = []<class... Requests>(Protocol<Requests...>) {
  return sizeof...(Requests);
}(DeviceProtocol{});

// The largest encoded reply value (DeviceInfo with its names, libraries and caches; its lists are cut to fit).
// Below kReplySlotBytes by the status's room.
inline constexpr std::size_t kValueScratch = 3072;

// Calls f(Request&) with the request of that tag (f(Staged<Request>&) for those that are not plain data); false for an
// unknown tag or a payload of the wrong size.
template <class F>
bool visit_request(std::uint16_t tag, std::span<const std::byte> payload, F&& f) {
  return detail::Visit<DeviceProtocol>::apply(tag, payload, f);
}

void encode_value(ByteWriter& out, const DeviceInfo& info);
bool decode_value(ByteReader& in, DeviceInfo& info);

template <class T>
void encode_value(ByteWriter& out, const T& value) {
  out.pod(value);
}
template <class T>
bool decode_value(ByteReader& in, T& value) {
  return in.pod(value).ok();
}

// Writes the status, cutting its message (and saying so) where it would not fit beside `value_bytes`.
void encode_status(ByteWriter& out, const Status& status, std::size_t value_bytes);
Status decode_status(ByteReader& in);

template <class T>
std::size_t encode_reply(std::span<std::byte> out, const Result<T>& result) {
  ByteWriter writer(out);
  if (!result.ok()) {
    encode_status(writer, result.status(), 0);
    return writer.size();
  }
  std::byte scratch[kValueScratch];
  ByteWriter value(scratch);
  encode_value(value, *result);
  encode_status(writer, Status(), value.size());
  writer.raw(scratch, value.size());
  return writer.size();
}

template <class T>
Result<T> decode_reply(std::span<const std::byte> in) {
  ByteReader reader(in);
  Status status = decode_status(reader);
  if (!status.ok()) return status;
  T value{};
  if (!decode_value(reader, value)) return internal_error("a reply from the worker was cut short");
  return value;
}

}  // namespace accel::device::isolated
