#include "jit/cuda/jit_kernels.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "core/elapsed.hpp"
#include "jit/cutlass/module_abi.hpp"
#include "operation/cuda_status.hpp"

namespace accel::jit {
namespace {

constexpr std::size_t kAddressSweep = 256;

std::string as_key(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

std::vector<std::byte> cutlass_key(const NvccToolchain& toolchain, std::string_view source, int cc) {
  const std::string text = fmt::format("accel-cutlass-module/1\n{}\nsm{}\n{}", toolchain.identity, cc, source);
  const auto* bytes = reinterpret_cast<const std::byte*>(text.data());
  return std::vector<std::byte>(bytes, bytes + text.size());
}

Status module_status(int result, const char* message, std::string_view identity) {
  const std::string text = fmt::format("CUTLASS module [{}]: {}", identity, message);
  switch (result) {
    case kAccelOk: return Status();
    case kAccelInvalidArgument: return invalid_argument(text);
    case kAccelNotSupported: return not_supported(text);
    default: return internal_error(text);
  }
}

}  // namespace

// -- NVRTC programs ----------------------------------------------------------------------------------------

LoadedProgram::~LoadedProgram() {
  if (library_ != nullptr) cudaLibraryUnload(library_);
}

Result<const LoadedKernel*> LoadedProgram::kernel(std::string_view name, std::string_view program_name) {
  std::lock_guard lock(mutex_);
  std::string key(name);
  if (auto it = kernels_.find(key); it != kernels_.end()) return it->second.get();
  const std::string symbol(compiled_.symbol_of(name));
  auto loaded = std::make_unique<LoadedKernel>();
  if (cudaError_t error = cudaLibraryGetKernel(&loaded->kernel, library_, symbol.c_str()); error != cudaSuccess) {
    cudaGetLastError();
    return Status(Code::invalid_argument,
                  fmt::format("program {} has no kernel {} (looked up as {}); name a kernel declared extern \"C\" "
                              "or add it to the program's name_expressions",
                              program_name, name, symbol));
  }
  for (std::size_t index = 0;; ++index) {
    std::size_t offset = 0;
    std::size_t size = 0;
    if (cudaFuncGetParamInfo(reinterpret_cast<const void*>(loaded->kernel), index, &offset, &size) != cudaSuccess) {
      cudaGetLastError();  // past the last parameter: an error that is not sticky
      break;
    }
    loaded->parameter_sizes.push_back(size);
  }
  return kernels_.emplace(std::move(key), std::move(loaded)).first->second.get();
}

// -- CUTLASS modules ---------------------------------------------------------------------------------------

Result<std::shared_ptr<const CutlassModule>> CutlassModule::load(const BinaryBytes& bytes, std::string_view identity) {
  std::shared_ptr<CutlassModule> module(new CutlassModule());
  module->identity_ = std::string(identity);
  module->fd_ = memfd_create("accel-cutlass-module", MFD_CLOEXEC);
  if (module->fd_ < 0) return Status(Code::unavailable, "memfd_create for a CUTLASS module failed", Source::os, errno);
  for (std::size_t written = 0; written < bytes.size();) {
    const ssize_t n = ::write(module->fd_, bytes.data() + written, bytes.size() - written);
    if (n <= 0) return Status(Code::unavailable, "writing a CUTLASS module to its memfd failed", Source::os, errno);
    written += static_cast<std::size_t>(n);
  }
  // The fd stays open while the module is loaded, so that no other module can get the same /proc path (which
  // dlopen would take for the one already loaded).
  const std::string path = fmt::format("/proc/self/fd/{}", module->fd_);
  module->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (module->handle_ == nullptr) {
    return Status(Code::internal, fmt::format("CUTLASS module [{}] does not load: {}", identity, dlerror()));
  }
  auto symbol = [&](const char* name) { return dlsym(module->handle_, name); };
  auto abi = reinterpret_cast<int (*)()>(symbol("accel_module_abi"));
  auto module_identity = reinterpret_cast<const char* (*)()>(symbol("accel_module_identity"));
  auto layout = reinterpret_cast<void (*)(AccelAbiLayout*)>(symbol("accel_module_layout"));
  module->workspace_ = reinterpret_cast<WorkspaceFn>(symbol("accel_workspace_bytes"));
  module->run_ = reinterpret_cast<RunFn>(symbol("accel_run"));
  if (abi == nullptr || module_identity == nullptr || layout == nullptr || module->workspace_ == nullptr ||
      module->run_ == nullptr) {
    return Status(Code::internal, fmt::format("CUTLASS module [{}] lacks the accel entry points", identity));
  }
  if (abi() != kAccelCutlassAbiVersion) {
    return Status(Code::internal, fmt::format("CUTLASS module [{}] has ABI {}, this runtime {}", identity, abi(),
                                              int{kAccelCutlassAbiVersion}));
  }
  AccelAbiLayout seen{};
  layout(&seen);
  if (seen.gemm_args != sizeof(AccelGemmArgs) || seen.grouped_gemm_args != sizeof(AccelGroupedGemmArgs) ||
      seen.conv_args != sizeof(AccelConvArgs)) {
    return Status(Code::internal, fmt::format("CUTLASS module [{}] lays out its arguments differently", identity));
  }
  if (identity != module_identity()) {
    return Status(Code::internal, fmt::format("CUTLASS module [{}] was built for [{}]", identity, module_identity()));
  }
  return std::shared_ptr<const CutlassModule>(std::move(module));
}

CutlassModule::~CutlassModule() {
  if (handle_ != nullptr) dlclose(handle_);
  if (fd_ >= 0) ::close(fd_);
}

Result<std::size_t> CutlassModule::workspace_bytes(const void* args) const {
  std::size_t bytes = 0;
  char message[512] = {};
  ACCEL_RETURN_IF_ERROR(module_status(workspace_(args, &bytes, message, sizeof message), message, identity_));
  return bytes;
}

Status CutlassModule::run(const void* args, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) const {
  char message[512] = {};
  return module_status(run_(args, workspace, workspace_bytes, stream, message, sizeof message), message, identity_);
}

// -- the context's kernels ---------------------------------------------------------------------------------

Result<std::unique_ptr<JitKernels>> JitKernels::open(const JitOptions& options) {
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<BinaryCache> cache,
                         BinaryCache::open({.persistent = options.persistent,
                                            .directory = options.directory,
                                            .component = "jit-kernels",
                                            .max_bytes = options.directory_bytes,
                                            .compile_threads = options.compile_threads}));
  return std::unique_ptr<JitKernels>(new JitKernels(options, std::move(cache)));
}

Result<std::shared_ptr<LoadedProgram>> JitKernels::load_program(const BinaryPtr& binary) {
  ACCEL_ASSIGN_OR_RETURN(CompiledProgram compiled, decode_compiled_program(*binary));
  const auto start = std::chrono::steady_clock::now();
  cudaLibrary_t library = nullptr;
  if (cudaError_t error = cudaLibraryLoadData(&library, compiled.code.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
      error != cudaSuccess) {
    cudaGetLastError();
    return cuda_status(error, "cudaLibraryLoadData of an NVRTC program");
  }
  module_load_micros_.fetch_add(micros_since(start), std::memory_order_relaxed);
  module_loads_.fetch_add(1, std::memory_order_relaxed);
  return std::make_shared<LoadedProgram>(library, std::move(compiled));
}

Result<std::shared_ptr<LoadedProgram>> JitKernels::program(const std::shared_ptr<const Program>& program) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = by_address_.find(program.get()); it != by_address_.end()) {
      if (it->second.owner.lock() == program) return it->second.loaded;
      by_address_.erase(it);  // another Program now lives at this address
    }
  }
  const std::vector<std::byte> key = program_key(*program, options_.compute_capability);
  std::string id = as_key(key);
  std::shared_ptr<LoadedProgram> loaded;
  {
    std::lock_guard lock(mutex_);
    if (auto it = by_key_.find(id); it != by_key_.end()) loaded = it->second;
  }
  if (loaded == nullptr) {
    const int cc = options_.compute_capability;
    ACCEL_ASSIGN_OR_RETURN(const BinaryPtr binary, cache_->get(key, [program, cc]() -> Result<BinaryBytes> {
      ACCEL_ASSIGN_OR_RETURN(const CompiledProgram compiled, compile_with_nvrtc(*program, cc));
      return encode(compiled);
    }));
    ACCEL_ASSIGN_OR_RETURN(loaded, load_program(binary));
    std::lock_guard lock(mutex_);
    loaded = by_key_.emplace(std::move(id), loaded).first->second;  // a racing loader's copy wins; ours unloads
  }
  std::lock_guard lock(mutex_);
  // Entries of Programs that are gone hold their memory through the weak_ptr: sweep them now and then (an
  // isolated worker decodes a new Program for every launch).
  if (by_address_.size() >= kAddressSweep)
    std::erase_if(by_address_, [](const auto& e) { return e.second.owner.expired(); });
  by_address_[program.get()] = {program, loaded};
  return loaded;
}

