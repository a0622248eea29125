#include "embed/safetensors_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace accel::embed {

// The format is little-endian and elements are copied out with memcpy, so a big-endian host would read garbage.
static_assert(std::endian::native == std::endian::little, "safetensors are read on little-endian hosts only");

namespace {

using nlohmann::json;

constexpr std::string_view kSupported = "F64, F32, F16, BF16, I64, I32, I8, U8";

std::optional<StoredDType> parse_dtype(std::string_view name) {
  static constexpr std::pair<std::string_view, StoredDType> kNames[] = {
      {"F64", StoredDType::f64}, {"F32", StoredDType::f32}, {"F16", StoredDType::f16}, {"BF16", StoredDType::bf16},
      {"I64", StoredDType::i64}, {"I32", StoredDType::i32}, {"I8", StoredDType::i8},   {"U8", StoredDType::u8}};
  for (const auto& [text, dtype] : kNames)
    if (text == name) return dtype;
  return std::nullopt;
}

template <class T>
T load(const std::byte* at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}

// nlohmann::json keeps the last of repeated keys without a word; a header with a tensor named twice would then
// mean whatever the parser picked. This records the first repeated key at any depth, so it can be refused.
class DuplicateKeys {
 public:
  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start: open_.emplace_back(); break;
      case json::parse_event_t::object_end:
        if (!open_.empty()) open_.pop_back();
        break;
      case json::parse_event_t::key:
        if (!open_.empty() && !open_.back().insert(parsed.get<std::string>()).second && !first_) {
          first_ = parsed.get<std::string>();
          first_depth_ = depth;
        }
        break;
      default: break;
    }
    return true;
  }
  [[nodiscard]] const std::optional<std::string>& first() const noexcept { return first_; }
  // 1 for the header's own keys, the tensor names.
  [[nodiscard]] int first_depth() const noexcept { return first_depth_; }

 private:
  std::vector<std::set<std::string>> open_;
  std::optional<std::string> first_;
  int first_depth_ = 0;
};

}  // namespace

std::size_t size_of(StoredDType dtype) noexcept {
  switch (dtype) {
    case StoredDType::f64:
    case StoredDType::i64: return 8;
    case StoredDType::f32:
    case StoredDType::i32: return 4;
    case StoredDType::f16:
    case StoredDType::bf16: return 2;
    case StoredDType::i8:
    case StoredDType::u8: return 1;
  }
  return 1;
}

bool is_float(StoredDType dtype) noexcept {
  return dtype == StoredDType::f64 || dtype == StoredDType::f32 || dtype == StoredDType::f16 ||
         dtype == StoredDType::bf16;
}

std::string_view to_string(StoredDType dtype) noexcept {
  switch (dtype) {
    case StoredDType::f64: return "F64";
    case StoredDType::f32: return "F32";
    case StoredDType::f16: return "F16";
    case StoredDType::bf16: return "BF16";
    case StoredDType::i64: return "I64";
    case StoredDType::i32: return "I32";
    case StoredDType::i8: return "I8";
    case StoredDType::u8: return "U8";
  }
  return "unknown";
}

std::optional<DType> to_dtype(StoredDType dtype) noexcept {
  switch (dtype) {
    case StoredDType::f64: return DType::f64;
    case StoredDType::f32: return DType::f32;
    case StoredDType::f16: return DType::f16;
    case StoredDType::bf16: return DType::bf16;
    case StoredDType::i32: return DType::i32;
    case StoredDType::i8: return DType::i8;
    case StoredDType::u8: return DType::u8;
    case StoredDType::i64: return std::nullopt;
  }
  return std::nullopt;
}

struct SafetensorsFile::Mapping {
  void* address = nullptr;
  std::size_t size = 0;

  Mapping(void* address, std::size_t size) : address(address), size(size) {}
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { ::munmap(address, size); }

  [[nodiscard]] std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(address), size}; }
};

SafetensorsFile::SafetensorsFile(std::filesystem::path path, std::unique_ptr<Mapping> mapping)
    : path_(std::move(path)), mapping_(std::move(mapping)) {}
