// GEMM and grouped GEMM instances: what CUTLASS can build, and the .cu text of their modules. This file: the GEMM's
// module; render_grouped_gemm.cpp the grouped GEMM's, render_gemm_parts.cpp what they share,
// render_gemm_epilogue.cpp the GEMM's epilogue.
//
// Both families are CUTLASS 3.x GemmUniversal kernels for sm_90 assembled by the collective builders: a TMA
// warp-specialised mainloop (cooperative or ping-pong) and a TMA epilogue. The GEMM's epilogue is the formula
// of module_abi.hpp as an epilogue visitor tree (EVT), only the nodes the instance asks for; the plain linear
// combination uses CUTLASS's built-in fusion operation. The grouped GEMM is the pointer-array kernel with a
// linear-combination epilogue; its per-group arrays live in the caller's workspace.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "jit/cutlass/render_gemm_parts.hpp"
#include "jit/cutlass/render_parts.hpp"

namespace accel::jit::cutlass {
namespace {

constexpr std::string_view kGemmEntryPoints = R"cu(namespace accel_module {

using EpilogueArguments = typename CollectiveEpilogue::FusionCallbacks::Arguments;

// The epilogue's arguments: the visitor tree's, nested as the tree is (each node: its inputs, then its own).
inline EpilogueArguments epilogue_arguments(const AccelGemmArgs& args, typename GemmKernel::StrideD stride_d) {
  (void)stride_d;
$EPILOGUE_ARGUMENTS$}

// The problem size: not negative and within CUTLASS's int extents. `empty` when there is nothing to compute.
inline int check_shape(const AccelGemmArgs& args, bool& empty, char* error, size_t capacity) {
  if (args.m < 0 || args.n < 0 || args.k < 0)
    return accel_fail(kAccelInvalidArgument, error, capacity, "negative GEMM size m=%lld n=%lld k=%lld", ll(args.m),
                ll(args.n), ll(args.k));
  if (args.m > INT_MAX || args.n > INT_MAX || args.k > INT_MAX)
    return accel_fail(kAccelNotSupported, error, capacity, "GEMM size m=%lld n=%lld k=%lld exceeds CUTLASS's int extents",
                ll(args.m), ll(args.n), ll(args.k));
  empty = args.m == 0 || args.n == 0;
  if (!empty && args.k == 0)
    return accel_fail(kAccelNotSupported, error, capacity, "k = 0 (m=%lld n=%lld) is not supported by this kernel",
                ll(args.m), ll(args.n));
  return kAccelOk;
}

// The kernel's arguments from the call's. With `check`, the operands are checked first (presence, alignment,
// leading dimensions); without, only the problem size matters (the workspace query).
inline int make_arguments(const AccelGemmArgs& call, bool check, typename Gemm::Arguments& arguments, char* error,
                          size_t capacity) {
  AccelGemmArgs args = call;
  int result = kAccelOk;
  if (check) {
$OPERAND_CHECKS$  }
  // Strides in CUTLASS's mode order (A: m, k; B: n, k; C and D: m, n), then the batch: one matrix further on.
  const typename GemmKernel::StrideA stride_a = $STRIDE_A$;
  const typename GemmKernel::StrideB stride_b = $STRIDE_B$;
  const typename GemmKernel::StrideC stride_c = $STRIDE_C$;
  const typename GemmKernel::StrideD stride_d = $STRIDE_D$;
  arguments = typename Gemm::Arguments{
      cutlass::gemm::GemmUniversalMode::kGemm,
      {static_cast<int>(args.m), static_cast<int>(args.n), static_cast<int>(args.k), 1},
      {static_cast<ElementA const*>(args.a), stride_a, static_cast<ElementB const*>(args.b), stride_b},
      {epilogue_arguments(args, stride_d), $C_POINTER$, stride_c, static_cast<ElementD*>(args.d), stride_d}};
  return result;
}

}  // namespace accel_module

extern "C" int accel_workspace_bytes(const void* args, size_t* bytes, char* error, size_t error_capacity) {
  using namespace accel_module;
  if (args == nullptr || bytes == nullptr)
    return accel_fail(kAccelInvalidArgument, error, error_capacity, "accel_workspace_bytes: args and bytes must not be null");
  return accel_guarded("accel_workspace_bytes", error, error_capacity, [&]() -> int {
      const AccelGemmArgs& call = *static_cast<const AccelGemmArgs*>(args);
      bool empty = false;
      if (int result = check_shape(call, empty, error, error_capacity); result != kAccelOk) return result;
      *bytes = 0;
      if (empty) return kAccelOk;
      typename Gemm::Arguments arguments;
      if (int result = make_arguments(call, false, arguments, error, error_capacity); result != kAccelOk) return result;
      *bytes = Gemm::get_workspace_size(arguments);
      return kAccelOk;
  });
}

extern "C" int accel_run(const void* args, void* workspace, size_t workspace_bytes, cudaStream_t stream,
                         char* error, size_t error_capacity) {
  using namespace accel_module;
  if (args == nullptr) return accel_fail(kAccelInvalidArgument, error, error_capacity, "accel_run: args is null");
  return accel_guarded("accel_run", error, error_capacity, [&]() -> int {
      const AccelGemmArgs& call = *static_cast<const AccelGemmArgs*>(args);
      bool empty = false;
      if (int result = check_shape(call, empty, error, error_capacity); result != kAccelOk) return result;
      if (empty) return kAccelOk;
      typename Gemm::Arguments arguments;
      if (int result = make_arguments(call, true, arguments, error, error_capacity); result != kAccelOk) return result;
      DeviceInfo device;
      if (int result = query_device<GemmKernel>(device, error, error_capacity); result != kAccelOk) return result;
      arguments.hw_info.device_id = device.device;
      arguments.hw_info.sm_count = device.sm_count;
      arguments.hw_info.max_active_clusters = device.max_active_clusters;
      const size_t needed = Gemm::get_workspace_size(arguments);
      if (workspace_bytes < needed || (needed > 0 && workspace == nullptr))
        return accel_fail(kAccelInvalidArgument, error, error_capacity, "the workspace has %zu bytes at %p; this GEMM needs %zu",
                    workspace_bytes, workspace, needed);
      char problem[160];
      std::snprintf(problem, sizeof problem, "GEMM m=%lld n=%lld k=%lld (lda=%lld ldb=%lld ldc=%lld ldd=%lld)",
                    ll(call.m), ll(call.n), ll(call.k), ll(call.lda), ll(call.ldb), ll(call.ldc), ll(call.ldd));
      Gemm gemm;
      return launch(gemm, arguments, workspace, stream, problem, error, error_capacity);
  });
}
)cu";

