// What a compile produced, as the JIT keeps it: the code, the lowered name of each name expression, and the
// compiler's log; and its bytes for the binary cache. Decoding reads bytes from the disk tier, so it trusts nothing
// (fuzz/compiled_program_fuzzer.cpp). Needs no CUDA.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "accel/core/result.hpp"
#include "accel/jit/kernel.hpp"

namespace accel::jit {

// What NVRTC produced: the code, the lowered (mangled) name of each of the program's name expressions, and
// the compiler's log (warnings).
struct CompiledProgram {
  CodeKind kind = CodeKind::cubin;
  std::vector<std::byte> code;
  std::vector<std::pair<std::string, std::string>> lowered_names;  // name expression -> lowered name
  std::string log;

  // The lowered name of `name`: a name expression's lowered name, else `name` itself (an extern "C" kernel).
  [[nodiscard]] std::string_view symbol_of(std::string_view name) const noexcept;
};

// A CompiledProgram as bytes (for the BinaryCache) and back; decode refuses damaged input (Code::internal, "damaged
// compiled program").
[[nodiscard]] std::vector<std::byte> encode(const CompiledProgram& compiled);
[[nodiscard]] Result<CompiledProgram> decode_compiled_program(std::span<const std::byte> bytes);

}  // namespace accel::jit
