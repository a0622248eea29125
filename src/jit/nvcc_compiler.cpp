#include "jit/nvcc_compiler.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>

extern "C" char** environ;  // NOLINT(readability-redundant-declaration): posix_spawn passes it on

namespace accel::jit {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

Status os_error(Code code, std::string_view what, int error_number) {
  return Status(code, fmt::format("{}: {}", what, std::strerror(error_number)), Source::os, error_number);
}

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

bool is_executable_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

// `name` in the directories of $PATH.
std::optional<fs::path> find_on_path(std::string_view name) {
  const std::optional<std::string> path = environment("PATH");
  if (!path) return std::nullopt;
  std::size_t at = 0;
  while (at <= path->size()) {
    const std::size_t end = std::min(path->find(':', at), path->size());
    const std::string directory = path->substr(at, end - at);
    const fs::path candidate = fs::path(directory.empty() ? "." : directory) / name;
    if (is_executable_file(candidate)) return candidate;
    at = end + 1;
  }
  return std::nullopt;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A private directory under `parent`, removed with everything in it when this goes away.
class ScratchDirectory {
 public:
  static Result<ScratchDirectory> create(const fs::path& parent) {
    std::error_code error;
    fs::create_directories(parent, error);
    if (error)
      return Status(Code::failed_precondition,
                    fmt::format("cannot create scratch directory {}: {}", parent.string(), error.message()), Source::os,
                    error.value());
    std::string pattern = (parent / "accel-nvcc-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      return os_error(Code::failed_precondition, fmt::format("mkdtemp in {}", parent.string()), errno);
    return ScratchDirectory(fs::path(pattern));
  }

  ScratchDirectory(ScratchDirectory&& other) noexcept : path_(std::exchange(other.path_, {})) {}
  ScratchDirectory& operator=(ScratchDirectory&&) = delete;
  ~ScratchDirectory() {
    if (path_.empty()) return;
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }

  [[nodiscard]] const fs::path& path() const noexcept { return path_; }

 private:
  explicit ScratchDirectory(fs::path path) : path_(std::move(path)) {}
  fs::path path_;
};

struct ProcessExit {
  bool timed_out = false;
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
};

// Runs `argv` (argv[0] a path, or a name looked up on $PATH) with stdin from /dev/null and stdout and stderr
// into `log`, as the leader of a new process group; past `timeout` the whole group (nvcc and the compilers it
// started) is killed.
Result<ProcessExit> run_process(const std::vector<std::string>& argv, const fs::path& log,
                                std::chrono::milliseconds timeout) {
  std::vector<char*> arguments;
  arguments.reserve(argv.size() + 1);
  for (const std::string& argument : argv) arguments.push_back(const_cast<char*>(argument.c_str()));
  arguments.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawnattr_init(&attributes);
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::posix_spawn_file_actions_adddup2(&actions, 1, 2);
  sigset_t no_signals;
  sigset_t all_signals;
  ::sigemptyset(&no_signals);
  ::sigfillset(&all_signals);
  ::posix_spawnattr_setsigmask(&attributes, &no_signals);
  ::posix_spawnattr_setsigdefault(&attributes, &all_signals);
  ::posix_spawnattr_setpgroup(&attributes, 0);
  ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, arguments[0], &actions, &attributes, arguments.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attributes);
  if (spawned != 0) return os_error(Code::failed_precondition, fmt::format("cannot run {}", argv[0]), spawned);

  const Clock::time_point deadline = Clock::now() + timeout;
  std::chrono::milliseconds pause(1);
  ProcessExit exit;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return os_error(Code::internal, fmt::format("waitpid for {}", argv[0]), errno);
    if (Clock::now() >= deadline) {
      ::kill(-pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      exit.timed_out = true;
      return exit;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  if (WIFEXITED(status)) exit.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
  return exit;
}

// The first line of `command --version` that contains `marker` (any line when it is empty).
Result<std::string> version_line(const std::vector<std::string>& command, std::string_view marker) {
  ACCEL_ASSIGN_OR_RETURN(ScratchDirectory scratch, ScratchDirectory::create(fs::temp_directory_path()));
  const fs::path log = scratch.path() / "version.txt";
  ACCEL_ASSIGN_OR_RETURN(ProcessExit exit, run_process(command, log, std::chrono::seconds(60)));
  const std::string output = read_text(log);
  if (exit.timed_out || exit.exit_code != 0)
    return Status(Code::failed_precondition, fmt::format("{} --version failed (exit {}, signal {}): {}", command[0],
                                                         exit.exit_code, exit.signal, output.substr(0, 400)));
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty() && (marker.empty() || line.find(marker) != std::string::npos)) return line;
  }
  return Status(Code::failed_precondition,
                fmt::format("{} --version printed no line with '{}': {}", command[0], marker, output.substr(0, 400)));
}

// "nvcc 13.0.88" from "Cuda compilation tools, release 13.0, V13.0.88"; the line itself if it has no ", V".
std::string nvcc_version(const std::string& line) {
  const std::size_t v = line.rfind(", V");
  if (v == std::string::npos) return line;
  return "nvcc " + line.substr(v + 3);
}

// "4.2.0" from the CUTLASS_MAJOR/MINOR/PATCH macros of include/cutlass/version.h, read as text.
Result<std::string> cutlass_version(const fs::path& include_directory) {
  const fs::path header = include_directory / "cutlass" / "version.h";
  const std::string text = read_text(header);
  const auto macro = [&text](std::string_view name) -> std::optional<std::string> {
    const std::string define = fmt::format("#define {}", name);
    std::size_t at = text.find(define);
    while (at != std::string::npos) {
      std::size_t p = at + define.size();
      if (p < text.size() && (text[p] == ' ' || text[p] == '\t')) {
        while (p < text.size() && (text[p] == ' ' || text[p] == '\t')) ++p;
        std::size_t end = p;
        while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
        if (end > p) return text.substr(p, end - p);
      }
      at = text.find(define, at + 1);
    }
    return std::nullopt;
  };
  const auto major = macro("CUTLASS_MAJOR");
  const auto minor = macro("CUTLASS_MINOR");
  const auto patch = macro("CUTLASS_PATCH");
  if (!major || !minor || !patch)
    return Status(Code::failed_precondition,
                  fmt::format("cannot read CUTLASS_MAJOR/MINOR/PATCH from {}", header.string()));
  return fmt::format("{}.{}.{}", *major, *minor, *patch);
}

// nvcc's output cut to what says what went wrong: its error lines with a little context, or its tail.
std::string trimmed_log(const std::string& log) {
  constexpr std::size_t kMaxBytes = 8000;
  constexpr int kMaxErrors = 12;
  constexpr int kContextLines = 3;
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  std::string out;
  int errors = 0;
  for (std::size_t i = 0; i < lines.size() && errors < kMaxErrors; ++i) {
    if (lines[i].find("error") == std::string::npos) continue;
    ++errors;
    for (std::size_t j = i; j < lines.size() && j <= i + kContextLines; ++j) {
      out += lines[j];
      out += '\n';
    }
  }
  if (out.empty()) out = log.size() > kMaxBytes / 2 ? log.substr(log.size() - kMaxBytes / 2) : log;
  if (out.size() > kMaxBytes) out = out.substr(0, kMaxBytes) + "\n[...]";
  return out;
}

}  // namespace

Result<NvccToolchain> NvccToolchain::locate() {
  NvccToolchain toolchain;
  std::vector<std::string> tried;
  if (const auto nvcc = environment("ACCEL_NVCC")) {
    if (!is_executable_file(*nvcc))
      return failed_precondition(fmt::format("ACCEL_NVCC={} is not an executable file", *nvcc));
    toolchain.nvcc = *nvcc;
  } else {
    if (const auto cuda_home = environment("CUDA_HOME")) {
      const fs::path candidate = fs::path(*cuda_home) / "bin" / "nvcc";
      if (is_executable_file(candidate)) toolchain.nvcc = candidate;
      tried.push_back(candidate.string());
    }
#ifdef ACCEL_NVCC_BUILD_PATH
    if (toolchain.nvcc.empty() && std::string_view(ACCEL_NVCC_BUILD_PATH).size() > 0) {
      if (is_executable_file(ACCEL_NVCC_BUILD_PATH)) toolchain.nvcc = ACCEL_NVCC_BUILD_PATH;
      tried.emplace_back(ACCEL_NVCC_BUILD_PATH);
    }
#endif
    if (toolchain.nvcc.empty()) {
      if (const auto found = find_on_path("nvcc")) toolchain.nvcc = *found;
      tried.emplace_back("nvcc on $PATH");
    }
    if (toolchain.nvcc.empty())
      return failed_precondition(
          fmt::format("nvcc not found (set ACCEL_NVCC or CUDA_HOME); tried {}", fmt::join(tried, ", ")));
  }

  fs::path cutlass;
  if (const auto directory = environment("ACCEL_CUTLASS_DIR")) {
    cutlass = *directory;
  } else {
#ifdef ACCEL_CUTLASS_BUILD_DIR
    cutlass = ACCEL_CUTLASS_BUILD_DIR;
#endif
  }
  if (cutlass.empty())
    return failed_precondition("CUTLASS headers not found: set ACCEL_CUTLASS_DIR (the folder holding include/cutlass)");
  std::error_code error;
  if (!fs::is_regular_file(cutlass / "include" / "cutlass" / "cutlass.h", error))
    return failed_precondition(fmt::format("CUTLASS headers not found: {} has no include/cutlass/cutlass.h{}",
                                           cutlass.string(),
                                           environment("ACCEL_CUTLASS_DIR") ? " (from ACCEL_CUTLASS_DIR)" : ""));
  toolchain.include_directories.push_back(cutlass / "include");
  // scripts/setup lays the util headers out as util/include; a CUTLASS source tree has them in tools/util/include.
  if (fs::is_directory(cutlass / "util" / "include", error)) {
    toolchain.include_directories.push_back(cutlass / "util" / "include");
  } else if (fs::is_directory(cutlass / "tools" / "util" / "include", error)) {
    toolchain.include_directories.push_back(cutlass / "tools" / "util" / "include");
  }

  ACCEL_ASSIGN_OR_RETURN(const std::string nvcc_line, version_line({toolchain.nvcc.string(), "--version"}, "release"));
  // nvcc's host compiler: $NVCC_CCBIN when set (nvcc honours it), else g++ (what nvcc runs), else c++.
  std::optional<std::string> host = environment("NVCC_CCBIN");
  if (!host) {
    if (find_on_path("g++")) {
      host = "g++";
    } else if (find_on_path("c++")) {
      host = "c++";
    }
  }
  if (!host) return failed_precondition("no host compiler for nvcc: neither g++ nor c++ is on $PATH");
  ACCEL_ASSIGN_OR_RETURN(const std::string host_line, version_line({*host, "--version"}, ""));
  ACCEL_ASSIGN_OR_RETURN(const std::string cutlass_release, cutlass_version(cutlass / "include"));
  toolchain.identity = fmt::format("{} / {} / CUTLASS {}", nvcc_version(nvcc_line), host_line, cutlass_release);
  return toolchain;
}

Result<std::vector<std::byte>> compile_shared_object(const NvccToolchain& toolchain, const std::string& source,
                                                     const NvccOptions& options) {
  if (toolchain.nvcc.empty() || !is_executable_file(toolchain.nvcc))
    return failed_precondition(
        fmt::format("nvcc is not available ('{}'); see NvccToolchain::locate", toolchain.nvcc.string()));
  if (options.compute_capability < 50 || options.compute_capability > 200)
    return invalid_argument(fmt::format("compute capability {} is out of range", options.compute_capability));
  std::error_code error;
  const fs::path parent = options.scratch.empty() ? fs::temp_directory_path(error) : options.scratch;
  if (error) return failed_precondition(fmt::format("no temporary directory: {}", error.message()));
  ACCEL_ASSIGN_OR_RETURN(ScratchDirectory scratch, ScratchDirectory::create(parent));
  const fs::path source_path = scratch.path() / "module.cu";
  const fs::path output_path = scratch.path() / "module.so";
  const fs::path log_path = scratch.path() / "nvcc.log";
  {
    std::ofstream out(source_path, std::ios::binary | std::ios::trunc);
    out.write(source.data(), static_cast<std::streamsize>(source.size()));
    out.close();
    if (!out) return Status(Code::internal, fmt::format("cannot write {}", source_path.string()), Source::os, errno);
  }

  // -arch=sm_90a for 90: wgmma and TMA multicast need the arch-specific target.
  const std::string arch =
      options.compute_capability == 90 ? "sm_90a" : fmt::format("sm_{}", options.compute_capability);
  std::vector<std::string> argv = {
      toolchain.nvcc.string(), "-std=c++17", "-O3", "-DNDEBUG", "--expt-relaxed-constexpr", "-arch=" + arch, "-shared",
      "-Xcompiler", "-fPIC",
      // Only the module's accel_* entry points are exported: the rendered source declares them with default
      // visibility, everything else (CUTLASS, and the static CUDA runtime it links) stays inside the module.
      "-Xcompiler", "-fvisibility=hidden", "-Xlinker", "--exclude-libs=ALL"};
  for (const fs::path& directory : toolchain.include_directories) argv.push_back("-I" + directory.string());
  for (const std::string& flag : options.extra_flags) argv.push_back(flag);
  argv.insert(argv.end(), {"-o", output_path.string(), source_path.string()});

  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(options.timeout);
  ACCEL_ASSIGN_OR_RETURN(const ProcessExit exit, run_process(argv, log_path, timeout));
  if (exit.timed_out)
    return deadline_exceeded(fmt::format("nvcc ran past {} s and was killed", options.timeout.count()));
  const std::string log = read_text(log_path);
  if (exit.exit_code != 0) {
    if (exit.exit_code == 127 && log.empty())
      return failed_precondition(fmt::format("cannot run {}", toolchain.nvcc.string()));
    return invalid_argument(
        fmt::format("nvcc failed (exit {}, signal {}):\n{}", exit.exit_code, exit.signal, trimmed_log(log)));
  }
  std::ifstream in(output_path, std::ios::binary);
  if (!in)
    return internal_error(fmt::format("nvcc succeeded but wrote no {}: {}", output_path.string(), trimmed_log(log)));
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::byte> out(bytes.size());
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

}  // namespace accel::jit
