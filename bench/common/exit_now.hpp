// How a benchmark that cannot go on ends: at once, its output flushed. std::exit runs the process's static
// destructors while the devices' threads, which main's System would have joined on return, still run: on the GPU
// that crashed graph_execute_bench (SIGSEGV, exit 139) after it had printed why it stopped.
#pragma once

#include <cstdio>
#include <cstdlib>
#include "common/exit_now.hpp"

namespace accel::bench {

[[noreturn]] inline void exit_now(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}

}  // namespace accel::bench
