#include "jit/cuda/jit_kernels.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include "jit/cutlass/module_abi.hpp"
#include "operation/cuda_status.hpp"

namespace accel::jit {
namespace {

constexpr std::size_t kAddressBound = 256;
constexpr std::size_t kFailureBound = 256;

std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
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

Result<const LoadedKernel*> LoadedProgram::kernel(std::string_view name, std::string_view program_name) const {
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
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<BinaryCache> binaries,
                         BinaryCache::open({.persistent = options.persistent,
                                            .directory = options.directory,
                                            .component = "jit-kernels",
                                            .max_bytes = options.directory_bytes,
                                            .compile_threads = options.compile_threads}));
  return std::unique_ptr<JitKernels>(new JitKernels(options, std::move(binaries)));
}

JitKernels::JitKernels(const JitOptions& options, std::unique_ptr<BinaryCache> binaries)
    : options_(options),
      binaries_(std::move(binaries)),
      by_address_({.name = "jit-program-addresses", .max_entries = kAddressBound}),
      programs_({.name = "jit-programs", .max_entries = std::max<std::size_t>(options.program_capacity, 1)}),
      modules_({.name = "jit-modules", .max_entries = std::max<std::size_t>(options.module_capacity, 1)}),
      failed_modules_({.name = "jit-module-failures", .max_entries = kFailureBound}) {}

Result<std::shared_ptr<const LoadedProgram>> JitKernels::load_program(const BinaryPtr& binary) {
  ACCEL_ASSIGN_OR_RETURN(CompiledProgram compiled, decode_compiled_program(*binary));
  cudaLibrary_t library = nullptr;
  if (cudaError_t error = cudaLibraryLoadData(&library, compiled.code.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
      error != cudaSuccess) {
    cudaGetLastError();
    return cuda_status(error, "cudaLibraryLoadData of an NVRTC program");
  }
  return std::make_shared<const LoadedProgram>(library, std::move(compiled));
}

Result<std::shared_ptr<const LoadedProgram>> JitKernels::program(const std::shared_ptr<const Program>& program) {
  const Program* const address = program.get();
  const std::span<const std::byte> at(reinterpret_cast<const std::byte*>(&address), sizeof address);
  if (std::shared_ptr<const ProgramAtAddress> found = by_address_.peek(at)) {
    if (found->owner.lock() == program) return found->loaded;
    by_address_.erase(at);  // another Program now lives at this address
  }
  const std::vector<std::byte> key = program_key(*program, options_.compute_capability);
  // The build runs on this thread, whose device is the context's: loading into the context needs it.
  ACCEL_ASSIGN_OR_RETURN(
      std::shared_ptr<const LoadedProgram> loaded,
      programs_.get(key, [&]() -> Result<std::shared_ptr<const LoadedProgram>> {
        const int cc = options_.compute_capability;
        ACCEL_ASSIGN_OR_RETURN(const BinaryPtr binary, binaries_->get(key, [program, cc]() -> Result<BinaryBytes> {
          ACCEL_ASSIGN_OR_RETURN(const CompiledProgram compiled, compile_with_nvrtc(*program, cc));
          return encode(compiled);
        }));
        return load_program(binary);
      }));
  by_address_.put(at, std::make_shared<const ProgramAtAddress>(ProgramAtAddress{program, loaded}));
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
  const std::string identity = cutlass::identity(instance);
  const std::span<const std::byte> key = bytes_of(identity);
  if (std::shared_ptr<const CutlassModule> found = modules_.peek(key)) return found;
  if (std::shared_ptr<const Status> failed = failed_modules_.peek(key)) return *failed;
  ACCEL_RETURN_IF_ERROR(cutlass::validate(instance));
  ACCEL_ASSIGN_OR_RETURN(const NvccToolchain* tools, toolchain());
  const std::string source = cutlass::render(instance);
  const int cc = options_.compute_capability;
  const std::vector<std::byte> binary_key = cutlass_key(*tools, source, cc);
  const CompileFunction compile = [tools, source, cc]() -> Result<BinaryBytes> {
    return compile_shared_object(*tools, source, {.compute_capability = cc});
  };
  std::optional<Result<BinaryPtr>> binary;
  if (!wait) {
    binary = binaries_->get_if_ready(binary_key, compile);
    if (!binary) return std::shared_ptr<const CutlassModule>();
  } else {
    std::shared_future<Result<BinaryPtr>> compiling = binaries_->get_async(binary_key, compile);
    while (compiling.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
      if (keep_alive) keep_alive();
    }
    binary = compiling.get();
  }
  const auto remember_failure = [&](const Status& status) {
    failed_modules_.put(key, std::make_shared<const Status>(status));
    return status;
  };
  if (!binary->ok()) return remember_failure(binary->status());
  Result<std::shared_ptr<const CutlassModule>> loaded =
      modules_.get(key, [&] { return CutlassModule::load(***binary, identity); });
  if (!loaded.ok()) return remember_failure(loaded.status());
  return loaded;
}

std::vector<CacheStats> JitKernels::stats() const { return {binaries_->stats(), programs_.stats(), modules_.stats()}; }

}  // namespace accel::jit
