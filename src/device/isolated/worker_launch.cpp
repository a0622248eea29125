#include "device/isolated/worker_launch.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace accel::device::isolated {
namespace {

// The running program's directory and, when this code was loaded from a shared library (libaccel.so), that
// library's directory too.
std::vector<std::filesystem::path> directories_holding_this_code() {
  namespace fs = std::filesystem;
  std::vector<fs::path> directories;
  std::error_code error;
  if (const fs::path program = fs::read_symlink("/proc/self/exe", error); !error) {
    directories.push_back(program.parent_path());
  }
  Dl_info code{};
  if (::dladdr(reinterpret_cast<const void*>(&find_worker_executable), &code) != 0 && code.dli_fname != nullptr) {
    if (const fs::path file = fs::canonical(code.dli_fname, error); !error) {
      if (directories.empty() || directories.front() != file.parent_path()) directories.push_back(file.parent_path());
    }
  }
  return directories;
}

}  // namespace

Result<std::string> find_worker_executable(const WorkerOptions& options) {
  namespace fs = std::filesystem;
  std::vector<std::string> tried;
  auto usable = [&](const std::string& path) {
    tried.push_back(path);
    return ::access(path.c_str(), X_OK) == 0;
  };
  if (!options.executable.empty()) {
    if (usable(options.executable)) return options.executable;
  } else {
    if (const char* from_env = std::getenv("ACCEL_WORKER"); from_env != nullptr && *from_env != '\0') {
      if (usable(from_env)) return std::string(from_env);
    } else {
      // Beside the program or libaccel.so (a build tree, a bundle), then where an install puts it
      // (<prefix>/libexec/accel/ beside <prefix>/bin/ and <prefix>/lib/), then this build's own.
      for (const fs::path& directory : directories_holding_this_code()) {
        if (usable((directory / "accel-worker").string())) return tried.back();
        if (usable((directory.parent_path() / "libexec" / "accel" / "accel-worker").string())) return tried.back();
      }
      if (usable(ACCEL_WORKER_BUILD_PATH)) return std::string(ACCEL_WORKER_BUILD_PATH);
    }
  }
  return failed_precondition(
      fmt::format("no runnable accel-worker program (tried {}); set WorkerOptions::executable "
                  "or $ACCEL_WORKER",
                  fmt::join(tried, ", ")));
}

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  return -1;
#endif
}

// fork + exec with the channel's descriptors as 3, 4, 5 and nothing else inherited. Between fork and exec the
// child calls only async-signal-safe functions. It dies with its parent (PR_SET_PDEATHSIG, taken from the
// monitor thread, which lives as long as the device).
pid_t spawn_worker(const std::string& executable, const Channel& channel, int slot) {
  const pid_t parent = ::getpid();
  std::vector<std::string> args = {executable,
                                   "--channel-fd=3",
                                   "--worker-wake-fd=4",
                                   "--client-wake-fd=5",
                                   fmt::format("--parent={}", parent),
                                   fmt::format("--slot={}", slot)};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int fds[3] = {channel.memfd(), channel.worker_wake_fd(), channel.client_wake_fd()};

  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  int high[3];
  for (int i = 0; i < 3; ++i) high[i] = ::fcntl(fds[i], F_DUPFD, 10);
  for (int i = 0; i < 3; ++i) ::dup2(high[i], 3 + i);
#ifdef SYS_close_range
  ::syscall(SYS_close_range, 6u, ~0u, 0u);
#else
  for (int fd = 6; fd < 4096; ++fd) ::close(fd);
#endif
  ::execv(executable.c_str(), argv.data());
  ::_exit(127);
}

std::string describe_exit(int wait_status) {
  if (WIFEXITED(wait_status)) {
    const int code = WEXITSTATUS(wait_status);
    if (code == kExitContextLost) return "hit a sticky CUDA error and exited";
    return fmt::format("exited with status {}", code);
  }
  if (WIFSIGNALED(wait_status)) {
    const int signal = WTERMSIG(wait_status);
    return fmt::format("was killed by signal {} ({})", signal, ::strsignal(signal));
  }
  return "ended";
}

}  // namespace accel::device::isolated
