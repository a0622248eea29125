#include "device/isolated/wire.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "device/isolated/channel.hpp"

namespace accel::device::isolated {

// A reply slot holds the status (code, source, raw code, a message cut to fit) beside the value.
static_assert(kValueScratch + 512 <= kReplySlotBytes, "a reply slot holds the largest value and a status");

// Field by field. The size checks make a field added to DeviceInfo or CacheStats without being added here fail to
// compile; a library family adds entries to the lists, not fields.
static_assert(sizeof(DeviceInfo) == 192, "DeviceInfo changed: update its wire encoding (and this size)");

namespace {

constexpr std::size_t kCounters = 17;
static_assert(sizeof(CacheStats) == 2 * sizeof(std::string) + kCounters * sizeof(std::uint64_t),
              "CacheStats changed: update each_counter (and kCounters)");

// CacheStats' counters, in wire order, each through f(std::uint64_t&).
template <class Stats, class F>
void each_counter(Stats& s, F&& f) {
  for (auto* counter : {&s.hits, &s.misses, &s.evictions, &s.entries, &s.capacity, &s.bytes, &s.capacity_bytes,
                        &s.builds, &s.build_failures, &s.build_micros, &s.disk_loads, &s.load_micros, &s.disk_stores,
                        &s.disk_skips, &s.disk_rejects, &s.other_process_builds, &s.not_ready}) {
    f(*counter);
  }
}

constexpr std::size_t kLengthBytes = sizeof(std::uint32_t);

std::size_t encoded_size(const LibraryVersion& library) {
  return 2 * kLengthBytes + library.name.size() + library.version.size();
}
std::size_t encoded_size(const CacheStats& stats) {
  return 2 * kLengthBytes + stats.name.size() + stats.directory.size() + kCounters * sizeof(std::uint64_t);
}
void encode_item(ByteWriter& out, const LibraryVersion& library) {
  out.string(library.name);
  out.string(library.version);
}
void encode_item(ByteWriter& out, const CacheStats& stats) {
  out.string(stats.name);
  out.string(stats.directory);
  each_counter(stats, [&](const std::uint64_t& counter) { out.pod(counter); });
}
void decode_item(ByteReader& in, LibraryVersion& library) { in.string(library.name).string(library.version); }
void decode_item(ByteReader& in, CacheStats& stats) {
  in.string(stats.name).string(stats.directory);
  each_counter(stats, [&](std::uint64_t& counter) { in.pod(counter); });
}

// A count, then the items. The list is bounded by the room left: the items that would not fit (with `reserve`
// bytes kept for what follows) are left out, so a reply is always whole.
template <class T>
void encode_list(ByteWriter& out, const std::vector<T>& items, std::size_t reserve) {
  std::size_t room = out.room() > kLengthBytes + reserve ? out.room() - kLengthBytes - reserve : 0;
  std::uint32_t count = 0;
  for (const T& item : items) {
    if (encoded_size(item) > room) break;
    room -= encoded_size(item);
    ++count;
  }
  out.pod(count);
  for (std::uint32_t i = 0; i < count; ++i) encode_item(out, items[i]);
}
template <class T>
void decode_list(ByteReader& in, std::vector<T>& items) {
  std::uint32_t count = 0;
  in.pod(count);
  // Every item takes at least two lengths, which bounds what a damaged count can make us allocate.
  if (!in.ok() || count > in.remaining() / (2 * kLengthBytes)) {
    in.fail();
    return;
  }
  items.resize(count);
  for (T& item : items) decode_item(in, item);
}

}  // namespace

void encode_value(ByteWriter& out, const DeviceInfo& info) {
  out.pod(info.kind);
  out.pod(info.ordinal);
  out.pod(info.device_id);
  out.pod(info.epoch);
  out.string(info.name);
  out.pod(info.memory_capacity_bytes);
  out.pod(info.compute_capability);
  out.pod(info.completion);
  out.pod(info.device_free_bytes);
  out.pod(info.memory);
  out.pod(info.worker_pid);
  out.pod(info.worker_restarts);
  encode_list(out, info.libraries, kLengthBytes);
  encode_list(out, info.caches, 0);
}

bool decode_value(ByteReader& in, DeviceInfo& info) {
  in.pod(info.kind).pod(info.ordinal).pod(info.device_id).pod(info.epoch).string(info.name);
  in.pod(info.memory_capacity_bytes).pod(info.compute_capability).pod(info.completion).pod(info.device_free_bytes);
  in.pod(info.memory).pod(info.worker_pid).pod(info.worker_restarts);
  decode_list(in, info.libraries);
  decode_list(in, info.caches);
  return in.ok();
}

void encode_status(ByteWriter& out, const Status& status, std::size_t value_bytes) {
  out.pod(status.code());
  out.pod(status.source());
  out.pod(status.raw_code());
  const std::size_t fixed = sizeof(std::uint32_t) + value_bytes;
  std::string_view message = status.message();
  std::string cut;
  if (message.size() + fixed > out.room()) {
    const std::size_t keep = out.room() > fixed + 64 ? out.room() - fixed - 64 : 0;
    cut = fmt::format("{} [... {} bytes of the message cut]", message.substr(0, keep), message.size() - keep);
    message = cut;
  }
  out.string(message);
}

Status decode_status(ByteReader& in) {
  Code code = Code::ok;
  Source source = Source::runtime;
  std::int64_t raw_code = 0;
  std::string message;
  in.pod(code).pod(source).pod(raw_code).string(message);
  if (!in.ok()) return internal_error("a reply from the worker was cut short");
  // The worker may write anything into its reply slot; a code outside the enum would index past every table
  // of codes the client keeps (its supervision policy's, first).
  if (static_cast<int>(code) >= kCodeCount) {
    return internal_error(fmt::format("a reply from the worker is damaged (status code {})", static_cast<int>(code)));
  }
  if (code == Code::ok) return Status();
  return Status(code, std::move(message), source, raw_code);
}

}  // namespace accel::device::isolated