// Checks of the operands the instance reads, in the rendered make_arguments().
std::string gemm_operand_checks(const GemmInstance& instance) {
  const EpilogueSpec& e = instance.epilogue;
  const bool a_row = instance.layout_a == Layout::row_major;
  const bool b_col = instance.layout_b == Layout::column_major;
  const bool c_row = instance.layout_c == Layout::row_major;
  const std::string_view c_extent = c_row ? "args.n" : "args.m";
  std::string out;
  const auto check = [&out](std::string_view name, std::string_view pointer, std::string_view ld,
                            std::string_view extent, std::string_view alignment) {
    out += fmt::format(
        "    if ((result = check_matrix(\"{0}\", {1}, \"{2}\", args.{2}, {3}, {4}, error, capacity)) != kAccelOk)\n"
        "      return result;\n",
        name, pointer, ld, extent, alignment);
  };
  check(a_row ? "A (m x k, row-major)" : "A (m x k, column-major)", "args.a", "lda", a_row ? "args.k" : "args.m",
        "AlignmentA");
  check(b_col ? "B (k x n, column-major)" : "B (k x n, row-major)", "args.b", "ldb", b_col ? "args.k" : "args.n",
        "AlignmentB");
  check("D", "args.d", "ldd", c_extent, "AlignmentD");
  if (e.source) {
    out +=
        "    // With beta 0 the kernel never reads C; an absent C then takes D's place so that its TMA descriptor\n"
        "    // still describes real memory.\n"
        "    if (args.c == nullptr && args.beta == 0.0f) {\n"
        "      args.c = args.d;\n"
        "      args.ldc = args.ldd;\n"
        "    }\n";
    check("C", "args.c", "ldc", c_extent, "AlignmentC");
  }
  if (e.residual) check("residual", "args.residual", "ldd", c_extent, "AlignmentD");
  const auto vector = [&out](std::string_view name, std::string_view pointer, std::string_view type) {
    out += fmt::format(
        "    if ({1} == nullptr) return accel_fail(kAccelInvalidArgument, error, capacity, \"{0} is null\");\n"
        "    if (reinterpret_cast<uintptr_t>({1}) % alignof({2}) != 0)\n"
        "      return accel_fail(kAccelInvalidArgument, error, capacity, \"{0} is not aligned to its element\");\n",
        name, pointer, type);
  };
  if (e.bias == BiasKind::per_row) vector("bias (m elements)", "args.bias", "ElementD");
  if (e.bias == BiasKind::per_column) vector("bias (n elements)", "args.bias", "ElementD");
  if (e.row_scale) vector("row_scale (m floats)", "args.row_scale", "float");
  if (e.col_scale) vector("col_scale (n floats)", "args.col_scale", "float");
  return out;
}

}  // namespace

