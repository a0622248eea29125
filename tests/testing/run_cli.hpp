// Runs the accel CLI (ACCEL_CLI, the built program's path) with `arguments`, as a shell would, for the tests of its
// commands: what it printed (stdout and stderr together) and how it exited.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace accel::testing {

struct Ran {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;     // stdout and stderr together
};

inline Ran run_cli(const std::string& arguments) {
  const std::string command = std::string(ACCEL_CLI) + " " + arguments + " 2>&1";
  Ran ran;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return ran;
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) ran.out.append(buffer, n);
  const int status = pclose(pipe);
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

}  // namespace accel::testing
