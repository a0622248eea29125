// The JIT kernels of one CUDA context: NVRTC programs loaded as CUDA libraries, and CUTLASS modules (shared
// objects nvcc built from one instantiation, see jit/cutlass/module_abi.hpp) loaded with dlopen. Binaries come
// from the BinaryCache (memory, then disk, else compiled on its background threads); what is loaded belongs
// to this context, so a rebuilt context (a new isolated worker) loads again from the cache and compiles nothing.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/jit/kernel.hpp"
#include "jit/binary_cache.hpp"
#include "jit/cutlass/render.hpp"
#include "jit/nvcc_compiler.hpp"
#include "jit/nvrtc_compiler.hpp"

namespace accel::jit {

struct LoadedKernel {
  cudaKernel_t kernel = nullptr;
  std::vector<std::size_t> parameter_sizes;
};

// One NVRTC program loaded into the context; its kernels are looked up on first use.
class LoadedProgram {
 public:
  LoadedProgram(cudaLibrary_t library, CompiledProgram compiled) : library_(library), compiled_(std::move(compiled)) {}
  ~LoadedProgram();
  LoadedProgram(const LoadedProgram&) = delete;
  LoadedProgram& operator=(const LoadedProgram&) = delete;

  // `name`: a name expression of the program or an extern "C" kernel name. invalid_argument naming the program.
  [[nodiscard]] Result<const LoadedKernel*> kernel(std::string_view name, std::string_view program_name);

 private:
  cudaLibrary_t library_;
  CompiledProgram compiled_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<LoadedKernel>> kernels_;
};

// A CUTLASS module loaded into this process.
class CutlassModule {
 public:
  // Loads the shared object from memory (a memfd, kept open while loaded), checks its ABI version, struct layout
  // and identity against what the runtime expects.
  static Result<std::shared_ptr<const CutlassModule>> load(const BinaryBytes& bytes, std::string_view identity);
  ~CutlassModule();
  CutlassModule(const CutlassModule&) = delete;
  CutlassModule& operator=(const CutlassModule&) = delete;

  [[nodiscard]] Result<std::size_t> workspace_bytes(const void* args) const;
  // Enqueues the kernel on `stream`. CUDA errors come back as Code::internal with the module's message; the
  // caller checks for a sticky error.
  [[nodiscard]] Status run(const void* args, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) const;

 private:
  CutlassModule() = default;
  using WorkspaceFn = int (*)(const void*, std::size_t*, char*, std::size_t);
  using RunFn = int (*)(const void*, void*, std::size_t, cudaStream_t, char*, std::size_t);
  int fd_ = -1;
  void* handle_ = nullptr;
  std::string identity_;
  WorkspaceFn workspace_ = nullptr;
  RunFn run_ = nullptr;
};

struct JitOptions {
  bool persistent = true;
  std::string directory;  // empty: DiskStore's default for "jit-kernels"
  std::uint64_t directory_bytes = 2ull << 30;
  int compile_threads = 4;
  int compute_capability = 90;
};

class JitKernels {
 public:
  static Result<std::unique_ptr<JitKernels>> open(const JitOptions& options);

  // The program, compiled (or found in the cache) and loaded into this context. Repeated launches of the same
  // Program object find it by address; an equal Program built anew finds it by its key.
  [[nodiscard]] Result<std::shared_ptr<LoadedProgram>> program(const std::shared_ptr<const Program>& program);

  // The module of `instance`. If it is not compiled yet: with `wait`, waits for the compile, calling
  // `keep_alive` every 100 ms meanwhile; without, starts the compile in the background and returns null.
  [[nodiscard]] Result<std::shared_ptr<const CutlassModule>> cutlass_module(const cutlass::Instance& instance,
                                                                            bool wait,
                                                                            const std::function<void()>& keep_alive);

  void count_fallback() noexcept { fallbacks_.fetch_add(1, std::memory_order_relaxed); }
  [[nodiscard]] JitStats stats() const;

 private:
  explicit JitKernels(const JitOptions& options, std::unique_ptr<BinaryCache> cache)
      : options_(options), cache_(std::move(cache)) {}
  Result<const NvccToolchain*> toolchain();
  Result<std::shared_ptr<LoadedProgram>> load_program(const BinaryPtr& binary);

  const JitOptions options_;
  std::unique_ptr<BinaryCache> cache_;

  std::mutex mutex_;
  struct ProgramEntry {
    std::weak_ptr<const Program> owner;
    std::shared_ptr<LoadedProgram> loaded;
  };
  std::unordered_map<const Program*, ProgramEntry> by_address_;  // expired owners swept past 256 entries
  std::unordered_map<std::string, std::shared_ptr<LoadedProgram>> by_key_;
  std::unordered_map<std::string, std::shared_ptr<const CutlassModule>> modules_;  // by instance identity
  // Instances whose compile or load failed in this process: answered with the same error instead of compiling
  // again for tens of seconds (a new process tries again).
  std::unordered_map<std::string, Status> failed_modules_;
  std::unique_ptr<NvccToolchain> toolchain_;
  Status toolchain_error_;
  bool toolchain_looked_up_ = false;

  std::atomic<std::uint64_t> module_loads_{0};
  std::atomic<std::uint64_t> module_load_micros_{0};
  std::atomic<std::uint64_t> fallbacks_{0};
};

}  // namespace accel::jit
