#include "libs/collective/host_world.hpp"

#include <fmt/format.h>

#include <array>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <vector>

#include "libs/collective/host_reduce.hpp"

namespace accel::collective {

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<std::byte>;

class HostWorld {
 public:
  enum Channel : int { collective = 0, point_to_point = 1 };

  explicit HostWorld(std::int32_t ranks)
      : ranks_(ranks),
        joined_(static_cast<std::size_t>(ranks), false),
        queues_(2 * static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks)) {}

  [[nodiscard]] std::int32_t ranks() const noexcept { return ranks_; }

  Status join(const Comm& comm, Clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    if (comm.ranks != ranks_) {
      return invalid_argument(
          fmt::format("collective::InitComm: rank {} says {} ranks, the world has {}", comm.rank, comm.ranks, ranks_));
    }
    if (joined_[static_cast<std::size_t>(comm.rank)])
      return invalid_argument(fmt::format("collective::InitComm: rank {} of this world joined already", comm.rank));
    joined_[static_cast<std::size_t>(comm.rank)] = true;
    ++count_;
    changed_.notify_all();
    if (changed_.wait_until(lock, deadline, [&] { return count_ == ranks_; })) return Status();
    joined_[static_cast<std::size_t>(comm.rank)] = false;
    --count_;
    return deadline_exceeded(fmt::format(
        "collective::InitComm: {} of {} ranks joined the CPU world in time (a CPU world's ranks are CPU devices of "
        "one process; an isolated device is a process of its own)",
        count_ + 1, ranks_));
  }

  void post(Channel channel, std::int32_t from, std::int32_t to, Bytes message) {
    std::lock_guard lock(mutex_);
    queue(channel, from, to).push_back(std::move(message));
    changed_.notify_all();
  }

  Result<Bytes> take(Channel channel, std::int32_t from, std::int32_t to, Clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    std::deque<Bytes>& q = queue(channel, from, to);
    if (!changed_.wait_until(lock, deadline, [&] { return !q.empty(); })) {
      return deadline_exceeded(fmt::format("rank {} received nothing from rank {} in time", to, from));
    }
    Bytes message = std::move(q.front());
    q.pop_front();
    return message;
  }

 private:
  std::deque<Bytes>& queue(Channel channel, std::int32_t from, std::int32_t to) {
    const auto n = static_cast<std::size_t>(ranks_);
    return queues_[(static_cast<std::size_t>(channel) * n + static_cast<std::size_t>(from)) * n +
                   static_cast<std::size_t>(to)];
  }

  const std::int32_t ranks_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<bool> joined_;
  std::int32_t count_ = 0;
  std::vector<std::deque<Bytes>> queues_;
};

namespace {

Bytes copy_of(const std::byte* data, std::uint64_t bytes) { return Bytes(data, data + bytes); }

// What one step posts before any step of its group takes.
void post_step(HostWorld& world, const Comm& comm, const StepUse& u, const BufferView& send) {
  const Step& s = u.step;
  const std::uint64_t part = s.count * size_of(s.dtype);
  const std::byte* in = send.data == nullptr ? nullptr : send.at(s.send_offset);
  for (std::int32_t r = 0; r < comm.ranks; ++r) {
    if (r == comm.rank) continue;
    switch (s.kind) {
      case Kind::all_reduce:
      case Kind::all_gather: world.post(HostWorld::collective, comm.rank, r, copy_of(in, part)); break;
      case Kind::reduce_scatter:
        world.post(HostWorld::collective, comm.rank, r, copy_of(in + static_cast<std::uint64_t>(r) * part, part));
        break;
      case Kind::broadcast:
        if (s.peer == comm.rank) world.post(HostWorld::collective, comm.rank, r, copy_of(in, part));
        break;
      case Kind::reduce:
        if (r == s.peer) world.post(HostWorld::collective, comm.rank, r, copy_of(in, part));
        break;
      case Kind::send:
        if (r == s.peer) world.post(HostWorld::point_to_point, comm.rank, r, copy_of(in, part));
        break;
      case Kind::recv: break;
    }
  }
  if (s.kind == Kind::send && s.peer == comm.rank)
    world.post(HostWorld::point_to_point, comm.rank, comm.rank, copy_of(in, part));
}

}  // namespace

Status HostComm::health() const { return failure_; }

Status HostComm::abort(Status cause) {
  failure_ = stale_handle(fmt::format("communicator {} (rank {} of {}) was aborted: {}", comm_.id, comm_.rank,
                                      comm_.ranks, cause.message()));
  world_.reset();
  return cause;
}