SafetensorsFile::SafetensorsFile(SafetensorsFile&&) noexcept = default;
SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&&) noexcept = default;
SafetensorsFile::~SafetensorsFile() = default;

Status SafetensorsFile::error(std::string_view tensor, std::string_view what) const {
  if (tensor.empty()) return invalid_argument(fmt::format("safetensors {}: {}", path_.native(), what));
  return invalid_argument(fmt::format("safetensors {}: tensor '{}': {}", path_.native(), tensor, what));
}

Result<SafetensorsFile> SafetensorsFile::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return invalid_argument(fmt::format("safetensors {}: cannot open: {}", path.native(), std::strerror(errno)));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return invalid_argument(fmt::format("safetensors {}: not a regular file", path.native()));
  }
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size < 8) {
    ::close(fd);
    return invalid_argument(
        fmt::format("safetensors {}: {} bytes, shorter than the 8-byte header length", path.native(), size));
  }
  void* address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int mmap_error = errno;
  ::close(fd);  // the mapping keeps the file
  if (address == MAP_FAILED)
    return invalid_argument(fmt::format("safetensors {}: cannot map: {}", path.native(), std::strerror(mmap_error)));
  SafetensorsFile file(path, std::make_unique<Mapping>(address, size));
  ACCEL_RETURN_IF_ERROR(file.parse_header());
  return file;
}

Status SafetensorsFile::parse_header() {
  const std::span<const std::byte> bytes = mapping_->bytes();
  std::uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | std::to_integer<std::uint64_t>(bytes[i]);
  if (header_size > kMaxHeaderBytes)
    return error({}, fmt::format("header length {} exceeds the cap of {} bytes", header_size, kMaxHeaderBytes));
  if (header_size > bytes.size() - 8)
    return error({},
                 fmt::format("header length {} runs past the end of the file ({} bytes)", header_size, bytes.size()));
  data_ = bytes.subspan(8 + header_size);

  const auto* text = reinterpret_cast<const char*>(bytes.data() + 8);
  DuplicateKeys duplicates;
  json header;
  try {
    header = json::parse(text, text + header_size, std::ref(duplicates));
  } catch (const json::exception& e) {
    return error({}, fmt::format("header is not valid JSON: {}", e.what()));
  }
  if (duplicates.first() && duplicates.first_depth() == 1)
    return error(*duplicates.first(), "named more than once in the header");
  if (duplicates.first())
    return error({}, fmt::format("key '{}' appears more than once in one object of the header", *duplicates.first()));
  if (!header.is_object()) return error({}, "header is not a JSON object");

  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) return error({}, "__metadata__ is not an object");
      for (const auto& [key, text_value] : value.items()) {
        if (!text_value.is_string()) return error({}, fmt::format("__metadata__ '{}' is not a string", key));
        metadata_.emplace(key, text_value.get<std::string>());
      }
      continue;
    }
    if (name.empty()) return error({}, "a tensor has an empty name");
    if (!value.is_object()) return error(name, "is not an object");

    const auto dtype_field = value.find("dtype");
    if (dtype_field == value.end() || !dtype_field->is_string()) return error(name, "has no dtype string");
    const auto dtype = parse_dtype(dtype_field->get<std::string>());
    if (!dtype)
      return error(
          name, fmt::format("dtype {} is not supported (supported: {})", dtype_field->get<std::string>(), kSupported));

    const auto shape_field = value.find("shape");
    if (shape_field == value.end() || !shape_field->is_array()) return error(name, "has no shape array");
    Entry entry{.dtype = *dtype};
    std::uint64_t elements = 1;
    for (const json& extent : *shape_field) {
      // Negative extents parse as signed integers, and ones past 2^64 as floats: both are refused here.
      if (!extent.is_number_unsigned())
        return error(name,
                     fmt::format("shape {} holds {}, not a non-negative integer", shape_field->dump(), extent.dump()));
      const auto n = extent.get<std::uint64_t>();
      if (__builtin_mul_overflow(elements, n, &elements))
        return error(name, fmt::format("shape {} has more elements than 2^64", shape_field->dump()));
      entry.shape.push_back(n);
    }
    std::uint64_t expected_bytes = 0;
    if (__builtin_mul_overflow(elements, std::uint64_t{size_of(*dtype)}, &expected_bytes))
      return error(name,
                   fmt::format("shape {} of {} has more bytes than 2^64", shape_field->dump(), to_string(*dtype)));

    const auto offsets_field = value.find("data_offsets");
    if (offsets_field == value.end() || !offsets_field->is_array() || offsets_field->size() != 2 ||
        !(*offsets_field)[0].is_number_unsigned() || !(*offsets_field)[1].is_number_unsigned())
      return error(name, "data_offsets is not two non-negative integers");
    entry.begin = (*offsets_field)[0].get<std::uint64_t>();
    entry.end = (*offsets_field)[1].get<std::uint64_t>();
    if (entry.end < entry.begin)
      return error(name, fmt::format("data_offsets [{}, {}] end before they begin", entry.begin, entry.end));
    if (entry.end > data_.size())
      return error(name, fmt::format("data_offsets [{}, {}] run past the data region ({} bytes)", entry.begin,
                                     entry.end, data_.size()));
    if (entry.end - entry.begin != expected_bytes)
      return error(
          name, fmt::format("data_offsets [{}, {}] hold {} bytes, but shape {} of {} needs {}", entry.begin, entry.end,
                            entry.end - entry.begin, shape_field->dump(), to_string(*dtype), expected_bytes));
    tensors_.emplace(name, std::move(entry));
  }

  // Overlapping tensors would alias one another's bytes: a sign of a damaged or crafted file. Empty tensors
  // occupy nothing and may sit anywhere.
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::string_view>> ranges;
  for (const auto& [name, entry] : tensors_)
    if (entry.end > entry.begin) ranges.emplace_back(entry.begin, entry.end, name);
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t i = 1; i < ranges.size(); ++i) {
    const auto& [begin, end, name] = ranges[i];
    const auto& [previous_begin, previous_end, previous_name] = ranges[i - 1];
    if (begin < previous_end)
      return error(name, fmt::format("data_offsets [{}, {}] overlap tensor '{}' [{}, {}]", begin, end, previous_name,
                                     previous_begin, previous_end));
  }
  return Status();
}

