#include "libs/tensor/tensor_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace accel::tensor {
namespace {

// Elements of one tensor stay below 2^62, so that byte counts and index arithmetic cannot overflow.
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 62;

bool is_letter(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool allowed(Kind kind, DType dtype, Compute compute) noexcept {
  if (kind == Kind::contract) {
    switch (dtype) {
      case DType::f16:
      case DType::bf16: return compute == Compute::f32;
      case DType::f32:
        return compute == Compute::f32 || compute == Compute::tf32 || compute == Compute::tf32x3 ||
               compute == Compute::f16 || compute == Compute::bf16;
      case DType::f64: return compute == Compute::f64 || compute == Compute::f32;
      default: return false;
    }
  }
  switch (dtype) {
    case DType::f16: return compute == Compute::f16 || compute == Compute::f32;
    case DType::bf16: return compute == Compute::bf16 || compute == Compute::f32;
    case DType::f32: return compute == Compute::f32;
    case DType::f64: return compute == Compute::f64;
    default: return false;
  }
}

std::string_view kind_name(Kind kind) noexcept {
  switch (kind) {
    case Kind::contract: return "contractions";
    case Kind::binary:
    case Kind::trinary: return "elementwise operations";
    case Kind::reduce: return "reductions";
    case Kind::permute: return "permutations";
  }
  return "operations";
}

}  // namespace

Tensor make(BufferHandle buffer, std::string_view modes, std::initializer_list<std::int64_t> extents) {
  Tensor tensor{.buffer = buffer};
  const auto fits = [](std::int64_t extent) { return extent >= INT32_MIN && extent <= INT32_MAX; };
  if (modes.size() != extents.size() || modes.size() > kMaxModes ||
      !std::all_of(extents.begin(), extents.end(), fits)) {
    tensor.rank = kBadRank;
    return tensor;
  }
  tensor.rank = static_cast<std::uint8_t>(modes.size());
  std::copy(modes.begin(), modes.end(), tensor.modes.begin());
  std::transform(extents.begin(), extents.end(), tensor.extents.begin(),
                 [](std::int64_t extent) { return static_cast<std::int32_t>(extent); });
  return tensor;
}

std::string_view to_string(Compute compute) noexcept {
  switch (compute) {
    case Compute::standard: return "standard";
    case Compute::f32: return "f32";
    case Compute::f64: return "f64";
    case Compute::f16: return "f16";
    case Compute::bf16: return "bf16";
    case Compute::tf32: return "tf32";
    case Compute::tf32x3: return "tf32x3";
  }
  return "unknown";
}

std::string_view to_string(Unary op) noexcept {
  switch (op) {
    case Unary::identity: return "identity";
    case Unary::sqrt: return "sqrt";
    case Unary::relu: return "relu";
    case Unary::rcp: return "rcp";
    case Unary::sigmoid: return "sigmoid";
    case Unary::tanh: return "tanh";
    case Unary::exp: return "exp";
    case Unary::log: return "log";
    case Unary::abs: return "abs";
    case Unary::neg: return "neg";
  }
  return "unknown";
}

std::string_view to_string(Binary op) noexcept {
  switch (op) {
    case Binary::add: return "add";
    case Binary::mul: return "mul";
    case Binary::max: return "max";
    case Binary::min: return "min";
  }
  return "unknown";
}

Compute resolved(Compute compute, DType dtype) noexcept {
  if (compute != Compute::standard) return compute;
  return dtype == DType::f64 ? Compute::f64 : Compute::f32;
}

Status check_types(std::string_view request, Kind kind, DType dtype, Compute compute) {
  if (dtype != DType::f32 && dtype != DType::f64 && dtype != DType::f16 && dtype != DType::bf16) {
    return not_supported(
        fmt::format("{}: dtype {} is not supported; tensors hold f32, f64, f16 or bf16", request, to_string(dtype)));
  }
  if (static_cast<std::uint8_t>(compute) > static_cast<std::uint8_t>(Compute::tf32x3)) {
    return invalid_argument(fmt::format("{}: compute = {} names no compute type", request, static_cast<int>(compute)));
  }
  if (!allowed(kind, dtype, resolved(compute, dtype))) {
    return not_supported(fmt::format("{}: cuTENSOR's {} of {} tensors do not compute in {}", request, kind_name(kind),
                                     to_string(dtype), to_string(compute)));
  }
  return Status();
}

Status check_unary(std::string_view request, std::string_view field, Unary op) {
  if (static_cast<std::uint8_t>(op) <= static_cast<std::uint8_t>(Unary::neg)) return Status();
  return invalid_argument(fmt::format("{}: {} = {} names no unary operator", request, field, static_cast<int>(op)));
}

Status check_binary(std::string_view request, std::string_view field, Binary op) {
  if (static_cast<std::uint8_t>(op) <= static_cast<std::uint8_t>(Binary::min)) return Status();
  return invalid_argument(fmt::format("{}: {} = {} names no binary operator", request, field, static_cast<int>(op)));
}

Result<std::uint64_t> check_tensor(std::string_view request, Named named) {
  const Tensor& t = named.tensor;
  if (t.rank > kMaxModes) {
    return invalid_argument(fmt::format(
        "{}: tensor {} has no valid modes: make() was given modes and extents that do not pair up, more than {} "
        "modes, or an extent beyond 32 bits",
        request, named.name, kMaxModes));
  }
  std::uint64_t count = 1;
  for (std::size_t i = 0; i < t.rank; ++i) {
    const char mode = t.modes[i];
    if (!is_letter(mode)) {
      return invalid_argument(fmt::format("{}: mode {} of tensor {} is character {}, not a letter a-z or A-Z", request,
                                          i, named.name, static_cast<int>(static_cast<unsigned char>(mode))));
    }
    if (std::find(t.modes.begin(), t.modes.begin() + static_cast<std::ptrdiff_t>(i), mode) !=
        t.modes.begin() + static_cast<std::ptrdiff_t>(i)) {
      return invalid_argument(
          fmt::format("{}: tensor {} ('{}') has mode '{}' twice", request, named.name, t.letters(), mode));
    }
    if (t.extents[i] < 1) {
      return invalid_argument(fmt::format("{}: mode '{}' of tensor {} has extent {}; extents are at least 1", request,
                                          mode, named.name, t.extents[i]));
    }
    const auto extent = static_cast<std::uint64_t>(t.extents[i]);
    if (extent > kMaxElements / count) {
      return invalid_argument(
          fmt::format("{}: tensor {} ('{}') has more than 2^62 elements", request, named.name, t.letters()));
    }
    count *= extent;
  }
  return count;
}

Status check_extents_agree(std::string_view request, std::initializer_list<Named> tensors) {
  for (auto first = tensors.begin(); first != tensors.end(); ++first)
    for (auto second = first + 1; second != tensors.end(); ++second)
      for (std::size_t i = 0; i < first->tensor.rank; ++i) {
        const std::size_t j = position(second->tensor, first->tensor.modes[i]);
        if (j == second->tensor.rank || first->tensor.extents[i] == second->tensor.extents[j]) continue;
        return invalid_argument(fmt::format("{}: mode '{}' has extent {} in {} but {} in {}", request,
                                            first->tensor.modes[i], first->tensor.extents[i], first->name,
                                            second->tensor.extents[j], second->name));
      }
  return Status();
}

Status check_modes_within(std::string_view request, Named tensor, std::initializer_list<Named> others) {
  for (char mode : tensor.tensor.letters()) {
    if (std::any_of(others.begin(), others.end(), [&](const Named& other) { return has_mode(other.tensor, mode); }))
      continue;
    std::string names;
    for (const Named& other : others) {
      names += fmt::format("{}{} ('{}')", names.empty() ? "" : " nor ", other.name, other.tensor.letters());
    }
    return invalid_argument(fmt::format("{}: mode '{}' of {} ('{}') is {} {}", request, mode, tensor.name,
                                        tensor.tensor.letters(), others.size() > 1 ? "in neither" : "not in", names));
  }
  return Status();
}

bool has_mode(const Tensor& tensor, char mode) noexcept { return position(tensor, mode) != tensor.rank; }

std::size_t position(const Tensor& tensor, char mode) noexcept {
  const std::string_view letters = tensor.letters();
  const std::size_t at = letters.find(mode);
  return at == std::string_view::npos ? tensor.rank : at;
}

std::uint64_t element_count(const Tensor& tensor) noexcept {
  std::uint64_t count = 1;
  for (std::size_t i = 0; i < tensor.rank; ++i) count *= static_cast<std::uint64_t>(tensor.extents[i]);
  return count;
}

void read_tensor(Operands& operands, const Tensor& tensor, std::string_view name, DType dtype, std::uint64_t count) {
  operands.typed(tensor.buffer, std::string(name), Access::read, dtype, count);
}

void read_addend(Operands& operands, BufferHandle c, DType dtype, std::uint64_t count) {
  if (c.is_null()) {
    operands.absent("c");
    return;
  }
  operands.typed(c, "c", Access::read, dtype, count);
}

void write_tensor(Operands& operands, const Tensor& tensor, std::string_view name, DType dtype, std::uint64_t count) {
  operands.add({.buffer = tensor.buffer,
                .name = std::string(name),
                .access = Access::write,
                .count = count,
                .check_dtype = true,
                .dtype = dtype,
                .exclusive = true});
}

}  // namespace accel::tensor
