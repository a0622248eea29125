/// @file
/// Run-time compiled CUDA kernels: a Program (CUDA C++ source) compiled by NVRTC for the device's architecture,
/// cached in memory and on disk (see docs/ARCHITECTURE.md, "JIT"), and launched with typed arguments through the
/// same async surface as every other request:
///
/// @code
///   auto program = std::make_shared<accel::jit::Program>(accel::jit::Program{
///       .name = "scale.cu",
///       .source = R"(extern "C" __global__ void scale(float* x, float a, unsigned long long n) {
///                      auto i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; })"});
///   accel::LaunchKernel launch{.program = program, .kernel = "scale", .grid = {(n + 255) / 256}, .block = {256},
///                              .args = {accel::KernelArg::inout(x), accel::KernelArg::of(2.0f),
///                                       accel::KernelArg::of(std::uint64_t{n})}};
///   device.ask(launch).wait();
/// @endcode
///
/// Buffer arguments pass the buffer's device address (plus an element offset) and say how the kernel uses the
/// buffer, which is what orders the launch after earlier requests and before later ones. Scalars are passed by
/// value with the exact size of their C++ type; the device checks each argument's size against the kernel's
/// parameter list before launching.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/result.hpp"

namespace accel::jit {

enum class CodeKind : std::uint8_t { cubin, ptx };

struct Header {
  std::string name;  ///< as the source includes it: `#include "name"`
  std::string contents;
};

struct Program {
  std::string name;  ///< for logs and errors, e.g. "scale.cu"
  std::string source;
  std::vector<Header> headers;                ///< in-memory headers; their contents are part of the cache key
  std::vector<std::string> options;           ///< NVRTC options, e.g. "-DTILE=64", "--use_fast_math"; not the arch
  std::vector<std::string> name_expressions;  ///< templates to instantiate, e.g. "axpy<float>"
  CodeKind code = CodeKind::cubin;            ///< PTX is JIT-compiled again by the driver when loaded
};

}  // namespace accel::jit

namespace accel {

struct Dim3 {
  std::uint32_t x = 1;
  std::uint32_t y = 1;
  std::uint32_t z = 1;
};

enum class ArgAccess : std::uint8_t { read, write, read_write };

struct KernelArg {
  enum class Kind : std::uint8_t { buffer, i32, u32, i64, u64, f32, f64 };

  Kind kind = Kind::i32;
  BufferHandle buffer;       ///< Kind::buffer
  std::uint64_t offset = 0;  ///< Kind::buffer: elements from the buffer's start
  ArgAccess access = ArgAccess::read;
  std::uint64_t bits = 0;  ///< scalars: the value's bytes, little-endian

  static KernelArg in(const BufferHandle& buffer, std::uint64_t offset = 0) {
    return {.kind = Kind::buffer, .buffer = buffer, .offset = offset, .access = ArgAccess::read};
  }
  static KernelArg out(const BufferHandle& buffer, std::uint64_t offset = 0) {
    return {.kind = Kind::buffer, .buffer = buffer, .offset = offset, .access = ArgAccess::write};
  }
  static KernelArg inout(const BufferHandle& buffer, std::uint64_t offset = 0) {
    return {.kind = Kind::buffer, .buffer = buffer, .offset = offset, .access = ArgAccess::read_write};
  }
  static KernelArg of(std::int32_t value);
  static KernelArg of(std::uint32_t value);
  static KernelArg of(std::int64_t value);
  static KernelArg of(std::uint64_t value);
  static KernelArg of(float value);
  static KernelArg of(double value);

  [[nodiscard]] std::size_t size() const noexcept;  ///< bytes the kernel parameter takes
};

struct LaunchKernel {
  static constexpr const char* kName = "LaunchKernel";
  using Response = Done;

  std::shared_ptr<const jit::Program> program;
  std::string kernel;  ///< a name expression of the program, or an extern "C" kernel's name
  Dim3 grid;
  Dim3 block;
  std::uint32_t shared_memory_bytes = 0;  ///< dynamic shared memory
  std::vector<KernelArg> args;
};

}  // namespace accel
