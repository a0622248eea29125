#include "device/isolated/wire.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "device/isolated/channel.hpp"

namespace accel::device::isolated {

void WireWriter::bytes(const void* data, std::size_t count) noexcept {
  if (count > room()) {
    overflowed_ = true;
    return;
  }
  if (count != 0) std::memcpy(out_.data() + used_, data, count);
  used_ += count;
}

void WireWriter::string(std::string_view text) noexcept {
  const auto length = static_cast<std::uint32_t>(text.size());
  pod(length);
  bytes(text.data(), text.size());
}

bool WireReader::bytes(void* data, std::size_t count) noexcept {
  if (count > in_.size() - used_) return false;
  if (count != 0) std::memcpy(data, in_.data() + used_, count);
  used_ += count;
  return true;
}

bool WireReader::view(std::span<const std::byte>& data, std::size_t count) noexcept {
  if (count > in_.size() - used_) return false;
  data = in_.subspan(used_, count);
  used_ += count;
  return true;
}

bool WireReader::string(std::string& text) {
  std::uint32_t length = 0;
  if (!pod(length) || length > in_.size() - used_) return false;
  text.assign(reinterpret_cast<const char*>(in_.data() + used_), length);
  used_ += length;
  return true;
}

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
void encode_item(WireWriter& out, const LibraryVersion& library) {
  out.string(library.name);
  out.string(library.version);
}
void encode_item(WireWriter& out, const CacheStats& stats) {
  out.string(stats.name);
  out.string(stats.directory);
  each_counter(stats, [&](const std::uint64_t& counter) { out.pod(counter); });
}
bool decode_item(WireReader& in, LibraryVersion& library) {
  return in.string(library.name) && in.string(library.version);
}
bool decode_item(WireReader& in, CacheStats& stats) {
  bool ok = in.string(stats.name) && in.string(stats.directory);
  each_counter(stats, [&](std::uint64_t& counter) { ok = ok && in.pod(counter); });
  return ok;
}

// A count, then the items. The list is bounded by the room left: the items that would not fit (with `reserve`
// bytes kept for what follows) are left out, so a reply is always whole.
template <class T>
void encode_list(WireWriter& out, const std::vector<T>& items, std::size_t reserve) {
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
bool decode_list(WireReader& in, std::vector<T>& items) {
  std::uint32_t count = 0;
  // Every item takes at least two lengths, which bounds what a damaged count can make us allocate.
  if (!in.pod(count) || count > in.remaining() / (2 * kLengthBytes)) return false;
  items.resize(count);
  for (T& item : items) {
    if (!decode_item(in, item)) return false;
  }
  return true;
}

}  // namespace

void encode_value(WireWriter& out, const DeviceInfo& info) {
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

bool decode_value(WireReader& in, DeviceInfo& info) {
  return in.pod(info.kind) && in.pod(info.ordinal) && in.pod(info.device_id) && in.pod(info.epoch) &&
         in.string(info.name) && in.pod(info.memory_capacity_bytes) && in.pod(info.compute_capability) &&
         in.pod(info.completion) && in.pod(info.device_free_bytes) && in.pod(info.memory) && in.pod(info.worker_pid) &&
         in.pod(info.worker_restarts) && decode_list(in, info.libraries) && decode_list(in, info.caches);
}

void encode_status(WireWriter& out, const Status& status, std::size_t value_bytes) {
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

Status decode_status(WireReader& in) {
  Code code = Code::ok;
  Source source = Source::runtime;
  std::int64_t raw_code = 0;
  std::string message;
  if (!in.pod(code) || !in.pod(source) || !in.pod(raw_code) || !in.string(message)) {
    return internal_error("a reply from the worker was cut short");
  }
  if (code == Code::ok) return Status();
  return Status(code, std::move(message), source, raw_code);
}

}  // namespace accel::device::isolated
