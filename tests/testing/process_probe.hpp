// What a test can see of this process from /proc: open descriptors, child processes, whether a process is gone.
// Used to prove that isolated devices leave nothing behind.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace accel::testing {

// SIGKILL to the process `pid`; false, sending nothing, for a pid that names no single process: 0 and negative
// values signal whole process groups, the test runner and CI's script among them.
inline bool kill_process(pid_t pid) { return pid > 0 && ::kill(pid, SIGKILL) == 0; }

inline int count_open_fds() {
  int count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++count;
  return count;
}

// "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
inline bool read_stat(pid_t pid, char& state, pid_t& parent) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(file, line)) return false;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(line.substr(close + 1));
  return static_cast<bool>(rest >> state >> parent);
}

inline std::vector<pid_t> live_children() {
  std::vector<pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    char state = 0;
    pid_t parent = 0;
    if (read_stat(std::stoi(name), state, parent) && parent == ::getpid() && state != 'Z') {
      children.push_back(std::stoi(name));
    }
  }
  return children;
}

// True once the process no longer runs (gone, or a zombie waiting for its parent).
inline bool process_gone(pid_t pid) {
  char state = 0;
  pid_t parent = 0;
  if (!read_stat(pid, state, parent)) return true;
  return state == 'Z' || state == 'X';
}

}  // namespace accel::testing
