/// @file
/// ByteWriter / ByteReader — the one byte codec of accel: plan keys, graph encodings, requests staged for an
/// isolated worker, its replies and options, and the entries of the disk caches are all written and read with it.
///
/// Values are little-endian as the host stores them (every reader is the same build on the same machine kind;
/// a disk entry carries a format version in its key). Lists and strings are length-prefixed. A reader trusts
/// nothing: every read is bounded by what is left, counts are checked against the bytes that remain before
/// anything is sized, and a failed read leaves the reader failed, so a chain of reads is checked once at the end:
///
/// @code
///   ByteReader in(bytes);
///   in.pod(shape).string(name).pods(groups);
///   if (!in.finished()) return damaged("a staged CutlassGroupedGemm");
/// @endcode
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace accel {

/// Writes values as bytes, growing or into a fixed region (see the file's description).
class ByteWriter {
 public:
  /// Grows as it is written.
  ByteWriter() = default;
  /// Writes into `out` and no further: what would not fit is dropped and overflowed() says so.
  explicit ByteWriter(std::span<std::byte> out) noexcept : fixed_(out), bounded_(true) {}

  /// `count` bytes of `data`, as they are.
  ByteWriter& raw(const void* data, std::size_t count) {
    if (count == 0) return *this;
    if (!bounded_) {
      const auto* first = static_cast<const std::byte*>(data);
      grown_.insert(grown_.end(), first, first + count);
    } else if (count <= fixed_.size() - used_) {
      std::memcpy(fixed_.data() + used_, data, count);
      used_ += count;
    } else {
      overflowed_ = true;
    }
    return *this;
  }
  /// The bytes of a trivially copyable value.
  template <class T>
  ByteWriter& pod(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "pod() writes an object's bytes");
    return raw(&value, sizeof value);
  }
  /// A length (u64), then the values' bytes.
  template <class T>
  ByteWriter& pods(std::span<const T> values) {
    pod(static_cast<std::uint64_t>(values.size()));
    return raw(values.data(), values.size_bytes());
  }
  /// A length (u64), then the values' bytes.
  template <class T>
  ByteWriter& pods(const std::vector<T>& values) {
    return pods(std::span<const T>(values));
  }
  /// Several fields in turn, each as its own bytes (never a struct with its padding): what plan keys and graph
  /// encodings are made of.
  template <class... T>
  ByteWriter& fields(const T&... values) {
    static_assert(
        ((std::has_unique_object_representations_v<T> || std::is_floating_point_v<T> || std::is_same_v<T, bool>)&&...),
        "fields() writes values without padding");
    (pod(values), ...);
    return *this;
  }
  /// A length (u64), then the bytes.
  ByteWriter& bytes(std::span<const std::byte> data) {
    pod(static_cast<std::uint64_t>(data.size()));
    return raw(data.data(), data.size());
  }
  /// A length (u32), then the text's bytes.
  ByteWriter& string(std::string_view text) {
    pod(static_cast<std::uint32_t>(text.size()));
    return raw(text.data(), text.size());
  }
  /// A count (u64), then each text as string() writes it.
  ByteWriter& strings(const std::vector<std::string>& texts) {
    pod(static_cast<std::uint64_t>(texts.size()));
    for (const std::string& text : texts) string(text);
    return *this;
  }

  /// Bytes written so far.
  [[nodiscard]] std::size_t size() const noexcept { return bounded_ ? used_ : grown_.size(); }
  /// Bytes a fixed writer can still take (SIZE_MAX for a growing one).
  [[nodiscard]] std::size_t room() const noexcept { return bounded_ ? fixed_.size() - used_ : SIZE_MAX; }
  /// Whether a fixed writer dropped bytes that did not fit.
  [[nodiscard]] bool overflowed() const noexcept { return overflowed_; }
  /// What was written (a growing writer only).
  [[nodiscard]] std::vector<std::byte> take() { return std::move(grown_); }
  /// The bytes written so far, where they lie.
  [[nodiscard]] std::span<const std::byte> written() const noexcept {
    return bounded_ ? std::span<const std::byte>(fixed_.data(), used_) : std::span<const std::byte>(grown_);
  }

 private:
  std::vector<std::byte> grown_;
  std::span<std::byte> fixed_;
  std::size_t used_ = 0;
  bool bounded_ = false;
  bool overflowed_ = false;
};

