// Instance dispatch, identities and the prologue every rendered CUTLASS module starts with.
#include "jit/cutlass/render.hpp"

#include <fmt/format.h>

#include <string>
#include <type_traits>

#include "jit/cutlass/module_abi.hpp"
#include "jit/cutlass/render_parts.hpp"

namespace accel::jit::cutlass {
namespace {

std::string_view short_name(Layout layout) noexcept { return layout == Layout::row_major ? "row" : "col"; }

std::string tile_text(const TileConfig& tile) {
  return fmt::format("tile={}x{}x{} cluster={}x{} {}", tile.tile_m, tile.tile_n, tile.tile_k, tile.cluster_m,
                     tile.cluster_n, to_string(tile.schedule));
}

std::string epilogue_text(const EpilogueSpec& epilogue) {
  std::string text(to_string(epilogue.activation));
  if (epilogue.bias == BiasKind::per_row) text += ",bias_row";
  if (epilogue.bias == BiasKind::per_column) text += ",bias_col";
  if (epilogue.row_scale) text += ",row_scale";
  if (epilogue.col_scale) text += ",col_scale";
  if (epilogue.residual) text += ",residual";
  if (epilogue.source) text += ",source";
  return text;
}

std::string gemm_operands(int arch, DType input, DType output, Layout a, Layout b, Layout c) {
  return fmt::format("sm{} a={}:{} b={}:{} c={}:{}", arch, to_string(input), short_name(a), to_string(input),
                     short_name(b), to_string(output), short_name(c));
}

// `text` as a C++ string literal: printable ASCII as is (quote and backslash escaped), every other byte as a
// three-digit octal escape, which (unlike \x) cannot swallow the characters after it.
std::string string_literal(std::string_view text) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (byte >= 0x20 && byte < 0x7f && ch != '?') {  // '?' would risk a trigraph
      out += ch;
    } else {
      out += fmt::format("\\{:03o}", byte);
    }
  }
  out += '"';
  return out;
}

}  // namespace

std::string_view cutlass_element(DType dtype) {
  switch (dtype) {
    case DType::f16: return "cutlass::half_t";
    case DType::bf16: return "cutlass::bfloat16_t";
    case DType::fp8_e4m3: return "cutlass::float_e4m3_t";
    case DType::f32: return "float";
    case DType::f64: return "double";
    case DType::i8: return "int8_t";
    case DType::i32: return "int32_t";
    case DType::u8: return "uint8_t";
    case DType::u32: return "uint32_t";
    case DType::i64: return "int64_t";
    case DType::u64: return "uint64_t";
    case DType::c64: return "cutlass::complex<float>";
    case DType::c128: return "cutlass::complex<double>";
    case DType::c32: return "cutlass::complex<cutlass::half_t>";
    case DType::fp8_e5m2: return "cutlass::float_e5m2_t";
  }
  return "void";
}

std::string_view to_string(Layout layout) noexcept {
  switch (layout) {
    case Layout::row_major: return "row_major";
    case Layout::column_major: return "column_major";
  }
  return "unknown_layout";
}

std::string_view to_string(Schedule schedule) noexcept {
  switch (schedule) {
    case Schedule::tma_cooperative: return "tma_cooperative";
    case Schedule::tma_pingpong: return "tma_pingpong";
    case Schedule::tma_warp_specialized: return "tma_warp_specialized";
  }
  return "unknown_schedule";
}

std::string_view to_string(ConvDirection direction) noexcept {
  switch (direction) {
    case ConvDirection::fprop: return "fprop";
    case ConvDirection::dgrad: return "dgrad";
    case ConvDirection::wgrad: return "wgrad";
  }
  return "unknown_direction";
}

Status validate(const Instance& instance) {
  return std::visit(
      [](const auto& family) -> Status {
        using T = std::decay_t<decltype(family)>;
        if constexpr (std::is_same_v<T, GemmInstance>)
          return validate_gemm(family);
        else if constexpr (std::is_same_v<T, GroupedGemmInstance>)
          return validate_grouped_gemm(family);
        else
          return validate_conv(family);
      },
      instance);
}

