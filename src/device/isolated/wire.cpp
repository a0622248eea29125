#include "device/isolated/wire.hpp"

#include <fmt/format.h>

#include <algorithm>

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

// Field by field. The size check makes a field added to DeviceInfo without being added here fail to compile.
static_assert(sizeof(DeviceInfo) == 456, "DeviceInfo changed: update its wire encoding (and this size)");

void encode_value(WireWriter& out, const DeviceInfo& info) {
  out.pod(info.kind);
  out.pod(info.ordinal);
  out.pod(info.device_id);
  out.pod(info.epoch);
  out.string(info.name);
  out.string(info.blas_library);
  out.pod(info.memory_capacity_bytes);
  out.pod(info.compute_capability);
  out.pod(info.completion);
  out.pod(info.device_free_bytes);
  out.pod(info.memory);
  out.pod(info.gemm_plans);
  out.string(info.dnn_library);
  out.pod(info.dnn_plans);
  out.pod(info.jit);
  out.pod(info.worker_pid);
  out.pod(info.worker_restarts);
}

bool decode_value(WireReader& in, DeviceInfo& info) {
  return in.pod(info.kind) && in.pod(info.ordinal) && in.pod(info.device_id) && in.pod(info.epoch) &&
         in.string(info.name) && in.string(info.blas_library) && in.pod(info.memory_capacity_bytes) &&
         in.pod(info.compute_capability) && in.pod(info.completion) && in.pod(info.device_free_bytes) &&
         in.pod(info.memory) && in.pod(info.gemm_plans) && in.string(info.dnn_library) && in.pod(info.dnn_plans) &&
         in.pod(info.jit) && in.pod(info.worker_pid) && in.pod(info.worker_restarts);
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
