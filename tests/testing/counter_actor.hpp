// The small actor the core tests drive: a counter that adds, answers, fails on request and can be held inside a
// handler by a Gate, so that tests know the actor is busy without polling or sleeping.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "accel/core/actor.hpp"

namespace accel::counter_testing {

// Keeps an actor inside a handler until the test opens it: the test knows the actor is busy without polling or
// sleeping, queues requests behind it, then lets it go. A gate destroyed while closed opens and waits for the
// handler to leave, so a test that fails early cannot leave an actor stuck or touching a dead gate.
class Gate {
 public:
  ~Gate() {
    open();
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return inside_ == 0; });
  }
  void pass() {
    std::unique_lock lock(mutex_);
    ++inside_;
    entered_ = true;
    changed_.notify_all();
    changed_.wait(lock, [&] { return open_; });
    --inside_;
    changed_.notify_all();
  }
  void wait_until_entered() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return entered_; });
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int inside_ = 0;
  bool entered_ = false;
  bool open_ = false;
};

struct Add {
  static constexpr const char* kName = "Add";
  using Response = std::int64_t;
  std::int64_t amount = 0;
};
struct Get {
  using Response = std::int64_t;
};
struct Fail {  // answers with the given error, or throws when `throw_instead`
  static constexpr const char* kName = "Fail";
  using Response = Done;
  Code code = Code::internal;
  bool throw_instead = false;
};
struct Hold {  // waits at the gate
  using Response = Done;
  Gate* gate = nullptr;
};
struct WhichThread {
  using Response = std::thread::id;
};

using CounterProtocol = Protocol<Add, Get, Fail, Hold, WhichThread>;

struct Counter final : CounterProtocol::Handler {
  explicit Counter(std::atomic<int>* builds) { ++*builds; }
  Result<std::int64_t> handle(Add& r) override { return total += r.amount; }
  Result<std::int64_t> handle(Get&) override { return total; }
  Result<Done> handle(Fail& r) override {
    if (r.throw_instead) throw std::runtime_error("handler blew up");
    return Status(r.code, "asked to fail");
  }
  Result<Done> handle(Hold& r) override {
    r.gate->pass();
    return Done{};
  }
  Result<std::thread::id> handle(WhichThread&) override { return std::this_thread::get_id(); }
  std::int64_t total = 0;
};

inline ActorCell<CounterProtocol>::Factory counter_factory(std::atomic<int>* builds) {
  return [builds]() -> Result<std::unique_ptr<CounterProtocol::Handler>> { return std::make_unique<Counter>(builds); };
}

}  // namespace accel::counter_testing