std::string identity(const Instance& instance) {
  return std::visit(
      [](const auto& family) -> std::string {
        using T = std::decay_t<decltype(family)>;
        if constexpr (std::is_same_v<T, GemmInstance>) {
          return fmt::format("gemm {} {} epi={}",
                             gemm_operands(family.arch, family.input, family.output, family.layout_a, family.layout_b,
                                           family.layout_c),
                             tile_text(family.tile), epilogue_text(family.epilogue));
        } else if constexpr (std::is_same_v<T, GroupedGemmInstance>) {
          return fmt::format("grouped_gemm {} {} epi=linear_combination",
                             gemm_operands(family.arch, family.input, family.output, family.layout_a, family.layout_b,
                                           family.layout_c),
                             tile_text(family.tile));
        } else {
          return fmt::format("conv {} sm{} {} {}", to_string(family.direction), family.arch, to_string(family.element),
                             tile_text(family.tile));
        }
      },
      instance);
}

std::string render(const Instance& instance) {
  const std::string id = identity(instance);
  return std::visit(
      [&id](const auto& family) -> std::string {
        using T = std::decay_t<decltype(family)>;
        if constexpr (std::is_same_v<T, GemmInstance>)
          return render_gemm(family, id);
        else if constexpr (std::is_same_v<T, GroupedGemmInstance>)
          return render_grouped_gemm(family, id);
        else
          return render_conv(family, id);
      },
      instance);
}

std::string module_prologue(std::string_view identity) {
  std::string out;
  out += "// A CUTLASS module of accel, rendered from the instance\n";
  out += fmt::format("//   {}\n", identity);
  out += "// nvcc builds it into a shared object that the runtime loads; the interface is module_abi.hpp's.\n";
  out += "#include <cuda_runtime.h>\n#include <cstddef>\n#include <cstdint>\n\n";
  out += "// The interface structs, the same text as the runtime's (module_abi.hpp).\n";
  out += kCutlassModuleAbiSource;
  out += "\n\n";
  // Declared first with default visibility: the module is built with -fvisibility=hidden, and a definition
  // inherits the visibility of its first declaration, so these five are all the module exports.
  out +=
      "#define ACCEL_MODULE_EXPORT __attribute__((visibility(\"default\")))\n"
      "extern \"C\" {\n"
      "ACCEL_MODULE_EXPORT int accel_module_abi(void);\n"
      "ACCEL_MODULE_EXPORT const char* accel_module_identity(void);\n"
      "ACCEL_MODULE_EXPORT void accel_module_layout(AccelAbiLayout* out);\n"
      "ACCEL_MODULE_EXPORT int accel_workspace_bytes(const void* args, size_t* bytes, char* error,\n"
      "                                              size_t error_capacity);\n"
      "ACCEL_MODULE_EXPORT int accel_run(const void* args, void* workspace, size_t workspace_bytes,\n"
      "                                  cudaStream_t stream, char* error, size_t error_capacity);\n"
      "}\n\n";
  out +=
      "#include <cstdarg>\n#include <cstdio>\n#include <exception>\n\n"
      "// Writes a printf-style message into the caller's buffer (when there is one) and returns `result`.\n"
      "__attribute__((format(printf, 4, 5))) static int accel_fail(int result, char* error, size_t capacity,\n"
      "                                                            const char* format, ...) {\n"
      "  if (error != nullptr && capacity > 0) {\n"
      "    va_list list;\n"
      "    va_start(list, format);\n"
      "    std::vsnprintf(error, capacity, format, list);\n"
      "    va_end(list);\n"
      "  }\n"
      "  return result;\n"
      "}\n\n"
      "// Runs an entry point's body; an exception becomes kAccelInternal instead of crossing the C interface.\n"
      "template <class Body>\n"
      "static int accel_guarded(const char* entry, char* error, size_t capacity, Body body) {\n"
      "  try {\n"
      "    return body();\n"
      "  } catch (const std::exception& e) {\n"
      "    return accel_fail(kAccelInternal, error, capacity, \"%s: %s\", entry, e.what());\n"
      "  } catch (...) {\n"
      "    return accel_fail(kAccelInternal, error, capacity, \"%s: unknown exception\", entry);\n"
      "  }\n"
      "}\n\n";
  out += "extern \"C\" int accel_module_abi(void) { return kAccelCutlassAbiVersion; }\n\n";
  out += fmt::format("extern \"C\" const char* accel_module_identity(void) {{\n  return {};\n}}\n\n",
                     string_literal(identity));
  out +=
      "extern \"C\" void accel_module_layout(AccelAbiLayout* out) {\n"
      "  out->gemm_args = sizeof(AccelGemmArgs);\n"
      "  out->grouped_gemm_args = sizeof(AccelGroupedGemmArgs);\n"
      "  out->conv_args = sizeof(AccelConvArgs);\n"
      "}\n\n";
  return out;
}

}  // namespace accel::jit::cutlass
