// The device-independent checks of the CUTLASS requests (include/accel/jit/cutlass.hpp), done before any device
// sees them, and what each request needs from a CUTLASS instantiation. Used by every device: the CPU reference,
// the CUDA streams, the isolated worker.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "accel/core/result.hpp"
#include "accel/jit/cutlass.hpp"
#include "jit/cutlass/render.hpp"

namespace accel::jit {

// One stored matrix of a request: where it lies, in elements, and how it is laid out.
struct StoredMatrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  MatrixOrder order = MatrixOrder::row_major;
  std::int64_t ld = 0;       // resolved (never 0)
  std::uint64_t offset = 0;  // first element in the buffer
  std::uint64_t extent = 0;  // elements from `offset` the matrix touches
  [[nodiscard]] std::int64_t index(std::int64_t row, std::int64_t col) const noexcept {
    return order == MatrixOrder::row_major ? row * ld + col : col * ld + row;
  }
};

struct CutlassGemmGeometry {
  StoredMatrix a, b, c, d;  // c is unused (rows 0) without C; the residual shares d's layout
  std::uint64_t bias_extent = 0;
  cutlass::EpilogueSpec epilogue;
};

// Sizes, types, layouts, leading dimensions, 16-byte row alignment (what CUTLASS's TMA loads need), which
// operands are present; invalid_argument / not_supported naming the field.
[[nodiscard]] Result<CutlassGemmGeometry> check_cutlass_gemm(const CutlassGemm& request);
[[nodiscard]] Result<std::vector<CutlassGemmGeometry>> check_cutlass_grouped_gemm(const CutlassGroupedGemm& request);
// Rank 2, channels-last, packed, groups 1, symmetric padding, f16/bf16, channels aligned to 8.
[[nodiscard]] Status check_cutlass_conv(const CutlassConv& request);

// The elements of x, w and y, and y's spatial extents, of a checked CutlassConv.
struct ConvExtents {
  std::uint64_t x = 0;
  std::uint64_t w = 0;
  std::uint64_t y = 0;
  std::int64_t p = 0;
  std::int64_t q = 0;
};
[[nodiscard]] Result<ConvExtents> conv_extents(const ConvShape& shape);

// The Gemm computing what a CutlassGemm (or a group of a grouped GEMM) computes, for answering it while its
// kernel compiles; nullopt where no Gemm can: scales, a residual, or a C apart from D (cuBLASLt reads and writes
// one C). The epilogue is passed on as it is: plan_gemm_geometry refuses what Gemm does not fuse (silu, a bias
// along C's strided dimension).
[[nodiscard]] std::optional<GemmShape> library_equivalent(DType input, DType output,
                                                          const CutlassGemmGeometry& geometry, bool c_is_d);

// The convolution request (cuDNN on CUDA devices, the reference on the CPU) of a CutlassConv's pass, computing
// its result with alpha 1 and beta 0.
using LibraryConv = std::variant<ConvFwd, ConvBwdData, ConvBwdFilter>;
[[nodiscard]] LibraryConv library_conv(const CutlassConv& request);

// The instantiation serving a request on a device of `compute_capability`; the request's tile, else accel's
// choice for its types and sizes.
[[nodiscard]] cutlass::GemmInstance gemm_instance(const CutlassGemm& request, const CutlassGemmGeometry& geometry,
                                                  int compute_capability);
[[nodiscard]] cutlass::GroupedGemmInstance grouped_gemm_instance(const CutlassGroupedGemm& request,
                                                                 int compute_capability);
[[nodiscard]] cutlass::ConvInstance conv_instance(const CutlassConv& request, int compute_capability);

}  // namespace accel::jit
