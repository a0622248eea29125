// ask() round-trip latency for an empty request, next to the two things a user would write instead:
//   direct — calling the handler as a plain (virtual) function on the caller's thread;
//   mutex+cv — a worker thread fed through a std::mutex + std::condition_variable queue, replying through a
//              mutex + condition variable slot (the hand-rolled queue accel replaces).
// Prints median and p99 per variant, one request in flight at a time.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "accel/core/system.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Ping {
  using Response = std::int64_t;
  std::int64_t value = 0;
};
using PingProtocol = accel::Protocol<Ping>;
struct Ponger final : PingProtocol::Handler {
  accel::Result<std::int64_t> handle(Ping& p) override { return p.value + 1; }
};

struct Percentiles {
  double median_ns, p99_ns;
};

template <class F>
Percentiles measure(int iterations, F&& round_trip) {
  std::vector<double> samples;
  samples.reserve(iterations);
  for (int i = 0; i < iterations / 10; ++i) round_trip(i);  // warm-up
  for (int i = 0; i < iterations; ++i) {
    const auto start = Clock::now();
    round_trip(i);
    samples.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count());
  }
  std::sort(samples.begin(), samples.end());
  return {samples[samples.size() / 2], samples[samples.size() * 99 / 100]};
}

// The hand-rolled alternative: one worker, a locked deque of jobs, and a locked reply slot per request.
class MutexQueueWorker {
 public:
  MutexQueueWorker() : thread_([this] { loop(); }) {}
  ~MutexQueueWorker() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  std::int64_t call(std::int64_t value) {
    Reply reply;
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back({value, &reply});
    }
    cv_.notify_one();
    std::unique_lock lock(reply.mutex);
    reply.cv.wait(lock, [&] { return reply.ready; });
    return reply.value;
  }

 private:
  struct Reply {
    std::mutex mutex;
    std::condition_variable cv;
    bool ready = false;
    std::int64_t value = 0;
  };
  struct Job {
    std::int64_t value;
    Reply* reply;
  };
  void loop() {
    while (true) {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      Job job = jobs_.front();
      jobs_.pop_front();
      lock.unlock();
      {
        std::lock_guard reply_lock(job.reply->mutex);
        job.reply->value = job.value + 1;
        job.reply->ready = true;
      }
      job.reply->cv.notify_one();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 200'000;
  fmt::print("ask round trip, empty request, one in flight, {} samples each, {} hardware threads\n", iterations,
             std::thread::hardware_concurrency());
  fmt::print("{:<34} {:>12} {:>12}\n", "variant", "median (ns)", "p99 (ns)");
  auto row = [](const char* name, Percentiles p) {
    fmt::print("{:<34} {:>12.0f} {:>12.0f}\n", name, p.median_ns, p.p99_ns);
  };

  Ponger direct;
  PingProtocol::Handler& handler = direct;
  volatile std::int64_t sink = 0;
  row("direct virtual call", measure(iterations, [&](int i) {
        Ping ping{.value = i};
        sink = *handler.handle(ping);
      }));

  {
    MutexQueueWorker worker;
    row("mutex+condition-variable queue", measure(iterations, [&](int i) { sink = worker.call(i); }));
  }

  for (auto spin : {std::chrono::microseconds(50), std::chrono::microseconds(0)}) {
    accel::System system;
    auto actor = *system.spawn<PingProtocol>(
        []() -> accel::Result<std::unique_ptr<PingProtocol::Handler>> { return std::make_unique<Ponger>(); },
        {.name = "ponger", .mailbox = {.spin = spin}});
    const std::string name = fmt::format("accel ask (actor spins {} us)", spin.count());
    row(name.c_str(), measure(iterations, [&](int i) { sink = *actor.ask(Ping{.value = i}).wait(); }));
  }
  (void)sink;
  return 0;
}
