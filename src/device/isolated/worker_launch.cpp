#include "device/isolated/worker_launch.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

extern "C" char** environ;  // NOLINT(readability-redundant-declaration): posix_spawn passes it on

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

// posix_spawn, not fork: glibc spawns with clone(CLONE_VM | CLONE_VFORK) and runs no pthread_atfork handlers, which
// in a threaded process are not safe (libomp's allocates in the child: under ASan, whose allocator another thread may
// hold at the fork, the child never reached exec and the device waited out start_timeout). The channel's descriptors
// become 3, 4, 5 (from copies above 10, so that no dup2 overwrites a source) and nothing else is inherited; signals
// start unblocked at their defaults. The worker ties its life to this one's itself (PR_SET_PDEATHSIG, worker.cpp).
pid_t spawn_worker(const std::string& executable, const Channel& channel, int slot) {
  std::vector<std::string> args = {executable,
                                   "--channel-fd=3",
                                   "--worker-wake-fd=4",
                                   "--client-wake-fd=5",
                                   fmt::format("--parent={}", ::getpid()),
                                   fmt::format("--slot={}", slot)};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int high[3];
  const int fds[3] = {channel.memfd(), channel.worker_wake_fd(), channel.client_wake_fd()};
  for (int i = 0; i < 3; ++i) high[i] = ::fcntl(fds[i], F_DUPFD_CLOEXEC, 10);
  const auto close_high = [&] {
    for (int fd : high)
      if (fd >= 0) ::close(fd);
  };
  if (high[0] < 0 || high[1] < 0 || high[2] < 0) {
    const int error = errno;
    close_high();
    errno = error;
    return -1;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawnattr_init(&attributes);
  for (int i = 0; i < 3; ++i) ::posix_spawn_file_actions_adddup2(&actions, high[i], 3 + i);
  ::posix_spawn_file_actions_addclosefrom_np(&actions, 6);
  sigset_t no_signals, all_signals;
  sigemptyset(&no_signals);
  sigfillset(&all_signals);
  ::posix_spawnattr_setsigmask(&attributes, &no_signals);
  ::posix_spawnattr_setsigdefault(&attributes, &all_signals);
  ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, executable.c_str(), &actions, &attributes, argv.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attributes);
  close_high();
  if (spawned != 0) {
    errno = spawned;
    return -1;
  }
  return pid;
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