std::vector<std::string_view> SafetensorsFile::names() const {
  std::vector<std::string_view> names;
  names.reserve(tensors_.size());
  for (const auto& [name, entry] : tensors_) names.push_back(name);
  return names;
}

Result<TensorView> SafetensorsFile::tensor(std::string_view name) const {
  const auto found = tensors_.find(name);
  if (found == tensors_.end()) return error(name, "no such tensor");
  const Entry& entry = found->second;
  return TensorView{.name = found->first,
                    .dtype = entry.dtype,
                    .shape = entry.shape,
                    .bytes = data_.subspan(entry.begin, entry.end - entry.begin)};
}

namespace {

// Calls store(i, value) for every element of a float tensor, as a float; the dtype is switched on once, outside
// the loop.
template <class Store>
void for_each_float(const TensorView& view, Store&& store) {
  const std::byte* at = view.bytes.data();
  const std::size_t n = view.elements();
  switch (view.dtype) {
    case StoredDType::f32:
      for (std::size_t i = 0; i < n; ++i) store(i, load<float>(at + 4 * i));
      break;
    case StoredDType::f64:
      for (std::size_t i = 0; i < n; ++i) store(i, static_cast<float>(load<double>(at + 8 * i)));
      break;
    case StoredDType::f16:
      for (std::size_t i = 0; i < n; ++i) store(i, to_float(Half{load<std::uint16_t>(at + 2 * i)}));
      break;
    case StoredDType::bf16:
      for (std::size_t i = 0; i < n; ++i) store(i, to_float(BFloat16{load<std::uint16_t>(at + 2 * i)}));
      break;
    default: break;
  }
}

}  // namespace

