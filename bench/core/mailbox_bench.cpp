// Mailbox throughput: P producer threads tell() an actor as fast as they can; items/s is requests the actor
// handled per second, end to end (enqueue, wake-up, dispatch).
//
// BM_BlockedProducers: P producer threads each send all their asks before they wait for the replies, so a
// small mailbox stays full and the producers keep blocking for room (Overflow::block). items/s is asks answered
// per second; p50_to_handler_us is the median time from calling ask() to its handler starting (blocked for room,
// then queued).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <latch>
#include <thread>
#include <vector>

#include "accel/core/system.hpp"

namespace {

struct Bump {
  using Response = accel::Done;
};
struct Count {
  using Response = std::int64_t;
};
using CounterProtocol = accel::Protocol<Bump, Count>;

struct Counter final : CounterProtocol::Handler {
  accel::Result<accel::Done> handle(Bump&) override {
    ++count;
    return accel::Done{};
  }
  accel::Result<std::int64_t> handle(Count&) override { return count; }
  std::int64_t count = 0;
};

void BM_MailboxThroughput(benchmark::State& state) {
  const int producers = static_cast<int>(state.range(0));
  constexpr int kPerProducer = 200'000;
  accel::System system;
  auto counter = *system.spawn<CounterProtocol>(
      []() -> accel::Result<std::unique_ptr<CounterProtocol::Handler>> { return std::make_unique<Counter>(); },
      {.name = "counter", .mailbox = {.capacity = 4096, .overflow = accel::Overflow::block}});
  std::int64_t expected = 0;
  for (auto _ : state) {
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p) {
      threads.emplace_back([&] {
        for (int i = 0; i < kPerProducer; ++i) {
          if (!counter.tell(Bump{}).ok()) std::abort();
        }
      });
    }
    for (auto& t : threads) t.join();
    expected += std::int64_t{producers} * kPerProducer;
    if (*counter.ask(Count{}).wait() != expected) std::abort();
  }
  state.SetItemsProcessed(state.iterations() * producers * kPerProducer);
}
BENCHMARK(BM_MailboxThroughput)->Arg(1)->Arg(4)->Arg(16)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);

// A request that carries when it was sent, so that its handler can tell how long it took to reach the actor.
struct Stamped {
  using Response = accel::Done;
  std::chrono::steady_clock::time_point sent;
};
using StampedProtocol = accel::Protocol<Stamped>;

struct DelayRecorder final : StampedProtocol::Handler {
  explicit DelayRecorder(std::vector<double>* delays_us) : delays_us(delays_us) {}
  accel::Result<accel::Done> handle(Stamped& r) override {
    delays_us->push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - r.sent).count());
    return accel::Done{};
  }
  std::vector<double>* delays_us;  // written on the actor's thread only, read after the replies
};

void BM_BlockedProducers(benchmark::State& state) {
  const int producers = static_cast<int>(state.range(0));
  const auto capacity = static_cast<std::size_t>(state.range(1));
  constexpr int kPerProducer = 2'000;
  std::vector<double> delays_us;
  accel::System system;
  auto recorder = *system.spawn<StampedProtocol>(
      [&]() -> accel::Result<std::unique_ptr<StampedProtocol::Handler>> {
        return std::make_unique<DelayRecorder>(&delays_us);
      },
      {.name = "recorder", .mailbox = {.capacity = capacity, .overflow = accel::Overflow::block}});
  delays_us.reserve(static_cast<std::size_t>(producers) * kPerProducer);
  for (auto _ : state) {
    std::latch all_started(producers);
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p) {
      threads.emplace_back([&] {
        std::vector<accel::Future<accel::Done>> replies;
        replies.reserve(kPerProducer);
        all_started.arrive_and_wait();
        for (int i = 0; i < kPerProducer; ++i)
          replies.push_back(recorder.ask(Stamped{std::chrono::steady_clock::now()}));
        for (auto& reply : replies) {
          if (!reply.wait().ok()) std::abort();
        }
      });
    }
    for (auto& t : threads) t.join();
  }
  state.SetItemsProcessed(state.iterations() * producers * kPerProducer);
  const auto median = delays_us.begin() + static_cast<std::ptrdiff_t>(delays_us.size() / 2);
  std::nth_element(delays_us.begin(), median, delays_us.end());
  state.counters["p50_to_handler_us"] = *median;
}
// 64 producers x 2000 asks: a mailbox of 1024 is full almost all the time; one of 2^17 never fills, so all
// 128k asks queue at once there and its p50_to_handler_us is queueing time, not blocked time.
BENCHMARK(BM_BlockedProducers)
    ->Args({64, 1024})
    ->Args({64, 1 << 17})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);

}  // namespace
