#include "device/isolated/worker.hpp"

#include <fmt/format.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <execinfo.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "accel/core/actor.hpp"
#include "device/cpu_device.hpp"
#include "device/device_options_codec.hpp"
#include "device/device_shared.hpp"
#include "device/isolated/channel.hpp"
#include "device/isolated/compute_watch.hpp"
#include "device/isolated/wire.hpp"
#if ACCEL_HAVE_CUDA
#include "device/cuda/cuda_backend.hpp"
#endif

namespace accel::device::isolated {
namespace {

constexpr std::chrono::seconds kDrainLimit{2};

// The worker's side of the channel: one serving thread takes requests in order and hands them to the stream
// states of an in-process device; replies are written by whichever thread completes them (the serving thread,
// or the CUDA completion thread).
class Worker {
 public:
  Worker(Channel channel, pid_t parent, int slot)
      : channel_(std::move(channel)), parent_(parent), slot_(&channel_.header().workers[slot]) {}

  int run() {
    Status built = build();
    if (!built.ok()) {
      slot_->start_error_code = static_cast<std::uint8_t>(built.code());
      const std::string message(built.message());
      std::strncpy(slot_->start_error, message.c_str(), sizeof slot_->start_error - 1);
      slot_->state.store(WorkerState::failed, std::memory_order_release);
      return 1;
    }
    slot_->heartbeat_ns.store(monotonic_ns(), std::memory_order_release);
    slot_->state.store(WorkerState::ready, std::memory_order_release);
    if (!wait_for_promotion()) return stop();
    if (shared_->options.kind == DeviceKind::cpu) compute_watch_.emplace(slot_->heartbeat_ns, heartbeat_interval_);
    return serve();
  }

 private:
  Status build() {
    const WorkerSetupArea& area = channel_.header().setup;
    ByteReader in(std::span<const std::byte>(area.encoding, std::min<std::size_t>(area.bytes, sizeof area.encoding)));
    ACCEL_ASSIGN_OR_RETURN(WorkerSetup setup, decode_worker_setup(in));
    shared_ = std::make_shared<DeviceShared>();
    shared_->id = setup.device_id;
    shared_->name = std::move(setup.name);
    shared_->options = std::move(setup.options);
    shared_->last_epoch.store(slot_->epoch_base, std::memory_order_relaxed);
    // A JIT compile may keep a request waiting for tens of seconds: that is work, not a hang.
    shared_->keep_alive = [slot = slot_] { slot->heartbeat_ns.store(monotonic_ns(), std::memory_order_relaxed); };
    spin_ = shared_->options.worker.spin;
    // The serving loop stamps its heartbeat at least this often: an eighth of what the supervisor waits.
    heartbeat_interval_ = std::max<std::chrono::milliseconds>(shared_->options.worker.heartbeat_timeout / 8,
                                                              std::chrono::milliseconds(1));
    if (shared_->options.kind == DeviceKind::cuda) {
#if ACCEL_HAVE_CUDA
      ACCEL_ASSIGN_OR_RETURN(shared_->backend, open_cuda_backend(*shared_));
      ACCEL_RETURN_IF_ERROR(pin_host_memory(channel_.staging()));
#else
      return not_supported(fmt::format("{}: this build of accel-worker has no CUDA device tier", shared_->name));
#endif
    } else {
      shared_->backend = make_cpu_backend();
    }
    return Status();
  }