Result<TensorView> SafetensorsFile::float_tensor(std::string_view name, std::size_t out_elements) const {
  ACCEL_ASSIGN_OR_RETURN(const TensorView view, tensor(name));
  if (!is_float(view.dtype)) return error(name, fmt::format("is {}, not a float type", to_string(view.dtype)));
  if (view.elements() != out_elements)
    return error(name, fmt::format("has {} elements, the destination {}", view.elements(), out_elements));
  return view;
}

Result<TensorView> SafetensorsFile::float_range(std::string_view name, std::uint64_t first, std::size_t count) const {
  ACCEL_ASSIGN_OR_RETURN(TensorView view, tensor(name));
  if (!is_float(view.dtype)) return error(name, fmt::format("is {}, not a float type", to_string(view.dtype)));
  if (first > view.elements() || count > view.elements() - first)
    return error(name, fmt::format("has {} elements, not {} from element {}", view.elements(), count, first));
  view.bytes = view.bytes.subspan(first * size_of(view.dtype), count * size_of(view.dtype));
  return view;
}

Status SafetensorsFile::copy_f32(std::string_view name, std::span<float> out) const {
  ACCEL_RETURN_IF_ERROR(float_tensor(name, out.size()).status());
  return copy_f32(name, 0, out);
}

Status SafetensorsFile::copy_16bit(std::string_view name, DType target, std::span<std::uint16_t> out) const {
  ACCEL_RETURN_IF_ERROR(float_tensor(name, out.size()).status());
  return copy_16bit(name, target, 0, out);
}

Status SafetensorsFile::copy_f32(std::string_view name, std::uint64_t first, std::span<float> out) const {
  ACCEL_ASSIGN_OR_RETURN(const TensorView view, float_range(name, first, out.size()));
  if (view.dtype == StoredDType::f32) {
    if (!out.empty()) std::memcpy(out.data(), view.bytes.data(), view.bytes.size());
  } else {
    for_each_float(view, [&](std::size_t i, float value) { out[i] = value; });
  }
  return Status();
}

Status SafetensorsFile::copy_16bit(std::string_view name, DType target, std::uint64_t first,
                                   std::span<std::uint16_t> out) const {
  if (target != DType::f16 && target != DType::bf16)
    return error(name, fmt::format("cannot convert to {}: only f16 and bf16 are 16-bit", accel::to_string(target)));
  ACCEL_ASSIGN_OR_RETURN(const TensorView view, float_range(name, first, out.size()));
  if (to_dtype(view.dtype) == target) {
    if (!out.empty()) std::memcpy(out.data(), view.bytes.data(), view.bytes.size());
    return Status();
  }
  // Through f32, which holds f16 and bf16 exactly; only F64 is rounded twice.
  if (target == DType::bf16) {
    for_each_float(view, [&](std::size_t i, float value) { out[i] = to_bfloat16(value).bits; });
    return Status();
  }
  std::optional<std::pair<std::size_t, float>> overflow;
  for_each_float(view, [&](std::size_t i, float value) {
    out[i] = to_half(value).bits;
    if ((out[i] & 0x7fffu) == 0x7c00u && std::isfinite(value) && !overflow) overflow.emplace(i, value);
  });
  // A weight past f16's range would silently become an infinity and poison every result it touches.
  if (overflow)
    return error(name, fmt::format("element {} ({}) is out of f16's range", first + overflow->first, overflow->second));
  return Status();
}

Result<std::vector<float>> SafetensorsFile::to_f32(std::string_view name) const {
  ACCEL_ASSIGN_OR_RETURN(const TensorView view, tensor(name));
  std::vector<float> values(view.elements());
  ACCEL_RETURN_IF_ERROR(copy_f32(name, values));
  return values;
}

Result<std::vector<std::uint16_t>> SafetensorsFile::to_16bit(std::string_view name, DType target) const {
  ACCEL_ASSIGN_OR_RETURN(const TensorView view, tensor(name));
  std::vector<std::uint16_t> bits(view.elements());
  ACCEL_RETURN_IF_ERROR(copy_16bit(name, target, bits));
  return bits;
}

}  // namespace accel::embed
