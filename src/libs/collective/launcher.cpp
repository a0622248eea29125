#include "accel/libs/collective/launcher.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <limits>

namespace accel::collective {
namespace {

Result<std::int64_t> integer(const GetEnv& get_env, const char* name, std::int64_t low, std::int64_t high) {
  const char* text = get_env(name);
  if (text == nullptr) return invalid_argument(fmt::format("the launcher environment has no {}", name));
  const std::string_view value(text);
  std::int64_t parsed = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (value.empty() || error != std::errc() || end != value.data() + value.size()) {
    return invalid_argument(fmt::format("{}='{}' is not an integer", name, value));
  }
  if (parsed < low || parsed > high) {
    return invalid_argument(fmt::format("{}={} is outside {}..{}", name, parsed, low, high));
  }
  return parsed;
}

}  // namespace

Result<LauncherEnv> parse_torchrun_env(const GetEnv& get_env) {
  constexpr std::int64_t kMaxRanks = std::numeric_limits<std::int32_t>::max();
  LauncherEnv env;
  ACCEL_ASSIGN_OR_RETURN(const std::int64_t world_size, integer(get_env, "WORLD_SIZE", 1, kMaxRanks));
  ACCEL_ASSIGN_OR_RETURN(const std::int64_t rank, integer(get_env, "RANK", 0, world_size - 1));
  ACCEL_ASSIGN_OR_RETURN(const std::int64_t local_rank, integer(get_env, "LOCAL_RANK", 0, world_size - 1));
  const char* addr = get_env("MASTER_ADDR");
  if (addr == nullptr || *addr == '\0') return invalid_argument("the launcher environment has no MASTER_ADDR");
  ACCEL_ASSIGN_OR_RETURN(const std::int64_t port, integer(get_env, "MASTER_PORT", 1, 65535));
  std::int64_t bootstrap = port == 65535 ? 0 : port + 1;
  if (get_env("ACCEL_BOOTSTRAP_PORT") != nullptr) {
    ACCEL_ASSIGN_OR_RETURN(bootstrap, integer(get_env, "ACCEL_BOOTSTRAP_PORT", 1, 65535));
  } else if (bootstrap == 0) {
    return invalid_argument("MASTER_PORT=65535 leaves no port above it: set ACCEL_BOOTSTRAP_PORT");
  }
  env.world_size = static_cast<std::int32_t>(world_size);
  env.rank = static_cast<std::int32_t>(rank);
  env.local_rank = static_cast<std::int32_t>(local_rank);
  env.master_addr = addr;
  env.master_port = static_cast<std::uint16_t>(port);
  env.bootstrap_port = static_cast<std::uint16_t>(bootstrap);
  return env;
}

Result<LauncherEnv> parse_torchrun_env() {
  return parse_torchrun_env([](const char* name) { return std::getenv(name); });
}

Result<Communicator> init_from_torchrun(const Device& device, const LauncherEnv& env, CommOptions options) {
  const std::chrono::milliseconds timeout(options.timeout_ms);
  if (env.rank != 0) {
    ACCEL_ASSIGN_OR_RETURN(const UniqueId id,
                           fetch_unique_id(env.master_addr, env.bootstrap_port, env.world_size, timeout));
    return init_rank(device, id, env.world_size, env.rank, options).wait();
  }
  ACCEL_ASSIGN_OR_RETURN(const UniqueId id, new_unique_id(device.kind()));
  // Rank 0 joins (its device waits for the others on its own thread) while this thread hands out the id.
  Future<Communicator> joined = init_rank(device, id, env.world_size, 0, options);
  const Status served = serve_unique_id(id, env.world_size, env.bootstrap_port, env.world_size - 1, timeout);
  Result<Communicator> comm = joined.wait();
  if (!served.ok()) return served.with_context("collective::init_from_torchrun");
  return comm;
}

}  // namespace accel::collective
