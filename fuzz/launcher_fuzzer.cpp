// The collective launcher's parsers of outside bytes: torchrun's environment (whatever the process was started
// with) and the unique id's message as read from rank 0's socket. Each gives a checked value or an error naming what
// was wrong; what it accepts is held to what it promises (ranks inside the world, ports in range; a message taken
// only when it is exactly the one rank 0 would send).
//
// Input: one byte choosing the parser. 0: the rest split at NUL bytes into WORLD_SIZE, RANK, LOCAL_RANK,
// MASTER_ADDR, MASTER_PORT and ACCEL_BOOTSTRAP_PORT in that order (a missing piece, or a piece "\x01", leaves the
// variable unset). 1: four bytes of this rank's world size (little-endian), then the bytes the socket gave.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "accel/libs/collective/launcher.hpp"
#include "libs/collective/unique_id_message.hpp"

namespace {

using namespace accel;
using namespace accel::collective;

constexpr std::array<const char*, 6> kVariables{"WORLD_SIZE",  "RANK",        "LOCAL_RANK",
                                                "MASTER_ADDR", "MASTER_PORT", "ACCEL_BOOTSTRAP_PORT"};

void named_error(const Status& status) {
  if (status.ok() || status.code() != Code::invalid_argument || status.message().empty()) std::abort();
}

void environment(std::span<const std::uint8_t> bytes) {
  std::vector<std::string> values;
  std::string current;
  for (std::uint8_t byte : bytes) {
    if (byte == 0) {
      values.push_back(std::move(current));
      current.clear();
    } else {
      current.push_back(static_cast<char>(byte));
    }
  }
  values.push_back(std::move(current));
  const auto value_of = [&](const char* name) -> const char* {
    for (std::size_t i = 0; i < kVariables.size() && i < values.size(); ++i) {
      if (std::strcmp(kVariables[i], name) == 0) return values[i] == "\x01" ? nullptr : values[i].c_str();
    }
    return nullptr;
  };
  const Result<LauncherEnv> env = parse_torchrun_env(value_of);
  if (!env.ok()) return named_error(env.status());
  const bool ranks_inside = env->world_size >= 1 && env->rank >= 0 && env->rank < env->world_size &&
                            env->local_rank >= 0 && env->local_rank < env->world_size;
  const bool bootstrap_default =
      value_of("ACCEL_BOOTSTRAP_PORT") != nullptr || static_cast<int>(env->bootstrap_port) == env->master_port + 1;
  if (!ranks_inside || env->master_addr.empty() || env->master_addr != value_of("MASTER_ADDR") ||
      env->master_port == 0 || env->bootstrap_port == 0 || !bootstrap_default) {
    std::abort();
  }
}

void message(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < 4) return;
  std::uint32_t world_size = 0;
  for (std::size_t i = 0; i < 4; ++i) world_size |= std::uint32_t{bytes[i]} << (8 * i);
  const std::span<const std::uint8_t> received = bytes.subspan(4);
  const Result<UniqueId> id =
      decode_unique_id_message(received, static_cast<std::int32_t>(world_size), "rank 0 at fuzz:1");
  if (!id.ok()) return named_error(id.status());
  const UniqueIdMessage again = encode_unique_id_message(*id, static_cast<std::int32_t>(world_size));
  if (received.size() != again.size() || std::memcmp(received.data(), again.data(), again.size()) != 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> rest(data + 1, size - 1);
  if (data[0] % 2 == 0) {
    environment(rest);
  } else {
    message(rest);
  }
  return 0;
}
