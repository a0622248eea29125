// A benchmark's --completion argument: the CompletionStrategy named as to_string names it.
#pragma once

#include <optional>
#include <string_view>

#include "accel/device/requests.hpp"

namespace accel::bench {

inline std::optional<CompletionStrategy> completion_of(std::string_view name) {
  for (const CompletionStrategy strategy :
       {CompletionStrategy::poller, CompletionStrategy::host_callback, CompletionStrategy::blocking}) {
    if (to_string(strategy) == name) return strategy;
  }
  return std::nullopt;
}

}  // namespace accel::bench
