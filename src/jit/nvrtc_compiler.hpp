// NVRTC: CUDA C++ source to a cubin (or PTX on request) for one compute capability, in-process. NVRTC needs no
// GPU, so this runs (and is tested) on machines without one.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "accel/core/result.hpp"
#include "accel/jit/kernel.hpp"
#include "jit/compiled_program.hpp"

namespace accel::jit {

// "NVRTC 13.0" as reported by nvrtcVersion of the library this process loads (operation/nvrtc_library.hpp), loading it
// if no compile has yet; "NVRTC unavailable" where it cannot be loaded, a key no compile can have stored a binary
// under.
[[nodiscard]] std::string nvrtc_version();

// Compiles `program` for `compute_capability` (major * 10 + minor; arch flag --gpu-architecture=sm_XY for
// cubin, compute_XY for PTX). Errors: invalid_argument with the compile log (and the program's name) when the
// source does not compile; invalid_argument when an option is one accel sets itself (the architecture);
// unavailable, naming the libnvrtc files tried, where the library cannot be loaded.
[[nodiscard]] Result<CompiledProgram> compile_with_nvrtc(const Program& program, int compute_capability);

// The cache key of a compile: everything that changes its result — source, every header's name and contents,
// options in order, name expressions, code kind, compute capability and nvrtc_version(). Canonical bytes.
[[nodiscard]] std::vector<std::byte> program_key(const Program& program, int compute_capability);

}  // namespace accel::jit
