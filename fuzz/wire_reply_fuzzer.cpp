// The client's side of the reply ring: a reply slot as the client reads it (decode_reply of the request's
// Response type), then what the client does with it: its status is judged by the stream actor's supervision
// policy and may be logged; a DeviceInfo is printed by `accel info`. A worker that writes garbage here must cost
// the client an error for that request, never a crash (docs/ARCHITECTURE.md, what each process trusts).
//
// Input: one byte choosing the request whose reply it is (its tag), then the reply, cut to what a slot holds.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include <fmt/format.h>

#include "accel/core/supervision.hpp"
#include "device/isolated/channel.hpp"
#include "device/isolated/wire.hpp"

namespace {

using namespace accel;
using namespace accel::device::isolated;

template <class T>
void use(const T&) {}

void use(const DeviceInfo& info) {
  std::string text = fmt::format("{} {} {}", to_string(info.kind), to_string(info.completion), info.name);
  for (const LibraryVersion& library : info.libraries) text += library.name + library.version;
  for (const CacheStats& cache : info.caches) text += cache.name + cache.directory;
}

template <class Response>
void decode(std::span<const std::byte> reply) {
  Result<Response> result = decode_reply<Response>(reply);
  if (result.ok()) {
    use(*result);
    return;
  }
  (void)SupervisionPolicy().decide(result.status().code());
  (void)result.status().to_string();
}

template <class... Requests>
void decode_as(std::uint8_t tag, std::span<const std::byte> reply, Protocol<Requests...>) {
  (void)((tag == kTag<Requests> ? (decode<response_t<Requests>>(reply), true) : false) || ...);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  const std::size_t reply = std::min(size - 1, kReplySlotBytes - Ring::kSequenceBytes - sizeof(MessageHeader));
  decode_as(data[0], std::span<const std::byte>(bytes + 1, reply), DeviceProtocol{});
  return 0;
}
