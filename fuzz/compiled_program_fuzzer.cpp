// jit::decode_compiled_program: a compiled NVRTC program as the binary cache's disk tier gives it back, before its
// code reaches cudaLibraryLoadData. A decoded program must encode to the very bytes it came from (the layout has one
// encoding per program), and its names must be looked up without reading outside what was decoded.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <span>
#include <string_view>
#include <vector>

#include "jit/compiled_program.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  accel::Result<accel::jit::CompiledProgram> decoded = accel::jit::decode_compiled_program(bytes);
  if (!decoded.ok()) return 0;
  const std::vector<std::byte> again = accel::jit::encode(*decoded);
  if (again.size() != bytes.size() || !std::equal(again.begin(), again.end(), bytes.begin())) std::abort();
  // A name expression given twice resolves to its first lowered name.
  std::set<std::string_view> seen;
  for (const auto& [expression, lowered] : decoded->lowered_names) {
    if (seen.insert(expression).second && decoded->symbol_of(expression) != lowered) std::abort();
  }
  return 0;
}