Status validate_gemm(const GemmInstance& instance) {
  ACCEL_RETURN_IF_ERROR(validate_types("gemm", instance.arch, instance.input, instance.output, instance.layout_a,
                                       instance.layout_b, instance.tile));
  const EpilogueSpec& e = instance.epilogue;
  int row_vectors = 0;
  if (e.bias == BiasKind::per_column) row_vectors += instance.tile.tile_n * static_cast<int>(size_of(instance.output));
  if (e.col_scale) row_vectors += instance.tile.tile_n * 4;
  const int epilogue =
      epilogue_smem_bytes(instance.tile, instance.output,
                          EpilogueSmem{.source = e.source, .residual = e.residual, .row_vectors_bytes = row_vectors});
  return validate_tile("gemm", instance.input, instance.tile, epilogue, 0);
}

std::string render_gemm(const GemmInstance& instance, std::string_view identity) {
  const EpilogueSpec& e = instance.epilogue;
  const bool c_row = instance.layout_c == Layout::row_major;
  std::string out = module_prologue(identity);
  out += gemm_common_head();
  out += "// ---- The instance ----------------------------------------------------------------------------------\n";
  out += fmt::format("// {}\n", identity);
  out += "namespace accel_module {\nusing namespace cute;\n\n";
  out += common_aliases(instance.input, instance.output, instance.layout_a, instance.layout_b, instance.layout_c,
                        e.source, instance.tile, false);
  out += "\n";
  const RenderedEpilogue epilogue = render_gemm_epilogue(instance);
  out += epilogue.aliases;
  out += "\n";
  out += kernel_aliases(false);
  out += "\n}  // namespace accel_module\n\n";
  out += "// ---- Entry points ----------------------------------------------------------------------------------\n";
  out += substitute(
      kGemmEntryPoints,
      {
          {"EPILOGUE_ARGUMENTS", epilogue.arguments_body},
          {"OPERAND_CHECKS", gemm_operand_checks(instance)},
          {"STRIDE_A", stride_expression(instance.layout_a == Layout::column_major, "args.lda",
                                         instance.layout_a == Layout::row_major ? "args.m" : "args.k")},
          {"STRIDE_B", stride_expression(instance.layout_b == Layout::row_major, "args.ldb",
                                         instance.layout_b == Layout::column_major ? "args.n" : "args.k")},
          {"STRIDE_C", stride_expression(!c_row, e.source ? "args.ldc" : "args.ldd", c_row ? "args.m" : "args.n")},
          {"STRIDE_D", stride_expression(!c_row, "args.ldd", c_row ? "args.m" : "args.n")},
          {"C_POINTER", e.source ? "static_cast<ElementC const*>(args.c)" : "nullptr"},
      });
  return out;
}

}  // namespace accel::jit::cutlass