  // A standby waits here, context built, until the client promotes it (or stops it, or goes away).
  bool wait_for_promotion() {
    while (slot_->promoted.load(std::memory_order_acquire) == 0) {
      if (slot_->stop_requested.load(std::memory_order_acquire) != 0) return false;
      if (::getppid() != parent_) std::_Exit(0);
      slot_->heartbeat_ns.store(monotonic_ns(), std::memory_order_relaxed);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
  }

  int serve() {
    Ring& requests = channel_.requests();
    alignas(8) std::byte message[kRequestSlotBytes];
    while (true) {
      slot_->heartbeat_ns.store(monotonic_ns(), std::memory_order_relaxed);
      if (poisoned_.load(std::memory_order_acquire)) {
        answer_held();
        drain_outstanding();
        std::_Exit(kExitContextLost);
      }
      if (slot_->stop_requested.load(std::memory_order_acquire) != 0) return stop();
      const std::byte* slot = requests.peek();
      if (slot == nullptr) {
        end_bursts();
        StreamsIdle idle{*this};
        if (!requests.wait(spin_, heartbeat_interval_, idle) && ::getppid() != parent_) std::_Exit(0);
        continue;
      }
      MessageHeader request_header;
      std::memcpy(&request_header, slot, sizeof request_header);
      const std::size_t bytes =
          std::min<std::size_t>(request_header.bytes, requests.message_bytes() - sizeof request_header);
      std::memcpy(message, slot + sizeof request_header, bytes);
      requests.release();  // taken: from now on this worker answers it, or its loss does
      take(request_header, std::span<const std::byte>(message, bytes));
    }
  }

  void take(const MessageHeader& message, std::span<const std::byte> payload) {
    if (message.tag == kCloseStreamTag) {
      if (shared_->backend->has_streams()) streams_.erase(message.stream);
      write_reply(message.id, Result<Done>(Done{}));
      return;
    }
    const bool known = visit_request(message.tag, payload, [&](auto& request) { serve_one(message, request); });
    if (!known) {
      write_reply(message.id,
                  Result<Done>(internal_error(fmt::format("{}: the worker does not know request tag {} of {} bytes",
                                                          shared_->name, message.tag, payload.size()))));
    }
  }

  template <class Request>
  void serve_one(const MessageHeader& message, Request& request) {
    serve_request(message, request);
  }

  // A staged request, decoded (and validated) from the staging region.
  template <class Request>
  void serve_one(const MessageHeader& message, Staged<Request>& staged) {
    const std::span<std::byte> staging = channel_.staging();
    if (staged.offset > staging.size() || staged.bytes > staging.size() - staged.offset) {
      write_reply(message.id, Result<response_t<Request>>(internal_error(fmt::format(
                                  "{}: a staged {} lies outside the staging region", shared_->name, Request::kName))));
      return;
    }
    Result<Request> decoded =
        decode_staged<Request>(std::span<const std::byte>(staging.data() + staged.offset, staged.bytes));
    if (!decoded.ok()) {
      write_reply(message.id, Result<response_t<Request>>(decoded.status()));
      return;
    }
    serve_request(message, *decoded);
  }

  template <class Request>
  void serve_request(const MessageHeader& message, Request& request) {
    using Response = response_t<Request>;
    if constexpr (std::is_same_v<Request, InjectFault>) {
      if (request.kind == FaultKind::worker_crash) std::abort();
      if (request.kind == FaultKind::worker_hang) hang();
    }
    if constexpr (std::is_same_v<Request, ShareMemory>) {  // the client refuses it; an address of its is not ours
      write_reply(message.id,
                  Result<Response>(not_supported("ShareMemory: a worker shares no memory with its client")));
      return;
    }
    if constexpr (std::is_same_v<Request, JoinOrders>) {  // the client refuses it too; its meetings are not ours
      write_reply(message.id, Result<Response>(not_supported("JoinOrders: a worker joins no orders of its client")));
      return;
    }
    if (Status placed = place_in_staging(request); !placed.ok()) {
      write_reply(message.id, Result<Response>(std::move(placed)));
      return;
    }
    Result<DeviceProtocol::Handler*> handler = stream(message.stream);
    if (!handler.ok()) {
      write_reply(message.id, Result<Response>(handler.status()));
      return;
    }
    auto state = std::make_shared<accel::detail::FutureState<Response>>();
    outstanding_.fetch_add(1, std::memory_order_acq_rel);
    state->on_ready([this, id = message.id](Result<Response> result) {
      if (result.status().code() == Code::context_lost) poisoned_.store(true, std::memory_order_release);
      write_reply(id, result);
      outstanding_.fetch_sub(1, std::memory_order_acq_rel);
    });
    Envelope<Request> envelope{.request = std::move(request), .reply = Promise<Response>(std::move(state))};
    const Status status = run_handler<Request>(**handler, envelope, shared_->name);
    // As the in-process supervisor would: a lost context ends the worker, an internal error rebuilds the stream.
    if (status.code() == Code::context_lost) poisoned_.store(true, std::memory_order_release);
    if (status.code() == Code::internal) streams_.erase(shared_->backend->has_streams() ? message.stream : 0);
  }

  // Host pointers of copies arrive as offsets into the staging region.
  template <class Request>
  Status place_in_staging(Request& request) {
    if constexpr (std::is_same_v<Request, CopyToDevice>) {
      return rebase(request.source.data, request.source.count, request.source.dtype);
    } else if constexpr (std::is_same_v<Request, CopyToHost>) {
      return rebase(request.destination.data, request.destination.count, request.destination.dtype);
    } else {
      return Status();
    }
  }

  // The count and dtype come from the client's ring: a count whose byte size overflows, or a dtype byte that names
  // none, is refused rather than wrapped into a small size that passes the bounds check.
  template <class Pointer>
  Status rebase(Pointer& data, std::uint64_t count, DType dtype) {
    const auto offset = reinterpret_cast<std::uintptr_t>(data);
    const std::span<std::byte> staging = channel_.staging();
    const std::uint64_t element = is_dtype(static_cast<std::uint8_t>(dtype)) ? size_of(dtype) : 0;
    if (element == 0 || count > staging.size() / element) {
      return internal_error(
          fmt::format("{}: a copy of {} elements of dtype byte {} does not fit the {}-byte staging "
                      "region",
                      shared_->name, count, static_cast<int>(dtype), staging.size()));
    }
    const std::uint64_t bytes = count * element;
    if (offset > staging.size() || bytes > staging.size() - offset) {
      return internal_error(fmt::format("{}: a copy of {} bytes at staging offset {} lies outside the {}-byte region",
                                        shared_->name, bytes, offset, staging.size()));
    }
    data = staging.data() + offset;
    return Status();
  }

  // A device without streams (the CPU) serves every stream of the client with its one state.
  Result<DeviceProtocol::Handler*> stream(std::uint32_t id) {
    if (!shared_->backend->has_streams()) id = 0;
    auto it = streams_.find(id);
    if (it == streams_.end()) {
      ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<DeviceProtocol::Handler> state,
                             shared_->backend->make_stream_state(shared_));
      it = streams_.emplace(id, std::move(state)).first;
    }
    return it->second.get();
  }

