// Mailbox throughput: P producer threads tell() an actor as fast as they can; items/s is requests the actor
// handled per second, end to end (enqueue, wake-up, dispatch).
#include <benchmark/benchmark.h>

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

}  // namespace
