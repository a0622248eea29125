// One rank of a two-process NCCL world, started by a launcher with torchrun's environment (torchrun itself, or
// this program's own `launch` mode, which starts two copies of itself). Modes:
//   check  every collective and dtype against integer arithmetic (collective_cases.hpp)
//   kill   rank 1 is SIGKILLed while rank 0 is in an all-reduce; stop: rank 1 SIGSTOPs itself instead.
//          Rank 0 must have its pending all-reduce answered with an error within the timeout (kTimeout plus the
//          stated slack), its next request `stale_handle`, and a new communicator (of the survivor) must work.
// Exit status 0 when rank 0 (and in check mode rank 1) passed.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include "accel/libs/collective/launcher.hpp"

#include "process_world_check.hpp"

namespace {

using namespace accel;
using namespace accel::collective;
constexpr std::uint32_t kTimeoutMs = 3'000;
constexpr std::chrono::milliseconds kSlack{2'000};  // the abort, and the kernels' end

int fail(const std::string& what) {
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  return 1;
}

int launch(const char* self, const std::string& mode) {
  std::mt19937 rng{std::random_device{}()};
  const std::string port = std::to_string(20'000 + rng() % 20'000);
  pid_t children[2];
  for (int rank = 0; rank < 2; ++rank) {
    children[rank] = ::fork();
    if (children[rank] == 0) {
      ::setenv("RANK", std::to_string(rank).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
      ::setenv("WORLD_SIZE", "2", 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", port.c_str(), 1);
      ::setenv("NCCL_NVLS_ENABLE", "0", 1);
      ::execl(self, self, mode.c_str(), static_cast<char*>(nullptr));
      std::_Exit(127);
    }
    // A failed fork must not reach the kill below: kill(-1, ...) signals every process this user may signal.
    if (children[rank] < 0) return fail("fork");
  }
  int status0 = 0;
  ::waitpid(children[0], &status0, 0);
  ::kill(children[1], SIGCONT);
  if (mode != "check") ::kill(children[1], SIGKILL);
  int status1 = 0;
  ::waitpid(children[1], &status1, 0);
  const bool ok0 = WIFEXITED(status0) && WEXITSTATUS(status0) == 0;
  const bool ok1 = mode != "check" || (WIFEXITED(status1) && WEXITSTATUS(status1) == 0);
  std::printf("%s: rank 0 %s, rank 1 %s\n", mode.c_str(), ok0 ? "passed" : "FAILED", ok1 ? "passed" : "FAILED");
  return ok0 && ok1 ? 0 : 1;
}

int run_rank(const std::string& mode) {
  Result<LauncherEnv> env = parse_torchrun_env();
  if (!env.ok()) return fail(std::string(env.status().message()));
  System system;
  Result<Device> device = Device::open(system, {.kind = DeviceKind::cuda, .ordinal = env->local_rank});
  if (!device.ok()) return fail(std::string(device.status().message()));
  Result<Communicator> comm = init_from_torchrun(*device, *env, {.timeout_ms = kTimeoutMs});
  if (!comm.ok()) return fail("init: " + std::string(comm.status().message()));
  if (mode == "check") {
    for (DType dtype : testing::kAllDTypes) {
      if (const std::string error = testing::check_across_processes(*comm, dtype); !error.empty()) return fail(error);
    }
    std::printf("rank %d: every dtype passed\n", env->rank);
    return 0;
  }
  const std::size_t n = 64 << 20;
  Result<BufferHandle> x = device->ask(Allocate{.dtype = DType::f32, .count = n}).wait();
  if (!x.ok()) return fail(std::string(x.status().message()));
  // A first all-reduce that both ranks call: the world works.
  if (Status s = comm->ask(all_reduce(comm->comm(), *x, *x, n, DType::f32, ReduceOp::sum)).wait().status(); !s.ok())
    return fail("warm-up: " + std::string(s.message()));
  if (env->rank == 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // rank 0 is in its all-reduce by then
    ::raise(mode == "kill" ? SIGKILL : SIGSTOP);
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  Future<Done> pending = comm->ask(all_reduce(comm->comm(), *x, *x, n, DType::f32, ReduceOp::sum));
  Future<Done> behind = comm->ask(all_reduce(comm->comm(), *x, *x, n, DType::f32, ReduceOp::sum));
  const Status first = pending.wait().status();
  const auto waited = std::chrono::steady_clock::now() - start;
  std::printf("rank 0: pending all-reduce answered after %lld ms: %s\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()),
              std::string(first.message()).c_str());
  if (first.ok()) return fail("the all-reduce with a lost peer succeeded");
  if (waited > std::chrono::milliseconds(kTimeoutMs) + std::chrono::milliseconds(300) + kSlack)
    return fail("answered later than the timeout and its slack");
  const Status second = behind.wait().status();
  if (second.code() != Code::stale_handle && second.code() != first.code())
    return fail("the request behind it: " + std::string(second.message()));
  (void)comm->destroy().wait();
  // The survivor builds a new communicator (a world of the surviving rank) and it works.
  Result<std::vector<Communicator>> fresh = init_all(std::vector<Device>{*device}, {.timeout_ms = kTimeoutMs});
  if (!fresh.ok()) return fail("new communicator: " + std::string(fresh.status().message()));
  const Communicator& alone = (*fresh)[0];
  if (Status s = alone.ask(all_reduce(alone.comm(), *x, *x, n, DType::f32, ReduceOp::sum)).wait().status(); !s.ok())
    return fail("all-reduce on the new communicator: " + std::string(s.message()));
  std::printf("rank 0: a new communicator works\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "check";
  if (argc > 2 && std::string(argv[1]) == "launch") return launch(argv[0], argv[2]);
  if (std::getenv("RANK") == nullptr)
    return fail("no RANK: start it with torchrun, or as `collective_rank launch <mode>`");
  return run_rank(mode);
}