/// Reads what a ByteWriter wrote, from untrusted bytes: every read is checked, and a failed one fails the reader.
class ByteReader {
 public:
  /// More items in one list than this is a damaged encoding, whatever the bytes left say.
  static constexpr std::uint64_t kMaxItems = 1u << 24;

  /// A reader of `in`, which must outlive it.
  explicit ByteReader(std::span<const std::byte> in) noexcept : in_(in) {}

  /// `count` bytes into `data`.
  ByteReader& raw(void* data, std::size_t count) noexcept {
    if (!ok_ || count > remaining()) return fail();
    if (count != 0) std::memcpy(data, in_.data() + used_, count);
    used_ += count;
    return *this;
  }
  /// A trivially copyable value (a bool only from 0 or 1).
  template <class T>
  ByteReader& pod(T& value) noexcept {
    static_assert(std::is_trivially_copyable_v<T>, "pod() reads an object's bytes");
    if constexpr (std::is_same_v<T, bool>) {
      // Only 0 and 1 are bools: loading any other byte as one would be undefined behaviour.
      std::uint8_t byte = 0;
      raw(&byte, 1);
      if (byte > 1) fail();
      value = byte == 1;
      return *this;
    } else {
      return raw(&value, sizeof value);
    }
  }
  /// Several values in turn, as ByteWriter::fields wrote them.
  template <class... T>
  ByteReader& fields(T&... values) noexcept {
    (pod(values), ...);
    return *this;
  }
  /// A count of items of at least `item_bytes` each, checked against what is left before anything is sized.
  ByteReader& count(std::uint64_t& n, std::size_t item_bytes) noexcept {
    pod(n);
    if (ok_ && (n > kMaxItems || (item_bytes != 0 && n > remaining() / item_bytes))) fail();
    if (!ok_) n = 0;
    return *this;
  }
  /// A length-prefixed vector of values, as ByteWriter::pods wrote it.
  template <class T>
  ByteReader& pods(std::vector<T>& values) {
    std::uint64_t n = 0;
    count(n, sizeof(T));
    values.resize(n);
    return raw(values.data(), n * sizeof(T));
  }
  /// The next length-prefixed bytes where they lie, without copying.
  ByteReader& bytes(std::span<const std::byte>& data) noexcept {
    std::uint64_t n = 0;
    count(n, 1);
    return view(data, n);
  }
  /// The next `n` bytes where they lie, without copying.
  ByteReader& view(std::span<const std::byte>& data, std::size_t n) noexcept {
    if (!ok_ || n > remaining()) return fail();
    data = in_.subspan(used_, n);
    used_ += n;
    return *this;
  }
  /// A length-prefixed text, as ByteWriter::string wrote it.
  ByteReader& string(std::string& text) {
    std::uint32_t n = 0;
    pod(n);
    if (!ok_ || n > remaining()) return fail();
    text.assign(reinterpret_cast<const char*>(in_.data() + used_), n);
    used_ += n;
    return *this;
  }
  /// A count, then each text, as ByteWriter::strings wrote them.
  ByteReader& strings(std::vector<std::string>& texts) {
    std::uint64_t n = 0;
    count(n, sizeof(std::uint32_t));
    texts.resize(n);
    for (std::string& text : texts) string(text);
    return *this;
  }

  /// Marks the input damaged: for a caller's own check of what it read (a count out of range, say).
  ByteReader& fail() noexcept {
    ok_ = false;
    return *this;
  }

  /// Whether every read so far succeeded.
  [[nodiscard]] bool ok() const noexcept { return ok_; }
  /// Every read succeeded and every byte was read.
  [[nodiscard]] bool finished() const noexcept { return ok_ && remaining() == 0; }
  /// Bytes not read yet.
  [[nodiscard]] std::size_t remaining() const noexcept { return in_.size() - used_; }

 private:
  std::span<const std::byte> in_;
  std::size_t used_ = 0;
  bool ok_ = true;
};

}  // namespace accel
