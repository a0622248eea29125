// accel::embed::SafetensorsFile — a .safetensors file mapped read-only, its header parsed and checked.
//
// Layout: an 8-byte little-endian header length N, N bytes of JSON, then the data region. The JSON maps each
// tensor's name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the data region);
// "__metadata__" may hold strings. The file comes from outside, so nothing in it is trusted: the header length
// is checked against the file and a cap, every tensor's bytes must lie inside the data region, match its shape
// times its element size (overflow checked) and overlap no other tensor, and a name may appear once. Any
// failure is an invalid_argument naming the file and, where there is one, the tensor.
//
// Tensor data in a safetensors file has no alignment guarantee (the header length is arbitrary), so views hand
// out bytes and the conversions copy them out element by element, never casting a pointer into the mapping.
// The file must not be truncated while it is open: reading a mapped page past its new end raises SIGBUS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accel/core/dtype.hpp"
#include "accel/core/result.hpp"

namespace accel::embed {

// The safetensors element types that are read. Others (BOOL, F8_*, I16, U16, U32, U64, ...) are refused by name
// when the file is opened. I64 has no accel::DType: BERT checkpoints keep their position_ids in it.
enum class StoredDType : std::uint8_t { f64, f32, f16, bf16, i64, i32, i8, u8 };

[[nodiscard]] std::size_t size_of(StoredDType dtype) noexcept;
// F64, F32, F16 or BF16.
[[nodiscard]] bool is_float(StoredDType dtype) noexcept;
// The name safetensors gives it: "F32", "BF16", ...
[[nodiscard]] std::string_view to_string(StoredDType dtype) noexcept;
// The accel::DType of the same bits, if there is one.
[[nodiscard]] std::optional<DType> to_dtype(StoredDType dtype) noexcept;

// One tensor of an open file; valid while the SafetensorsFile it came from lives.
struct TensorView {
  std::string_view name;
  StoredDType dtype = StoredDType::f32;
  std::span<const std::uint64_t> shape;
  std::span<const std::byte> bytes;  // any alignment

  [[nodiscard]] std::uint64_t elements() const noexcept { return bytes.size() / size_of(dtype); }
};

class SafetensorsFile {
 public:
  // Files are mapped, not read, so a header larger than this is not a memory problem; it is a sign of a damaged
  // or hostile file (real headers are kilobytes), and parsing it would cost time for nothing.
  static constexpr std::uint64_t kMaxHeaderBytes = 100ull << 20;

  static Result<SafetensorsFile> open(const std::filesystem::path& path);

  SafetensorsFile(SafetensorsFile&&) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept;
  ~SafetensorsFile();

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  // Tensor names, sorted.
  [[nodiscard]] std::vector<std::string_view> names() const;
  [[nodiscard]] bool contains(std::string_view name) const { return tensors_.contains(name); }
  // "__metadata__", if the header has it.
  [[nodiscard]] const std::map<std::string, std::string, std::less<>>& metadata() const noexcept { return metadata_; }

  // invalid_argument naming the file and the tensor when there is no such tensor.
  [[nodiscard]] Result<TensorView> tensor(std::string_view name) const;

  // The tensor's elements converted from a float dtype (F64, F32, F16, BF16); integer tensors are refused.
  // F64 rounds to nearest even, the others are exact.
  [[nodiscard]] Result<std::vector<float>> to_f32(std::string_view name) const;
  // The tensor's elements as the bits of `target` (DType::f16 or DType::bf16), rounded to nearest even from a
  // float dtype; a tensor already in `target` is copied bit for bit.
  [[nodiscard]] Result<std::vector<std::uint16_t>> to_16bit(std::string_view name, DType target) const;
  // The same conversions into a destination of exactly the tensor's element count (loading a model writes
  // each weight straight into the buffer that goes to the device).
  [[nodiscard]] Status copy_f32(std::string_view name, std::span<float> out) const;
  [[nodiscard]] Status copy_16bit(std::string_view name, DType target, std::span<std::uint16_t> out) const;
  // The same conversions of the out.size() elements from element `first` on (some rows of a tensor: a fused
  // projection's part); invalid_argument when they are not all in the tensor.
  [[nodiscard]] Status copy_f32(std::string_view name, std::uint64_t first, std::span<float> out) const;
  [[nodiscard]] Status copy_16bit(std::string_view name, DType target, std::uint64_t first,
                                  std::span<std::uint16_t> out) const;

 private:
  struct Mapping;
  struct Entry {
    StoredDType dtype;
    std::vector<std::uint64_t> shape;
    std::uint64_t begin;  // within the data region
    std::uint64_t end;
  };

  SafetensorsFile(std::filesystem::path path, std::unique_ptr<Mapping> mapping);
  Status parse_header();
  [[nodiscard]] Status error(std::string_view tensor, std::string_view what) const;
  // The float tensor `name`, if it has exactly `out_elements` elements.
  [[nodiscard]] Result<TensorView> float_tensor(std::string_view name, std::size_t out_elements) const;
  // Elements [first, first + count) of the float tensor `name`, as a view of their own.
  [[nodiscard]] Result<TensorView> float_range(std::string_view name, std::uint64_t first, std::size_t count) const;

  std::filesystem::path path_;
  std::unique_ptr<Mapping> mapping_;
  std::span<const std::byte> data_;  // the data region, inside the mapping
  std::map<std::string, Entry, std::less<>> tensors_;
  std::map<std::string, std::string, std::less<>> metadata_;
};

}  // namespace accel::embed
