// ExportedBuffer as one line of text: a fixed little-endian layout of its fields, in hex.
#include <fmt/format.h>

#include <array>
#include <bit>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>

#include "accel/device/process_sharing.hpp"
#include "device/sharing/export_table.hpp"
#include "device/sharing/shared_object.hpp"

namespace accel {
namespace {

static_assert(std::endian::native == std::endian::little, "the layout is the host's, little-endian");

constexpr std::string_view kPrefix = "accel-buffer-v1:";
constexpr std::size_t kLayoutBytes = 1 + 1 + 8 + 4 + 4 + 8 + 48 + 64;
constexpr std::uint8_t kLastDType = static_cast<std::uint8_t>(DType::c32);

// The fields in the text's order, each through f(field).
template <class Exported, class F>
void each_field(Exported& exported, F&& f) {
  f(exported.kind);
  f(exported.dtype);
  f(exported.count);
  f(exported.process);
  f(exported.slot);
  f(exported.generation);
  f(exported.table);
  f(exported.memory);
}

template <class T>
void put(std::byte*& out, const T& value) {
  std::memcpy(out, &value, sizeof value);
  out += sizeof value;
}
template <class T>
void take(const std::byte*& in, T& value) {
  std::memcpy(&value, in, sizeof value);
  in += sizeof value;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The NUL-padded name in `field`, or nothing when it has no NUL.
template <std::size_t N, class Char>
std::optional<std::string_view> padded_name(const std::array<Char, N>& field) {
  const char* chars = reinterpret_cast<const char*>(field.data());
  const std::size_t length = ::strnlen(chars, N);
  if (length == N) return std::nullopt;
  return std::string_view(chars, length);
}

}  // namespace

Status device::sharing::check_exported(const ExportedBuffer& exported) {
  const auto refuse = [](std::string_view what) {
    return invalid_argument(fmt::format("an exported buffer's text: {}", what));
  };
  if (exported.kind != DeviceKind::cpu && exported.kind != DeviceKind::cuda) return refuse("no such device kind");
  if (static_cast<std::uint8_t>(exported.dtype) > kLastDType) return refuse("no such element type");
  if (exported.count == 0) return refuse("0 elements");
  if (exported.count > std::numeric_limits<std::uint64_t>::max() / size_of(exported.dtype))
    return refuse("more bytes than 64 bits count");
  if (exported.process <= 0) return refuse("no exporting process");
  if (exported.slot >= device::sharing::kExportEntries) return refuse("an export entry past the table's end");
  if (exported.generation == 0) return refuse("generation 0, which no export has");
  const std::optional<std::string_view> table = padded_name(exported.table);
  if (!table || *table != device::sharing::export_table_name(exported.process))
    return refuse("its table is not the exporting process's");
  if (exported.kind == DeviceKind::cpu) {
    const std::optional<std::string_view> memory = padded_name(exported.memory);
    if (!memory || !device::sharing::is_shared_object_name(*memory)) return refuse("its memory has no valid name");
  }
  return Status();
}

Status device::sharing::check_import(const ExportedBuffer& exported, DeviceKind kind, std::string_view device) {
  if (exported.kind != kind) {
    return invalid_argument(fmt::format("ImportBuffer: {} imports {} buffers; this one was exported by a {} device",
                                        device, kind == DeviceKind::cpu ? "CPU" : "CUDA", to_string(exported.kind)));
  }
  return check_exported(exported);
}

std::string to_text(const ExportedBuffer& exported) {
  std::array<std::byte, kLayoutBytes> bytes{};
  std::byte* out = bytes.data();
  each_field(exported, [&](const auto& field) { put(out, field); });
  std::string text(kPrefix);
  text.reserve(kPrefix.size() + 2 * kLayoutBytes);
  for (const std::byte b : bytes) fmt::format_to(std::back_inserter(text), "{:02x}", static_cast<unsigned>(b));
  return text;
}

Result<ExportedBuffer> parse_exported_buffer(std::string_view text) {
  if (!text.starts_with(kPrefix))
    return invalid_argument(fmt::format("an exported buffer's text begins '{}'", kPrefix));
  const std::string_view hex = text.substr(kPrefix.size());
  if (hex.size() != 2 * kLayoutBytes) {
    return invalid_argument(fmt::format("an exported buffer's text holds {} hex digits after '{}', not {}", hex.size(),
                                        kPrefix, 2 * kLayoutBytes));
  }
  std::array<std::byte, kLayoutBytes> bytes{};
  for (std::size_t i = 0; i < kLayoutBytes; ++i) {
    const int high = hex_digit(hex[2 * i]);
    const int low = hex_digit(hex[2 * i + 1]);
    if (high < 0 || low < 0)
      return invalid_argument(
          fmt::format("an exported buffer's text: '{}' is no lower-case hex", hex.substr(2 * i, 2)));
    bytes[i] = static_cast<std::byte>(high * 16 + low);
  }
  ExportedBuffer exported;
  const std::byte* in = bytes.data();
  each_field(exported, [&](auto& field) { take(in, field); });
  ACCEL_RETURN_IF_ERROR(device::sharing::check_exported(exported));
  return exported;
}

}  // namespace accel
