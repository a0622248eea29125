/// @file
/// Tensor requests (cuTENSOR's operations; cuTENSOR on CUDA, OpenBLAS and Eigen on the CPU device): contractions
/// written as einsum, elementwise operations of two or three tensors, reductions and permutations.
///
/// A tensor is a buffer and its modes: one letter per mode (a-z, A-Z) with its extent. Tensors are packed and
/// row-major, as in numpy and torch: the last mode varies fastest. A letter names the same index in every tensor of
/// a request, so its extent must be the same wherever it appears. Every tensor of a request holds the request's
/// dtype (f32, f64, f16 or bf16).
///
/// @code
///   // D[b,h,q,k] = Σ_d A[b,h,q,d] B[b,h,k,d]   (einsum "bhqd,bhkd->bhqk")
///   accel::tensor::Contract c{.a = tensor::make(a, "bhqd", {2, 8, 128, 64}),
///                             .b = tensor::make(b, "bhkd", {2, 8, 128, 64}),
///                             .d = tensor::make(d, "bhqk", {2, 8, 128, 128})};
///   accel::Status s = device.ask(c).wait().status();
/// @endcode
///
/// Where an operation reads C (the addend of a contraction, the second operand of an elementwise op), C has D's
/// modes and layout: it is the buffer `c`, or D's own contents when `c` is null (in place). A scalar of 0 means
/// its tensor is not read at all (NaNs in it do not propagate), as in cuTENSOR. An output shares its buffer with
/// no other operand of the request.
///
/// Requests are checked whole before anything runs: letters, repeated modes, extents that disagree between tensors,
/// modes an operation does not allow (a contraction's output mode found in neither input, say), dtypes, compute
/// types the operation does not offer for the dtype, and buffers too small or of another dtype are refused with
/// invalid_argument or not_supported, naming the tensor and the mode.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/result.hpp"

namespace accel::tensor {

inline constexpr std::size_t kMaxModes = 12;  ///< The most modes a Tensor can have.
/// The rank make() gives a tensor whose modes and extents do not pair up, that has more than kMaxModes modes, or
/// an extent beyond 32 bits.
inline constexpr std::uint8_t kBadRank = 255;

/// A tensor of a request: plain data of fixed size, so that requests cross to an isolated worker byte for byte
/// (three tensors must fit one request slot of the channel: hence 32-bit extents; the elements of a tensor are
/// counted in 64 bits).
struct Tensor {
  BufferHandle buffer;    ///< the buffer holding the tensor's elements
  std::uint8_t rank = 0;  ///< the number of modes; kBadRank when make() was given modes and extents that do not pair up
  std::array<char, kMaxModes> modes{};            ///< the first `rank` are used
  std::array<std::int32_t, kMaxModes> extents{};  ///< the extent of each mode, at least 1

  /// The modes' letters, in order (empty for a bad rank).
  [[nodiscard]] std::string_view letters() const noexcept {
    return {modes.data(), rank <= kMaxModes ? rank : std::size_t{0}};
  }
};

/// A tensor of `buffer` with one mode per letter of `modes` and the extents in the same order. Modes and extents
/// that do not pair up (too many of them, or an extent beyond 32 bits) make a tensor of rank kBadRank, which the
/// request's checks refuse.
[[nodiscard]] Tensor make(BufferHandle buffer, std::string_view modes, std::initializer_list<std::int64_t> extents);

/// The precision in which an operation computes. `standard`: f32 for f16, bf16 and f32 data, f64 for f64. What else
/// each dtype takes is cuTENSOR's:
///   Contract                                   f16, bf16: f32; f32: f32, tf32, tf32x3, f16, bf16; f64: f64, f32
///   ElementwiseBinary/Trinary, Reduce, Permute f16: f16, f32; bf16: bf16, f32; f32: f32; f64: f64
/// The CPU device computes in f32 (f64 for f64 data) whatever is asked: at least as precise as any of these.
/// tf32x3 multiplies f32 data as three TF32 products, close to f32 accuracy (cuTENSOR's 3XTF32).
enum class Compute : std::uint8_t { standard, f32, f64, f16, bf16, tf32, tf32x3 };

/// Applied to each element of an input before it is used (not to contractions' inputs).
/// rcp is 1 / x.
enum class Unary : std::uint8_t { identity, sqrt, relu, rcp, sigmoid, tanh, exp, log, abs, neg };
/// Combines two elements (elementwise operations), or reduces many (Reduce).
enum class Binary : std::uint8_t { add, mul, max, min };

/// The enumerator's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(Compute compute) noexcept;
/// The enumerator's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(Unary op) noexcept;
/// The enumerator's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(Binary op) noexcept;

/// D = alpha A·B + beta C, summing over the modes A and B share that D lacks. Every mode of A appears in B or D, and
/// every mode of B in A or D; D's modes are those of A and B that are not summed, in any order: modes of A, B and D
/// are batched, modes of D and one input are broadcast over the other.
struct Contract {
  static constexpr const char* kName = "tensor::Contract";
  using Response = Done;

