// The checks every tensor request shares, made before any buffer is resolved (Operation<...>::validate): dtypes and
// compute types, each tensor's letters and extents, extents that agree across the request, and the rules each
// operation sets on which modes may appear where. Errors name the request (its kName), the tensor and the mode.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "accel/core/result.hpp"
#include "accel/libs/tensor/tensor.hpp"
#include "operation/operation.hpp"

namespace accel::tensor {

// cuTENSOR's operation kinds: what decides which compute types a dtype takes, and what a plan is made by.
enum class Kind : std::uint8_t { contract, binary, trinary, reduce, permute };

// A tensor named as errors name it ("a").
struct Named {
  std::string_view name;
  const Tensor& tensor;
};

// What validate() makes of a request: the elements each of its tensors spans (a, b, then the output, d or Permute's
// b; 0 for a tensor the request lacks).
struct Counts {
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  std::uint64_t d = 0;
};

// The compute type a request asks for, with `standard` resolved.
[[nodiscard]] Compute resolved(Compute compute, DType dtype) noexcept;
// f32, f64, f16 or bf16, and a compute type cuTENSOR's `kind` offers for it.
[[nodiscard]] Status check_types(std::string_view request, Kind kind, DType dtype, Compute compute);
[[nodiscard]] Status check_unary(std::string_view request, std::string_view field, Unary op);
[[nodiscard]] Status check_binary(std::string_view request, std::string_view field, Binary op);

// A tensor's rank, letters (a-z, A-Z, none twice) and extents (at least 1); the elements it spans.
[[nodiscard]] Result<std::uint64_t> check_tensor(std::string_view request, Named tensor);
// A letter's extent is the same in every tensor where it appears.
[[nodiscard]] Status check_extents_agree(std::string_view request, std::initializer_list<Named> tensors);
// Every mode of `tensor` appears in one of `others`.
[[nodiscard]] Status check_modes_within(std::string_view request, Named tensor, std::initializer_list<Named> others);

[[nodiscard]] bool has_mode(const Tensor& tensor, char mode) noexcept;
// Where `mode` is in `tensor`; rank when it is not.
[[nodiscard]] std::size_t position(const Tensor& tensor, char mode) noexcept;
// Elements of a checked tensor.
[[nodiscard]] std::uint64_t element_count(const Tensor& tensor) noexcept;

// Operand lists: a tensor read, C (absent when null) and the output, written and alone in its buffer.
void read_tensor(Operands& operands, const Tensor& tensor, std::string_view name, DType dtype, std::uint64_t count);
void read_addend(Operands& operands, BufferHandle c, DType dtype, std::uint64_t count);
void write_tensor(Operands& operands, const Tensor& tensor, std::string_view name, DType dtype, std::uint64_t count);

}  // namespace accel::tensor
