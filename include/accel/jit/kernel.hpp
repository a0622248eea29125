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

/// What NVRTC produces for a Program: a cubin for the device's architecture, or PTX.
enum class CodeKind : std::uint8_t { cubin, ptx };

/// A header the program's source includes, given in memory.
struct Header {
  std::string name;      ///< as the source includes it: `#include "name"`
  std::string contents;  ///< the header's text
};

/// CUDA C++ source compiled at run time, with its headers and NVRTC options; what is compiled is cached by all of them.
struct Program {
  std::string name;                           ///< for logs and errors, e.g. "scale.cu"
  std::string source;                         ///< the CUDA C++ source
  std::vector<Header> headers;                ///< in-memory headers; their contents are part of the cache key
  std::vector<std::string> options;           ///< NVRTC options, e.g. "-DTILE=64", "--use_fast_math"; not the arch
  std::vector<std::string> name_expressions;  ///< templates to instantiate, e.g. "axpy<float>"
  CodeKind code = CodeKind::cubin;            ///< PTX is JIT-compiled again by the driver when loaded
};

}  // namespace accel::jit

namespace accel {

/// A CUDA grid or block extent.
struct Dim3 {
  std::uint32_t x = 1;  ///< extent along x
  std::uint32_t y = 1;  ///< extent along y
  std::uint32_t z = 1;  ///< extent along z
};

/// How a kernel uses a buffer argument, which orders the launch against other requests on the buffer.
enum class ArgAccess : std::uint8_t { read, write, read_write };

/// One argument of a LaunchKernel: a buffer (its device address plus an offset) or a scalar passed by value.
struct KernelArg {
  /// What the argument is: a buffer, or a scalar of that type.
  enum class Kind : std::uint8_t { buffer, i32, u32, i64, u64, f32, f64 };

  Kind kind = Kind::i32;               ///< buffer, or the scalar's type
  BufferHandle buffer;                 ///< Kind::buffer
  std::uint64_t offset = 0;            ///< Kind::buffer: elements from the buffer's start
  ArgAccess access = ArgAccess::read;  ///< Kind::buffer: how the kernel uses the buffer
  std::uint64_t bits = 0;              ///< scalars: the value's bytes, little-endian

  /// A buffer the kernel reads.
  static KernelArg in(const BufferHandle& buffer, std::uint64_t offset = 0) {
    return {.kind = Kind::buffer, .buffer = buffer, .offset = offset, .access = ArgAccess::read};
  }
  /// A buffer the kernel writes.
  static KernelArg out(const BufferHandle& buffer, std::uint64_t offset = 0) {
    return {.kind = Kind::buffer, .buffer = buffer, .offset = offset, .access = ArgAccess::write};
  }
  /// A buffer the kernel reads and writes.
  static KernelArg inout(const BufferHandle& buffer, std::uint64_t offset = 0) {
    return {.kind = Kind::buffer, .buffer = buffer, .offset = offset, .access = ArgAccess::read_write};
  }
  /// An i32 scalar.
  static KernelArg of(std::int32_t value);
  /// A u32 scalar.
  static KernelArg of(std::uint32_t value);
  /// An i64 scalar.
  static KernelArg of(std::int64_t value);
  /// A u64 scalar.
  static KernelArg of(std::uint64_t value);
  /// An f32 scalar.
  static KernelArg of(float value);
  /// An f64 scalar.
  static KernelArg of(double value);

  [[nodiscard]] std::size_t size() const noexcept;  ///< bytes the kernel parameter takes
};

/// Launches a kernel of a run-time compiled program (compiled, or loaded from the cache, on first use).
struct LaunchKernel {
  static constexpr const char* kName = "LaunchKernel";
  using Response = Done;

  std::shared_ptr<const jit::Program> program;  ///< the program holding the kernel
  std::string kernel;                           ///< a name expression of the program, or an extern "C" kernel's name
  Dim3 grid;                                    ///< blocks in the grid
  Dim3 block;                                   ///< threads in a block
  std::uint32_t shared_memory_bytes = 0;        ///< dynamic shared memory
  std::vector<KernelArg> args;                  ///< the kernel's arguments, in its parameters' order
};

}  // namespace accel
