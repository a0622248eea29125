#include "device/cuda/completion_queue.hpp"

#include <fmt/format.h>
#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <thread>
#include <unordered_map>
#include <vector>

#include "operation/cuda_status.hpp"

namespace accel::device::cuda {
namespace {

using Clock = std::chrono::steady_clock;

// How long the poller keeps spinning after its last completion before it yields or sleeps: requests sent
// back to back then find it awake.
constexpr auto kIdleSpin = std::chrono::microseconds(100);
// How often the host_callback watcher looks for errors that mean a callback will never run.
constexpr auto kWatchInterval = std::chrono::milliseconds(1);
// How often work with a done word queries its event while the word has not come: only a fault (which leaves the word
// unwritten) or work enqueued between the event and the word's write needs it.
constexpr auto kEventLookInterval = std::chrono::microseconds(20);

// The status that the work's own check gives it (the work has finished without a CUDA error).
Status checked(const Submitted& work) noexcept {
  try {
    return work.check(std::span<const std::byte>(work.staging.data(), work.host_bytes));
  } catch (const std::exception& e) {
    return internal_error(fmt::format("checking a request's result on the host: {}", e.what()));
  }
}

}  // namespace

struct CompletionQueue::Pending {
  Submitted work;
  Promise<Done> reply;
  std::shared_ptr<std::atomic<std::size_t>> outstanding;  // the queue's count, shared: a callback may outlive it
  std::atomic<bool> claimed{false};
  Clock::time_point next_event_query{};  // of work with a done word

  // Whether the work's event is to be queried now: always without a done word, else once an interval.
  bool event_query_due() noexcept {
    if (!work.done) return true;
    const Clock::time_point now = Clock::now();
    if (now < next_event_query) return false;
    next_event_query = now + kEventLookInterval;
    return true;
  }

  // Exactly one caller wins; the callback and the watcher may both try.
  bool claim() noexcept { return !claimed.exchange(true, std::memory_order_acq_rel); }

  void finish(Status status) noexcept {
    if (status.ok() && work.check) status = checked(work);
    if (status.ok() && work.host_destination != nullptr && work.host_bytes != 0) {
      std::memcpy(work.host_destination, work.staging.data(), work.host_bytes);
    }
    work.staging.reset();
    // The event stays until the Pending dies: under host_callback the watcher may have read `claimed` as false
    // just before the callback won, and queries the event next.
    if (outstanding) outstanding->fetch_sub(1, std::memory_order_release);
    if (status.ok())
      reply.set(Done{});
    else
      reply.set(status);
  }
};

struct CompletionQueue::State {
  CompletionStrategy strategy;
  std::shared_ptr<Health> health;
  std::string device_name;

  std::mutex mutex;
  std::condition_variable wake;
  std::vector<std::pair<cudaStream_t, std::shared_ptr<Pending>>> incoming;
  std::atomic<std::size_t> incoming_count{0};
  // Deferred work not yet answered.
  std::shared_ptr<std::atomic<std::size_t>> outstanding = std::make_shared<std::atomic<std::size_t>>(0);
  bool sleeping = false;
  bool stopping = false;
  std::thread thread;

  // Owned by the thread: per stream, pending work in submission (= completion) order.
  std::unordered_map<cudaStream_t, std::deque<std::shared_ptr<Pending>>> pending;

