#include "libs/collective/unique_id_message.hpp"

#include <fmt/format.h>

#include <cstring>

namespace accel::collective {

UniqueIdMessage encode_unique_id_message(const UniqueId& id, std::int32_t world_size) {
  UniqueIdMessage message{};
  std::memcpy(message.data(), kUniqueIdMagic.data(), kUniqueIdMagic.size());
  const auto size = static_cast<std::uint32_t>(world_size);
  for (std::size_t i = 0; i < 4; ++i) message[kUniqueIdMagic.size() + i] = static_cast<std::uint8_t>(size >> (8 * i));
  std::memcpy(message.data() + kUniqueIdMagic.size() + 4, id.bytes.data(), UniqueId::kBytes);
  return message;
}

Result<UniqueId> decode_unique_id_message(std::span<const std::uint8_t> received, std::int32_t world_size,
                                          std::string_view where) {
  if (received.size() != kUniqueIdMessageBytes) {
    const bool longer = received.size() > kUniqueIdMessageBytes;
    return invalid_argument(fmt::format("{} sent {}{} bytes, not a unique id message of {}", where,
                                        longer ? "more than " : "", longer ? kUniqueIdMessageBytes : received.size(),
                                        kUniqueIdMessageBytes));
  }
  if (std::memcmp(received.data(), kUniqueIdMagic.data(), kUniqueIdMagic.size()) != 0) {
    return invalid_argument(fmt::format("{} is not an accel rank 0 (its message lacks the magic)", where));
  }
  std::uint32_t size = 0;
  for (std::size_t i = 0; i < 4; ++i) size |= std::uint32_t{received[kUniqueIdMagic.size() + i]} << (8 * i);
  if (size != static_cast<std::uint32_t>(world_size)) {
    return invalid_argument(
        fmt::format("rank 0 at {} serves a world of {} ranks, this rank's WORLD_SIZE is {}", where, size, world_size));
  }
  UniqueId id;
  std::memcpy(id.bytes.data(), received.data() + kUniqueIdMagic.size() + 4, UniqueId::kBytes);
  return id;
}

}  // namespace accel::collective
