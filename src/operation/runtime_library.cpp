#include "operation/runtime_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

namespace accel {

Status open_runtime_library(std::string_view library, std::span<const std::string> candidates,
                            const std::function<Status(void* handle)>& resolve) {
  std::string tried;
  for (const std::string& candidate : candidates) {
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = dlerror();
      tried += fmt::format("; {}", error != nullptr ? error : candidate);
      continue;
    }
    const Status resolved = resolve(handle);
    if (resolved.ok()) return Status();
    tried += fmt::format("; {}: {}", candidate, resolved.message());
    dlclose(handle);
  }
  return unavailable(fmt::format("{}'s library could not be loaded{}", library, tried));
}

Result<void*> runtime_symbol(void* handle, std::string_view library, const char* symbol) {
  void* address = dlsym(handle, symbol);
  if (address == nullptr) return unavailable(fmt::format("{} has no symbol {}", library, symbol));
  return address;
}

}  // namespace accel