Result<const NvccToolchain*> JitKernels::toolchain() {
  std::lock_guard lock(mutex_);
  if (!toolchain_looked_up_) {
    toolchain_looked_up_ = true;
    Result<NvccToolchain> found = NvccToolchain::locate();
    if (found.ok()) {
      toolchain_ = std::make_unique<NvccToolchain>(std::move(*found));
    } else {
      toolchain_error_ = found.status();
    }
  }
  if (toolchain_ == nullptr) return toolchain_error_;
  return toolchain_.get();
}

Result<std::shared_ptr<const CutlassModule>> JitKernels::cutlass_module(const cutlass::Instance& instance, bool wait,
                                                                        const std::function<void()>& keep_alive) {
  std::string identity = cutlass::identity(instance);
  {
    std::lock_guard lock(mutex_);
    if (auto it = modules_.find(identity); it != modules_.end()) return it->second;
    if (auto it = failed_modules_.find(identity); it != failed_modules_.end()) return it->second;
  }
  ACCEL_RETURN_IF_ERROR(cutlass::validate(instance));
  ACCEL_ASSIGN_OR_RETURN(const NvccToolchain* tools, toolchain());
  const std::string source = cutlass::render(instance);
  const int cc = options_.compute_capability;
  std::shared_future<Result<BinaryPtr>> binary =
      cache_->get_async(cutlass_key(*tools, source, cc), [tools, source, cc]() -> Result<BinaryBytes> {
        return compile_shared_object(*tools, source, {.compute_capability = cc});
      });
  while (binary.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    if (!wait) return std::shared_ptr<const CutlassModule>();
    if (keep_alive) keep_alive();
  }
  const auto remember_failure = [&](const Status& status) {
    std::lock_guard lock(mutex_);
    failed_modules_.emplace(identity, status);
    return status;
  };
  const Result<BinaryPtr> bytes = binary.get();
  if (!bytes.ok()) return remember_failure(bytes.status());
  const auto start = std::chrono::steady_clock::now();
  Result<std::shared_ptr<const CutlassModule>> loaded = CutlassModule::load(**bytes, identity);
  if (!loaded.ok()) return remember_failure(loaded.status());
  std::shared_ptr<const CutlassModule> module = std::move(*loaded);
  module_load_micros_.fetch_add(micros_since(start), std::memory_order_relaxed);
  module_loads_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  return modules_.emplace(std::move(identity), std::move(module)).first->second;
}

JitStats JitKernels::stats() const {
  const BinaryCacheStats cache = cache_->stats();
  return JitStats{.memory = cache.memory,
                  .compiles = cache.compiles,
                  .compile_failures = cache.compile_failures,
                  .compile_micros = cache.compile_micros,
                  .disk_loads = cache.disk_loads,
                  .disk_stores = cache.disk_stores,
                  .disk_rejected = cache.disk_rejected,
                  .module_loads = module_loads_.load(std::memory_order_relaxed),
                  .module_load_micros = module_load_micros_.load(std::memory_order_relaxed),
                  .library_fallbacks = fallbacks_.load(std::memory_order_relaxed)};
}

}  // namespace accel::jit
