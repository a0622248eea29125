#include "device/device_options_codec.hpp"

#include <fmt/format.h>

#include <string>
#include <tuple>
#include <type_traits>

namespace accel::device {
namespace {

template <class Enum>
bool in_range(Enum value, Enum last) {
  return static_cast<std::uint8_t>(value) <= static_cast<std::uint8_t>(last);
}

// A family's options cross field by field, in the order its Options::fields lists them: strings as strings, the
// rest (integers, bools) as their bytes; ByteReader refuses a bool that is neither 0 nor 1.
template <class Field>
void write_field(ByteWriter& out, const Field& field) {
  if constexpr (std::is_same_v<Field, std::string>) {
    out.string(field);
  } else {
    out.pod(field);
  }
}

template <class Field>
void read_field(ByteReader& in, Field& field) {
  if constexpr (std::is_same_v<Field, std::string>) {
    in.string(field);
  } else {
    in.pod(field);
  }
}

template <class FamilyOptions>
void write_family(ByteWriter& out, const FamilyOptions& options) {
  std::apply([&](const auto&... field) { (write_field(out, field), ...); }, FamilyOptions::fields(options));
}

template <class FamilyOptions>
void read_family(ByteReader& in, FamilyOptions& options) {
  std::apply([&](auto&... field) { (read_field(in, field), ...); }, FamilyOptions::fields(options));
}

}  // namespace

void encode(ByteWriter& out, const WorkerSetup& setup) {
  const DeviceOptions& o = setup.options;
  out.pod(setup.device_id).string(setup.name);
  out.pod(o.kind).pod(static_cast<std::int32_t>(o.ordinal)).pod(o.memory_limit_bytes).pod(o.completion);
  out.pod(o.pinned_staging_cache_bytes);
  out.pod(static_cast<std::int64_t>(o.worker.spin.count()));
  out.pod(static_cast<std::int64_t>(o.worker.heartbeat_timeout.count()));
  write_family(out, o.blas);
  write_family(out, o.dnn);
  write_family(out, o.jit);
  write_family(out, o.graph);
}

Result<WorkerSetup> decode_worker_setup(ByteReader& in) {
  WorkerSetup setup;
  DeviceOptions& o = setup.options;
  std::int32_t ordinal = 0;
  std::int64_t spin = 0;
  std::int64_t heartbeat = 0;
  in.pod(setup.device_id).string(setup.name);
  in.pod(o.kind).pod(ordinal).pod(o.memory_limit_bytes).pod(o.completion).pod(o.pinned_staging_cache_bytes);
  in.pod(spin).pod(heartbeat);
  read_family(in, o.blas);
  read_family(in, o.dnn);
  read_family(in, o.jit);
  read_family(in, o.graph);
  if (!in.finished()) return invalid_argument("the worker's device options are cut short or too long");
  if (!in_range(o.kind, DeviceKind::cuda) || !in_range(o.completion, CompletionStrategy::blocking) || ordinal < 0 ||
      spin < 0 || heartbeat <= 0) {
    return invalid_argument(fmt::format("the worker's device options for '{}' hold a value out of range", setup.name));
  }
  o.ordinal = ordinal;
  o.isolation = Isolation::in_process;
  o.worker.spin = std::chrono::microseconds(spin);
  o.worker.heartbeat_timeout = std::chrono::milliseconds(heartbeat);
  return setup;
}

}  // namespace accel::device