  template <class T>
  void write_reply(std::uint64_t id, const Result<T>& result) {
    std::lock_guard lock(reply_mutex_);
    Ring& replies = channel_.replies();
    std::byte* slot = nullptr;
    while ((slot = replies.try_claim()) == nullptr) {
      if (::getppid() != parent_) std::_Exit(0);
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    const std::size_t bytes = encode_reply(
        std::span<std::byte>(slot + sizeof(MessageHeader), replies.message_bytes() - sizeof(MessageHeader)), result);
    const MessageHeader header{.id = id, .bytes = static_cast<std::uint32_t>(bytes)};
    std::memcpy(slot, &header, sizeof header);
    replies.publish();
  }

  // FaultKind::worker_hang: the serving thread stops for good, so the heartbeat stops.
  [[noreturn]] void hang() {
    while (true) ::pause();
  }

  void drain_outstanding() {
    const auto deadline = std::chrono::steady_clock::now() + kDrainLimit;
    while (outstanding_.load(std::memory_order_acquire) > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  // The ring is empty: what the streams hold back for a burst of requests is answered now, as an actor's mailbox
  // found empty does (Protocol::Handler::mailbox_empty); a CUDA stream watches its burst's work itself.
  void end_bursts() {
    for (auto& [id, stream] : streams_) stream->mailbox_empty();
  }

  // While the ring stays empty the serving thread answers the work its streams watch, as an actor's thread does
  // while its mailbox is (Note [Watching one's own work] in cuda_stream.hpp): no other thread of the worker comes
  // between the GPU's end of a request and its reply. What is still watched when a request comes, or before the
  // thread sleeps, goes to the completion thread.
  struct StreamsIdle {
    Worker& worker;
    bool owes_replies() const { return worker.outstanding_.load(std::memory_order_acquire) != 0; }
    void look() {
      for (auto& [id, stream] : worker.streams_) stream->look_after_replies();
    }
    void hand_over() {
      for (auto& [id, stream] : worker.streams_) stream->hand_over_replies();
    }
  };

  // Nothing is left held or watched: the completion thread has every reply still owed.
  void answer_held() {
    end_bursts();
    StreamsIdle{*this}.hand_over();
  }

  int stop() {
    answer_held();
    drain_outstanding();
    streams_.clear();
    shared_.reset();
    return 0;
  }

  Channel channel_;
  const pid_t parent_;
  WorkerSlot* slot_;
  std::shared_ptr<DeviceShared> shared_;
  std::unordered_map<std::uint32_t, std::unique_ptr<DeviceProtocol::Handler>> streams_;
  std::chrono::nanoseconds spin_{0};
  std::chrono::milliseconds heartbeat_interval_{1};
  std::mutex reply_mutex_;
  std::atomic<bool> poisoned_{false};
  std::atomic<std::int64_t> outstanding_{0};
  std::optional<ComputeWatch> compute_watch_;  // a CPU worker's (compute_watch.hpp)
};

std::optional<long> flag_value(std::string_view arg, std::string_view flag) {
  if (!arg.starts_with(flag) || arg.size() <= flag.size() || arg[flag.size()] != '=') return std::nullopt;
  return std::strtol(std::string(arg.substr(flag.size() + 1)).c_str(), nullptr, 10);
}

}  // namespace

namespace {

// A crashing worker leaves its stack on stderr (the client only learns the signal): addresses as
// "accel-worker(+offset)", for addr2line against the unstripped build.
void print_stack_and_die(int signal) {
  void* frames[64];
  const int count = ::backtrace(frames, 64);
  const char banner[] = "accel-worker: fatal signal; stack:\n";
  (void)!::write(STDERR_FILENO, banner, sizeof banner - 1);
  ::backtrace_symbols_fd(frames, count, STDERR_FILENO);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

int run_worker(int argc, char** argv) {
  for (int signal : {SIGSEGV, SIGBUS, SIGILL, SIGFPE}) std::signal(signal, print_stack_and_die);
  long channel_fd = -1, worker_wake_fd = -1, client_wake_fd = -1, parent = -1, slot = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (auto v = flag_value(arg, "--channel-fd")) channel_fd = *v;
    if (auto v = flag_value(arg, "--worker-wake-fd")) worker_wake_fd = *v;
    if (auto v = flag_value(arg, "--client-wake-fd")) client_wake_fd = *v;
    if (auto v = flag_value(arg, "--parent")) parent = *v;
    if (auto v = flag_value(arg, "--slot")) slot = *v;
  }
  if (channel_fd < 0 || worker_wake_fd < 0 || client_wake_fd < 0 || parent <= 0 || slot < 0 || slot >= kWorkerSlots) {
    fmt::print(stderr,
               "accel-worker serves one isolated accel device and is started by the accel library, not by hand.\n"
               "usage: accel-worker --channel-fd=N --worker-wake-fd=N --client-wake-fd=N --parent=PID --slot=N\n");
    return 2;
  }
  // Dies with the client's thread that spawned it (its monitor, which lives as long as the device); a client gone
  // before this line is seen by the check after it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != static_cast<pid_t>(parent)) return 3;  // the client is already gone
  Result<Channel> channel =
      Channel::attach(static_cast<int>(channel_fd), static_cast<int>(worker_wake_fd), static_cast<int>(client_wake_fd));
  if (!channel.ok()) {
    fmt::print(stderr, "accel-worker: {}\n", channel.status().message());
    return 2;
  }
  Worker worker(std::move(*channel), static_cast<pid_t>(parent), static_cast<int>(slot));
  return worker.run();
}

}  // namespace accel::device::isolated