  DType dtype = DType::f32;             ///< element type of every tensor: f32, f64, f16 or bf16
  Compute compute = Compute::standard;  ///< the precision of the computation
  Tensor a;                             ///< A
  Tensor b;                             ///< B
  BufferHandle c;                       ///< D's modes and layout; null: D itself
  Tensor d;                             ///< written
  double alpha = 1.0;                   ///< scales A
  double beta = 0.0;                    ///< scales C; 0: C is not read
};

/// D = op(alpha op_a(A), gamma op_c(C)). A's modes are some of D's, in any order (A is broadcast over the others).
struct ElementwiseBinary {
  static constexpr const char* kName = "tensor::ElementwiseBinary";
  using Response = Done;

  DType dtype = DType::f32;             ///< element type of every tensor: f32, f64, f16 or bf16
  Compute compute = Compute::standard;  ///< the precision of the computation
  Unary op_a = Unary::identity;         ///< applied to each element of A
  Unary op_c = Unary::identity;         ///< applied to each element of C
  Binary op = Binary::add;              ///< combines the elements
  Tensor a;                             ///< A
  BufferHandle c;                       ///< D's modes and layout; null: D itself
  Tensor d;                             ///< written
  double alpha = 1.0;                   ///< scales A
  double gamma = 1.0;                   ///< scales C
};

/// D = op_abc(op_ab(alpha op_a(A), beta op_b(B)), gamma op_c(C)). A's and B's modes are some of D's.
struct ElementwiseTrinary {
  static constexpr const char* kName = "tensor::ElementwiseTrinary";
  using Response = Done;

  DType dtype = DType::f32;             ///< element type of every tensor: f32, f64, f16 or bf16
  Compute compute = Compute::standard;  ///< the precision of the computation
  Unary op_a = Unary::identity;         ///< applied to each element of A
  Unary op_b = Unary::identity;         ///< applied to each element of B
  Unary op_c = Unary::identity;         ///< applied to each element of C
  Binary op_ab = Binary::add;           ///< combines A's and B's elements
  Binary op_abc = Binary::add;          ///< combines that result with C's
  Tensor a;                             ///< A
  Tensor b;                             ///< B
  BufferHandle c;                       ///< D's modes and layout; null: D itself
  Tensor d;                             ///< written
  double alpha = 1.0;                   ///< scales A
  double beta = 1.0;                    ///< scales B
  double gamma = 1.0;                   ///< scales C
};

/// D = alpha op(op_a(A) over the modes of A that D lacks) + beta C. D's modes are some of A's, in any order.
struct Reduce {
  static constexpr const char* kName = "tensor::Reduce";
  using Response = Done;

  DType dtype = DType::f32;             ///< element type of every tensor: f32, f64, f16 or bf16
  Compute compute = Compute::standard;  ///< the precision of the computation
  Unary op_a = Unary::identity;         ///< applied to each element of A
  Binary op = Binary::add;              ///< combines the elements
  Tensor a;                             ///< A, reduced over the modes D lacks
  BufferHandle c;                       ///< D's modes and layout; null: D itself
  Tensor d;                             ///< written
  double alpha = 1.0;                   ///< scales A
  double beta = 0.0;                    ///< scales C; 0: C is not read
};

/// B = alpha op_a(A) with B's modes in its own order; B may have modes A lacks (A is broadcast over them).
struct Permute {
  static constexpr const char* kName = "tensor::Permute";
  using Response = Done;

  DType dtype = DType::f32;             ///< element type of every tensor: f32, f64, f16 or bf16
  Compute compute = Compute::standard;  ///< the precision of the computation
  Unary op_a = Unary::identity;         ///< applied to each element of A
  Tensor a;                             ///< A
  Tensor b;                             ///< written
  double alpha = 1.0;                   ///< scales A
};

}  // namespace accel::tensor