Status HostComm::run(std::string_view request, const CheckedSteps& checked, std::span<const BufferView> views) {
  ACCEL_RETURN_IF_ERROR(failure_);
  HostWorld& world = *world_;
  const Clock::time_point deadline = Clock::now() + timeout_;
  for (std::size_t i = 0; i < checked.steps.size(); ++i) post_step(world, comm_, checked.steps[i], views[send_slot(i)]);
  const auto take = [&](HostWorld::Channel channel, std::int32_t from, std::uint64_t bytes,
                        std::size_t i) -> Result<Bytes> {
    Result<Bytes> got = world.take(channel, from, comm_.rank, deadline);
    if (!got.ok()) {
      return abort(got.status().with_context(step_name(request, i, checked.steps.size(), checked.steps[i].step.kind)));
    }
    if (got->size() != bytes) {
      return abort(invalid_argument(fmt::format("{}: rank {} sent {} bytes, this rank expects {}",
                                                step_name(request, i, checked.steps.size(), checked.steps[i].step.kind),
                                                from, got->size(), bytes)));
    }
    return got;
  };
  for (std::size_t i = 0; i < checked.steps.size(); ++i) {
    const Step& s = checked.steps[i].step;
    const std::uint64_t part = s.count * size_of(s.dtype);
    const BufferView& send = views[send_slot(i)];
    const BufferView& recv = views[recv_slot(i)];
    const std::byte* in = send.data == nullptr ? nullptr : send.at(s.send_offset);
    std::byte* out = recv.data == nullptr ? nullptr : recv.at(s.recv_offset);
    std::vector<Bytes> parts(static_cast<std::size_t>(comm_.ranks));
    std::vector<const std::byte*> inputs(static_cast<std::size_t>(comm_.ranks));
    const bool reduces = s.kind == Kind::all_reduce || s.kind == Kind::reduce_scatter ||
                         (s.kind == Kind::reduce && s.peer == comm_.rank);
    if (reduces || s.kind == Kind::all_gather) {
      for (std::int32_t r = 0; r < comm_.ranks; ++r) {
        const auto at = static_cast<std::size_t>(r);
        if (r == comm_.rank) {
          inputs[at] = s.kind == Kind::reduce_scatter ? in + static_cast<std::uint64_t>(r) * part : in;
          continue;
        }
        ACCEL_ASSIGN_OR_RETURN(parts[at], take(HostWorld::collective, r, part, i));
        inputs[at] = parts[at].data();
      }
      if (reduces) {
        reduce_host(s.dtype, s.op, inputs, out, s.count);
      } else {
        for (std::size_t r = 0; r < inputs.size(); ++r) std::memmove(out + r * part, inputs[r], part);
      }
    } else if (s.kind == Kind::broadcast) {
      if (s.peer == comm_.rank) {
        if (part != 0) std::memmove(out, in, part);
      } else {
        ACCEL_ASSIGN_OR_RETURN(Bytes got, take(HostWorld::collective, s.peer, part, i));
        if (part != 0) std::memcpy(out, got.data(), part);
      }
    } else if (s.kind == Kind::recv) {
      ACCEL_ASSIGN_OR_RETURN(Bytes got, take(HostWorld::point_to_point, s.peer, part, i));
      if (part != 0) std::memcpy(out, got.data(), part);
    }
  }
  return Status();
}

struct HostComms::Table {
  std::mutex mutex;
  std::map<std::array<std::uint8_t, UniqueId::kBytes>, std::weak_ptr<HostWorld>> worlds;
  std::map<std::uint64_t, std::shared_ptr<HostComm>> comms;
};

HostComms& HostComms::instance() {
  static HostComms comms;
  return comms;
}

HostComms::Table& HostComms::table() {
  static Table table;
  return table;
}

UniqueId HostComms::new_unique_id() {
  std::random_device random;
  UniqueId id;
  for (std::uint8_t& byte : id.bytes) byte = static_cast<std::uint8_t>(random());
  return id;
}

Status HostComms::init(const InitComm& request) {
  Table& t = table();
  std::shared_ptr<HostWorld> world;
  {
    std::lock_guard lock(t.mutex);
    if (t.comms.contains(request.comm.id)) {
      return invalid_argument(
          fmt::format("collective::InitComm: communicator {} exists already (CPU communicator "
                      "ids are shared by the process's CPU devices)",
                      request.comm.id));
    }
    std::weak_ptr<HostWorld>& slot = t.worlds[request.id.bytes];
    world = slot.lock();
    if (world == nullptr) {
      world = std::make_shared<HostWorld>(request.comm.ranks);
      slot = world;
    }
  }
  ACCEL_RETURN_IF_ERROR(world->join(request.comm, Clock::now() + std::chrono::milliseconds(request.timeout_ms)));
  std::lock_guard lock(t.mutex);
  std::erase_if(t.worlds, [](const auto& entry) { return entry.second.expired(); });
  t.comms[request.comm.id] =
      std::make_shared<HostComm>(std::move(world), request.comm, std::chrono::milliseconds(request.timeout_ms));
  return Status();
}

Status HostComms::destroy(const Comm& comm) {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  if (t.comms.erase(comm.id) == 0)
    return stale_handle(fmt::format("collective::DestroyComm: no communicator {} on this device", comm.id));
  return Status();
}

Result<std::shared_ptr<HostComm>> HostComms::find(std::string_view request, const Comm& comm) {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  auto found = t.comms.find(comm.id);
  if (found == t.comms.end())
    return stale_handle(
        fmt::format("{}: no communicator {} on this device (destroyed, or never made)", request, comm.id));
  if (found->second->comm() != comm) {
    const Comm& has = found->second->comm();
    return invalid_argument(fmt::format("{}: communicator {} is rank {} of {}; the request says rank {} of {}", request,
                                        comm.id, has.rank, has.ranks, comm.rank, comm.ranks));
  }
  ACCEL_RETURN_IF_ERROR(found->second->health().with_context(request));
  return found->second;
}

}  // namespace accel::collective