  void run();
  bool take_incoming(bool may_sleep);
  bool poll();
  void fail_everything(const Status& reply);
  bool has_pending() const {
    for (const auto& [stream, queue] : pending)
      if (!queue.empty()) return true;
    return false;
  }
};

CompletionQueue::CompletionQueue(CompletionStrategy strategy, std::shared_ptr<Health> health, std::string device_name)
    : strategy_(strategy), state_(std::make_shared<State>()) {
  state_->strategy = strategy;
  state_->health = std::move(health);
  state_->device_name = std::move(device_name);
  if (strategy != CompletionStrategy::blocking) {
    // The thread holds the state, so it may outlive this object (see the destructor).
    state_->thread = std::thread([state = state_] {
      pthread_setname_np(pthread_self(), "accel-complete");
      state->run();
    });
  }
}

CompletionQueue::~CompletionQueue() {
  if (!state_->thread.joinable()) return;
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->wake.notify_all();
  // A continuation run by the thread itself may drop the last owner of the device; it cannot join itself,
  // and finishes the pending work on its own.
  if (state_->thread.get_id() == std::this_thread::get_id())
    state_->thread.detach();
  else
    state_->thread.join();
}

std::shared_ptr<CompletionQueue::Pending> CompletionQueue::pending_of(DeferredReply& deferred) {
  auto pending = std::make_shared<Pending>();
  pending->work = std::move(deferred.work);
  pending->reply = std::move(deferred.reply);
  pending->outstanding = state_->outstanding;
  pending->outstanding->fetch_add(1, std::memory_order_relaxed);
  return pending;
}

template <class Pendings>
void CompletionQueue::hand_to_thread(cudaStream_t stream, Pendings& taken) {
  if (taken.empty()) return;
  bool notify = false;
  {
    std::lock_guard lock(state_->mutex);
    for (std::shared_ptr<Pending>& pending : taken) state_->incoming.emplace_back(stream, std::move(pending));
    state_->incoming_count.fetch_add(taken.size(), std::memory_order_release);
    notify = state_->sleeping;
  }
  if (notify) state_->wake.notify_one();
}

Status CompletionQueue::defer(cudaStream_t stream, std::span<DeferredReply> replies) {
  std::vector<std::shared_ptr<Pending>> taken;
  taken.reserve(replies.size());
  Status first_failure;
  for (DeferredReply& deferred : replies) {
    std::shared_ptr<Pending> pending = pending_of(deferred);
    if (strategy_ == CompletionStrategy::host_callback) {
      auto* holder = new std::shared_ptr<Pending>(pending);
      const cudaError_t launched = cudaLaunchHostFunc(
          stream,
          [](void* data) {
            std::unique_ptr<std::shared_ptr<Pending>> owned(static_cast<std::shared_ptr<Pending>*>(data));
            if ((*owned)->claim()) (*owned)->finish(Status());
          },
          holder);
      if (launched != cudaSuccess) {
        delete holder;
        Status failed = cuda_status(launched, "cudaLaunchHostFunc for a completion");
        if (failed.code() == Code::context_lost) failed = state_->health->poison(failed);
        if (pending->claim()) pending->finish(failed);
        if (first_failure.ok()) first_failure = failed;
        continue;
      }
    }
    taken.push_back(std::move(pending));
  }
  hand_to_thread(stream, taken);
  return first_failure;
}

void CompletionQueue::Watched::add(cudaStream_t stream, std::span<DeferredReply> replies) {
  stream_ = stream;
  for (DeferredReply& deferred : replies) pending_.push_back(queue_.pending_of(deferred));
}

void CompletionQueue::Watched::answer_finished() {
  if (pending_.empty()) return;
  Status lost;
  (void)answer_front(pending_, CompletionStrategy::poller, queue_.state_->device_name, lost);
  if (lost.ok()) return;
  fail_all(pending_, queue_.state_->health->poison(lost));
}

void CompletionQueue::Watched::hand_over() {
  queue_.hand_to_thread(stream_, pending_);
  pending_.clear();
}

bool CompletionQueue::owes_replies() const noexcept {
  return state_->outstanding->load(std::memory_order_acquire) != 0;
}

Result<Done> CompletionQueue::wait(Submitted work) {
  Pending pending;
  pending.work = std::move(work);
  Future<Done> future = pending.reply.future();
  Result<cudaEvent_t> event = pending.work.event->recorded();
  Status status =
      event.ok() ? cuda_status(cudaEventSynchronize(*event), "waiting for a request's GPU work") : event.status();
  if (status.code() == Code::context_lost) status = state_->health->poison(status);
  pending.finish(status);
  return future.wait();
}

void CompletionQueue::State::run() {
  auto last_progress = Clock::now();
  while (true) {
    const bool idle = !has_pending();
    const bool may_sleep = idle && (strategy != CompletionStrategy::poller || Clock::now() - last_progress > kIdleSpin);
    if (!take_incoming(may_sleep)) return;
    if (poll()) {
      last_progress = Clock::now();
      continue;
    }
    if (strategy == CompletionStrategy::host_callback) {
      std::this_thread::sleep_for(kWatchInterval);
    } else if (Clock::now() - last_progress > kIdleSpin) {
      std::this_thread::yield();
    }
  }
}

// Moves deferred work into `pending`; sleeps first when allowed and nothing is there. Returns false when the
// thread should end (stopping, and nothing is left to answer).
bool CompletionQueue::State::take_incoming(bool may_sleep) {
  if (incoming_count.load(std::memory_order_acquire) == 0 && !may_sleep) return true;
  std::unique_lock lock(mutex);
  if (may_sleep && incoming.empty()) {
    if (stopping) return false;
    sleeping = true;
    wake.wait(lock, [&] { return !incoming.empty() || stopping; });
    sleeping = false;
    if (incoming.empty()) return false;
  }
  for (auto& [stream, work] : incoming) pending[stream].push_back(std::move(work));
  incoming.clear();
  incoming_count.store(0, std::memory_order_release);
  return true;
}

bool CompletionQueue::answer_front(PendingQueue& queue, CompletionStrategy strategy, std::string_view device_name,
                                   Status& lost) {
  bool progressed = false;
  // The requests of one burst share their event (CudaStream::answer_held): one query answers them all.
  EventRef seen_complete;
  while (!queue.empty()) {
    Pending& front = *queue.front();
    if (front.claimed.load(std::memory_order_acquire)) {  // answered by its host callback
      queue.pop_front();
      progressed = true;
      continue;
    }
    // Recorded before it was deferred, so this makes no CUDA call.
    const Result<cudaEvent_t> event = front.work.event->recorded();
    Status failed = event.status();
    if (event.ok()) {
      cudaError_t query = cudaSuccess;
      if (front.work.event != seen_complete && !(front.work.done && front.work.done.reached())) {
        if (!front.event_query_due()) break;
        query = cudaEventQuery(*event);
      }
      if (query == cudaErrorNotReady) break;
      if (query == cudaSuccess) {
        if (strategy == CompletionStrategy::host_callback) break;  // its callback is about to run
        seen_complete = front.work.event;
        if (front.claim()) front.finish(Status());
        queue.pop_front();
        progressed = true;
        continue;
      }
      failed = cuda_status(query, fmt::format("GPU work of a request on {}", device_name));
    }
    if (failed.code() == Code::context_lost) {
      lost = failed;
      return true;
    }
    if (front.claim()) front.finish(failed);
    queue.pop_front();
    progressed = true;
  }
  return progressed;
}

// Answers what has finished; returns whether anything did.
bool CompletionQueue::State::poll() {
  bool progressed = false;
  for (auto& [stream, queue] : pending) {
    Status lost;
    progressed = answer_front(queue, strategy, device_name, lost) || progressed;
    if (!lost.ok()) {
      fail_everything(health->poison(lost));
      return true;
    }
  }
  return progressed;
}

void CompletionQueue::State::fail_everything(const Status& reply) {
  {
    std::lock_guard lock(mutex);
    for (auto& [stream, work] : incoming) pending[stream].push_back(std::move(work));
    incoming.clear();
    incoming_count.store(0, std::memory_order_release);
  }
  for (auto& [stream, queue] : pending) fail_all(queue, reply);
}

void CompletionQueue::fail_all(PendingQueue& queue, const Status& reply) {
  for (std::shared_ptr<Pending>& pending : queue)
    if (pending->claim()) pending->finish(reply);
  queue.clear();
}

}  // namespace accel::device::cuda
