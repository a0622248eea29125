// What the GEMM and grouped GEMM renderers share (render_gemm_parts.cpp): validation of an instance's types and tile,
// the text of every GEMM module before its instance, and the instance's aliases; and the GEMM's epilogue.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "accel/core/status.hpp"
#include "jit/cutlass/render.hpp"

namespace accel::jit::cutlass {

struct EpilogueSmem {
  bool source = true;
  bool residual = false;
  int row_vectors_bytes = 0;  // vectors broadcast along m and staged in shared memory: one tile_n slice each
};

// Shared memory the TMA epilogue takes, as CUTLASS's sm90 builder sizes it (EpilogueTileAuto), plus a little.
[[nodiscard]] int epilogue_smem_bytes(const TileConfig& tile, DType output, const EpilogueSmem& parts);
// The tile and its stages within sm_90's shared memory beside the epilogue's bytes and `carveout_bytes`; `family`
// names the instance kind in errors.
[[nodiscard]] Status validate_tile(std::string_view family, DType input, const TileConfig& tile, int epilogue_bytes,
                                   int carveout_bytes);
// Schedule, arch, element types and the layouts fp8 needs.
[[nodiscard]] Status validate_types(std::string_view family, int arch, DType input, DType output, Layout layout_a,
                                    Layout layout_b, const TileConfig& tile);

// Replaces each `$name$` of `text` by its value.
[[nodiscard]] std::string substitute(std::string_view text,
                                     const std::vector<std::pair<std::string_view, std::string>>& values);
// The stride expression of an operand from its leading dimension, in CUTLASS's mode order (A: m,k; B: n,k;
// C and D: m,n; then the batch, one matrix further on).
[[nodiscard]] std::string stride_expression(bool contiguous_first, std::string_view ld, std::string_view rows);
// The part of every module after the prologue that does not depend on the instance: includes and helpers.
[[nodiscard]] std::string_view gemm_common_head();
// The instance's element, layout, tile and schedule aliases, shared by both families.
[[nodiscard]] std::string common_aliases(DType input, DType output, Layout layout_a, Layout layout_b, Layout layout_c,
                                         bool source, const TileConfig& tile, bool grouped);
// The collective builders and the kernel, after `EpilogueOp` is defined.
[[nodiscard]] std::string kernel_aliases(bool grouped);

// The GEMM's epilogue (render_gemm_epilogue.cpp): the EpilogueOp alias, with the aliases it is built from, and the
// body of the function that fills its arguments.
struct RenderedEpilogue {
  std::string aliases;
  std::string arguments_body;
};
[[nodiscard]] RenderedEpilogue render_gemm_epilogue(const GemmInstance& instance);

}  // namespace accel::jit::cutlass
