#include "jit/compiled_program.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>

#include "accel/core/byte_codec.hpp"

namespace accel::jit {
namespace {

constexpr std::array<char, 8> kEncodingMagic = {'A', 'C', 'C', 'E', 'L', 'N', 'V', 'R'};
constexpr std::uint32_t kEncodingVersion = 1;

// Every variable-length field is prefixed by its u64 length (ByteWriter::bytes), so that no two different field
// sequences produce the same bytes.
void text(ByteWriter& out, std::string_view value) { out.bytes(std::as_bytes(std::span(value.data(), value.size()))); }

// A compiled program's bytes, read with every length checked against what is left, so damaged input (a length
// pointing past the end, a huge count) fails instead of reading or allocating beyond the input.
class ProgramReader {
 public:
  explicit ProgramReader(std::span<const std::byte> in) : in_(in), reader_(in) {}
  template <class T>
  Result<T> integer(std::string_view what) {
    T value{};
    if (!reader_.pod(value).ok()) return damaged(fmt::format("{} cut short", what));
    return value;
  }
  Result<std::span<const std::byte>> field(std::string_view what) {
    ACCEL_ASSIGN_OR_RETURN(const std::uint64_t length, integer<std::uint64_t>(what));
    std::span<const std::byte> data;
    if (length > left() || !reader_.view(data, length).ok())
      return damaged(fmt::format("{} of {} bytes", what, length));
    return data;
  }
  Result<std::string> text(std::string_view what) {
    ACCEL_ASSIGN_OR_RETURN(std::span<const std::byte> data, field(what));
    return std::string(reinterpret_cast<const char*>(data.data()), data.size());
  }
  [[nodiscard]] std::size_t left() const noexcept { return reader_.remaining(); }
  [[nodiscard]] Status damaged(std::string_view what) const {
    return internal_error(fmt::format("damaged compiled program ({} bytes): {} at offset {}", in_.size(), what,
                                      in_.size() - reader_.remaining()));
  }

 private:
  std::span<const std::byte> in_;
  ByteReader reader_;
};

}  // namespace

std::string_view CompiledProgram::symbol_of(std::string_view name) const noexcept {
  for (const auto& [expression, lowered] : lowered_names) {
    if (expression == name) return lowered;
  }
  return name;
}

// Layout: magic "ACCELNVR", u32 version, u8 kind, code, u64 count, (expression, lowered name) pairs, log;
// integers little-endian, code and strings prefixed by a u64 length.
std::vector<std::byte> encode(const CompiledProgram& compiled) {
  ByteWriter out;
  out.pod(kEncodingMagic).pod(kEncodingVersion).pod(static_cast<std::uint8_t>(compiled.kind)).bytes(compiled.code);
  out.pod(static_cast<std::uint64_t>(compiled.lowered_names.size()));
  for (const auto& [expression, lowered] : compiled.lowered_names) {
    text(out, expression);
    text(out, lowered);
  }
  text(out, compiled.log);
  return out.take();
}

Result<CompiledProgram> decode_compiled_program(std::span<const std::byte> bytes) {
  ProgramReader in(bytes);
  using Magic = std::array<char, 8>;
  ACCEL_ASSIGN_OR_RETURN(const Magic magic, in.integer<Magic>("magic"));
  if (magic != kEncodingMagic) {
    return internal_error(fmt::format("damaged compiled program ({} bytes): not one (wrong magic)", bytes.size()));
  }
  ACCEL_ASSIGN_OR_RETURN(const std::uint32_t version, in.integer<std::uint32_t>("version"));
  if (version != kEncodingVersion) {
    return internal_error(
        fmt::format("compiled program of encoding version {}, expected {}", version, kEncodingVersion));
  }
  ACCEL_ASSIGN_OR_RETURN(const std::uint8_t kind, in.integer<std::uint8_t>("code kind"));
  if (kind > static_cast<std::uint8_t>(CodeKind::ptx)) return in.damaged(fmt::format("code kind {}", kind));
  CompiledProgram out{.kind = static_cast<CodeKind>(kind)};
  ACCEL_ASSIGN_OR_RETURN(std::span<const std::byte> code, in.field("code"));
  out.code.assign(code.begin(), code.end());
  ACCEL_ASSIGN_OR_RETURN(const std::uint64_t count, in.integer<std::uint64_t>("lowered name count"));
  // Each pair takes at least its two lengths, so a count the input cannot hold is refused before the loop.
  if (count > in.left() / 16) return in.damaged(fmt::format("lowered name count {}", count));
  for (std::uint64_t i = 0; i < count; ++i) {
    ACCEL_ASSIGN_OR_RETURN(std::string expression, in.text("name expression"));
    ACCEL_ASSIGN_OR_RETURN(std::string lowered, in.text("lowered name"));
    out.lowered_names.emplace_back(std::move(expression), std::move(lowered));
  }
  ACCEL_ASSIGN_OR_RETURN(out.log, in.text("log"));
  if (in.left() != 0) return in.damaged(fmt::format("{} trailing bytes", in.left()));
  return out;
}

}  // namespace accel::jit
