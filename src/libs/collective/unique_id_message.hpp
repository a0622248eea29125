// The one message of the unique id's exchange over TCP (launcher.hpp says why TCP): our magic, the world size
// (little-endian) and the NCCL unique id. Rank 0 sends it; every other rank reads it from a socket, so its bytes
// are untrusted: a reply is taken only if it is exactly one message, with the magic and this rank's world size.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "accel/libs/collective/communicator.hpp"

namespace accel::collective {

inline constexpr std::array<std::uint8_t, 8> kUniqueIdMagic{'a', 'c', 'c', 'e', 'l', 'I', 'D', '1'};
inline constexpr std::size_t kUniqueIdMessageBytes = kUniqueIdMagic.size() + 4 + UniqueId::kBytes;
using UniqueIdMessage = std::array<std::uint8_t, kUniqueIdMessageBytes>;

[[nodiscard]] UniqueIdMessage encode_unique_id_message(const UniqueId& id, std::int32_t world_size);

// `received` is everything read from `where` (one byte more than a message stands for "more"); the error names
// what was wrong with it.
[[nodiscard]] Result<UniqueId> decode_unique_id_message(std::span<const std::uint8_t> received, std::int32_t world_size,
                                                        std::string_view where);

}  // namespace accel::collective
