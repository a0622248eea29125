// A child process the test talks to line by line: its stdin and stdout are pipes, each answer a "key=value" line.
// Every wait is bounded, so a child that hangs fails the test instead of hanging it; the destructor kills and reaps.
#pragma once

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

extern char** environ;

namespace accel::testing {

// A program built beside the running test.
inline std::filesystem::path sibling_program(const char* name) {
  char self[PATH_MAX] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  return std::filesystem::path(std::string(self, length > 0 ? length : 0)).parent_path() / name;
}

class ConversingChild {
 public:
  explicit ConversingChild(std::vector<std::string> args) {
    int to_child[2];
    int from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, to_child[1]);
    posix_spawn_file_actions_addclose(&actions, from_child[0]);
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = 0;
    posix_spawn_file_actions_destroy(&actions);
    close(to_child[0]);
    close(from_child[1]);
    input_ = to_child[1];
    output_ = from_child[0];
  }
  ConversingChild(const ConversingChild&) = delete;
  ConversingChild& operator=(const ConversingChild&) = delete;
  ~ConversingChild() {
    if (input_ >= 0) close(input_);
    if (output_ >= 0) close(output_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  [[nodiscard]] bool started() const { return pid_ > 0; }

  // Sends one line.
  void say(const std::string& line) const {
    const std::string sent = line + "\n";
    (void)!write(input_, sent.data(), sent.size());
  }

  // The value of the next line that begins "key=", skipping others (they are kept in transcript()); nothing when
  // the child ends or `limit` passes first.
  std::optional<std::string> await(const std::string& key, std::chrono::seconds limit = std::chrono::seconds(60)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (true) {
      if (const auto end = pending_.find('\n'); end != std::string::npos) {
        std::string line = pending_.substr(0, end);
        pending_.erase(0, end + 1);
        transcript_ += line + "\n";
        if (line.starts_with(key + "=")) return line.substr(key.size() + 1);
        continue;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd fd{output_, POLLIN, 0};
      if (poll(&fd, 1, static_cast<int>(left.count())) <= 0) continue;
      char chunk[4096];
      const ssize_t got = read(output_, chunk, sizeof(chunk));
      if (got <= 0) return std::nullopt;
      pending_.append(chunk, static_cast<std::size_t>(got));
    }
  }

  // Closes the child's stdin and waits for it to end: its exit code, or 128 + the signal; -1 past `limit`.
  int finish(std::chrono::seconds limit = std::chrono::seconds(60)) {
    if (input_ >= 0) close(input_);
    input_ = -1;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) return -1;
      usleep(10'000);
    }
    pid_ = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  [[nodiscard]] int pid() const { return pid_; }
  // Every line read so far, for failure messages.
  [[nodiscard]] const std::string& transcript() const { return transcript_; }

 private:
  pid_t pid_ = 0;
  int input_ = -1;
  int output_ = -1;
  std::string pending_;
  std::string transcript_;
};

}  // namespace accel::testing
