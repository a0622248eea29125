// A vendor library loaded when first needed rather than linked. Linking a library makes the dynamic loader map and
// relocate it before `main`, whether or not the process ever calls it: libcublasLt alone took 61 ms of a process's
// start on the H100 (docs/PERFORMANCE.md), which a process that only embeds text (its graphs use their own matmul
// until cuBLASLt is ready) pays for nothing. A library is opened once per process, on the first call that needs it,
// and never closed, since handles made from it may live until exit.
//
// A family lists the entry points it calls (an X-macro of their names) in a struct of pointers typed by the
// library's own declarations, `decltype(&::name)`, so that a call through the table is checked like a direct one.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accel/core/result.hpp"

namespace accel {

// Opens the first of `candidates` (names for dlopen, tried in order) for which `resolve(handle)` succeeds, keeping
// it open; a candidate that opens but does not resolve is closed again. unavailable, naming `library` and what each
// candidate answered, where none does.
[[nodiscard]] Status open_runtime_library(std::string_view library, std::span<const std::string> candidates,
                                          const std::function<Status(void* handle)>& resolve);

// The address of `symbol` in an opened library, or unavailable naming both.
[[nodiscard]] Result<void*> runtime_symbol(void* handle, std::string_view library, const char* symbol);

// Resolves the entry point `name` of `api` (a struct with a member of that name) in `handle`, or returns the error.
#define ACCEL_RESOLVE_RUNTIME_SYMBOL(api, handle, library, name)                         \
  {                                                                                      \
    ACCEL_ASSIGN_OR_RETURN(void* const address, runtime_symbol(handle, library, #name)); \
    (api).name = reinterpret_cast<decltype((api).name)>(address);                        \
  }

// One library's table of entry points `Api`, loaded on the first get() by `load` (which calls open_runtime_library),
// from whichever thread asks first; callers meanwhile wait, and later calls return the same table or error.
template <class Api>
class RuntimeLibrary {
 public:
  using Load = Status (*)(Api& api);
  explicit RuntimeLibrary(Load load) : load_(load) {}

  [[nodiscard]] Result<const Api*> get() {
    std::call_once(once_, [this] {
      status_ = load_(api_);
      loaded_.store(status_.ok(), std::memory_order_release);
    });
    if (!status_.ok()) return status_;
    return &api_;
  }
  // The table if a get() has loaded it, else null; never loads.
  [[nodiscard]] const Api* if_loaded() const noexcept {
    return loaded_.load(std::memory_order_acquire) ? &api_ : nullptr;
  }

 private:
  Load load_;
  std::once_flag once_;
  Status status_;
  Api api_{};
  std::atomic<bool> loaded_{false};
};

}  // namespace accel
