// How a benchmark that cannot go on ends: at once, its output flushed. std::exit runs the process's exit handlers
// while the devices' threads, which main's System would have joined on return, still run: on the GPU, one that
// stopped right after opening its device died of SIGSEGV inside cuBLASLt's start-up load (docs/PERFORMANCE.md §56).
#pragma once

#include <cstdio>
#include <cstdlib>

namespace accel::bench {

[[noreturn]] inline void exit_now(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}

}  // namespace accel::bench
