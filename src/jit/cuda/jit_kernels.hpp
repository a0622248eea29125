// The JIT kernels of one CUDA context: NVRTC programs loaded as CUDA libraries, and CUTLASS modules (shared
// objects nvcc built from one instantiation, see jit/cutlass/module_abi.hpp) loaded with dlopen. Binaries come
// from the BinaryCache (memory, then disk, else compiled on its background threads); what is loaded belongs
// to this context, so a rebuilt context (a new isolated worker) loads again from the cache and compiles nothing.
//
// What is loaded is kept in cache::Caches bounded by entries ("jit-programs", "jit-modules"). An evicted program
// or module is unloaded when its last holder lets go of it; the bounds sit far above any working set, since
// the launches that used it hold it only while enqueuing, not until their kernels finish.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "accel/core/cache_stats.hpp"
#include "accel/core/result.hpp"
#include "accel/jit/kernel.hpp"
#include "cache/cache.hpp"
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
  // Const, as programs are shared through the cache: the kernels looked up so far are a memo of the library.
  [[nodiscard]] Result<const LoadedKernel*> kernel(std::string_view name, std::string_view program_name) const;

 private:
  cudaLibrary_t library_;
  CompiledProgram compiled_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, std::unique_ptr<LoadedKernel>> kernels_;
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
  std::size_t program_capacity = 4096;  // NVRTC programs loaded at once (LRU)
  std::size_t module_capacity = 256;    // CUTLASS modules loaded at once (LRU)
};

class JitKernels {
 public:
  static Result<std::unique_ptr<JitKernels>> open(const JitOptions& options);

  // The program, compiled (or found in the cache) and loaded into this context. Repeated launches of the same
  // Program object find it by address; an equal Program built anew finds it by its key.
  [[nodiscard]] Result<std::shared_ptr<const LoadedProgram>> program(const std::shared_ptr<const Program>& program);

  // The module of `instance`. If it is not compiled yet: with `wait`, waits for the compile, calling
  // `keep_alive` every 100 ms meanwhile; without, starts the compile in the background and returns null
  // (counted as not_ready of "jit-binaries").
  [[nodiscard]] Result<std::shared_ptr<const CutlassModule>> cutlass_module(const cutlass::Instance& instance,
                                                                            bool wait,
                                                                            const std::function<void()>& keep_alive);

  // "jit-binaries" (compiles, the disk tier), "jit-programs" and "jit-modules" (loads into this context).
  [[nodiscard]] std::vector<CacheStats> stats() const;

 private:
  // A launch's shortcut to its program: by the Program object's address, valid while that object lives.
  struct ProgramAtAddress {
    std::weak_ptr<const Program> owner;
    std::shared_ptr<const LoadedProgram> loaded;
  };

  JitKernels(const JitOptions& options, std::unique_ptr<BinaryCache> binaries);
  Result<const NvccToolchain*> toolchain();
  Result<std::shared_ptr<const LoadedProgram>> load_program(const BinaryPtr& binary);

  const JitOptions options_;
  std::unique_ptr<BinaryCache> binaries_;
  // Bounded, so entries of Programs that are gone (an isolated worker decodes a new Program per launch) age out
  // and the memory their weak_ptrs hold goes with them.
  cache::Cache<ProgramAtAddress> by_address_;
  cache::Cache<LoadedProgram> programs_;  // by program key
  cache::Cache<CutlassModule> modules_;   // by instance identity
  // Instances whose compile or load failed in this process: answered with the same error instead of compiling
  // again for tens of seconds (a new process tries again).
  cache::Cache<Status> failed_modules_;

  std::mutex mutex_;  // the toolchain lookup
  std::unique_ptr<NvccToolchain> toolchain_;
  Status toolchain_error_;
  bool toolchain_looked_up_ = false;
};

}  // namespace accel::jit
