// A real sticky fault (a kernel writing to an invalid address) in a child process: the device ends Poisoned,
// every pending request is answered, nothing hangs, and the process exits cleanly. One child per completion
// strategy. Skipped without a GPU.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

extern char** environ;

namespace {

struct ChildOutcome {
  int exit_code = -1;
  bool timed_out = false;
  std::map<std::string, std::string> values;
  std::string output;
};

std::filesystem::path sibling(const char* name) {
  char self[PATH_MAX] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  return std::filesystem::path(std::string(self, length > 0 ? length : 0)).parent_path() / name;
}

ChildOutcome run_child(const std::string& strategy, std::chrono::seconds limit) {
  ChildOutcome outcome;
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return outcome;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  const std::string program = sibling("cuda_fault_child").string();
  char* argv[] = {const_cast<char*>(program.c_str()), const_cast<char*>(strategy.c_str()), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    outcome.output = "posix_spawn failed for " + program;
    return outcome;
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  char chunk[4096];
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      outcome.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd fd{pipe_fds[0], POLLIN, 0};
    if (poll(&fd, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t got = read(pipe_fds[0], chunk, sizeof(chunk));
    if (got <= 0) break;
    outcome.output.append(chunk, static_cast<std::size_t>(got));
  }
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::istringstream lines(outcome.output);
  for (std::string line; std::getline(lines, line);) {
    if (const auto eq = line.find('='); eq != std::string::npos)
      outcome.values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return outcome;
}

class CudaFaultTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CudaFaultTest, AStickyFaultPoisonsTheDeviceAnswersEveryRequestAndExitsCleanly) {
  const ChildOutcome child = run_child(GetParam(), std::chrono::seconds(120));
  if (child.exit_code == 77) GTEST_SKIP() << "no CUDA GPU: " << child.output;
  ASSERT_FALSE(child.timed_out) << "the child hung:\n" << child.output;
  ASSERT_EQ(child.exit_code, 0) << child.output;
  EXPECT_EQ(child.values.at("unanswered"), "0") << child.output;
  EXPECT_EQ(child.values.at("other_errors"), "0") << child.output;
  EXPECT_NE(child.values.at("context_lost"), "0") << child.output;
  EXPECT_EQ(child.values.at("poisoned"), "1") << child.output;
  EXPECT_EQ(child.values.at("clean_exit"), "1") << child.output;
  std::cout << child.output;
}

INSTANTIATE_TEST_SUITE_P(Strategies, CudaFaultTest, ::testing::Values("poller", "host_callback", "blocking"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
