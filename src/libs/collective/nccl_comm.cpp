#include "libs/collective/nccl_comm.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <future>

namespace accel::collective {
namespace {

using namespace std::chrono_literals;

static_assert(sizeof(ncclUniqueId) == UniqueId::kBytes, "a UniqueId holds an ncclUniqueId");

Code code_of(ncclResult_t result) noexcept {
  switch (result) {
    case ncclInvalidArgument:
    case ncclInvalidUsage: return Code::invalid_argument;
    case ncclSystemError:
    case ncclRemoteError: return Code::unavailable;
    default: return Code::internal;
  }
}

// NCCL reads its environment when the first communicator is made, so it is set once, before that, without
// overriding a value the user gave. NVLink multicast (NVLS) stays off: the multi-GPU machines this runs on hang
// with it on (their notes). The collectives' channels are connected while the world is joined, which can wait
// for peers safely, rather than by a first collective on the blocking communicator, which could not (the header
// says why there are two).
void configure_environment() {
  static std::once_flag once;
  std::call_once(once, [] {
    ::setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
    ::setenv("NCCL_RUNTIME_CONNECT", "0", /*overwrite=*/0);
  });
}

std::string describe(const Comm& comm) {
  return fmt::format("communicator {} (rank {} of {})", comm.id, comm.rank, comm.ranks);
}

}  // namespace

Status nccl_status(ncclResult_t result, std::string_view what, ncclComm_t comm) {
  if (result == ncclSuccess) return Status();
  const char* detail = ncclGetLastError(comm);
  return Status(code_of(result),
                fmt::format("{}: {}{}{}", what, ncclGetErrorString(result), detail != nullptr && *detail ? ": " : "",
                            detail != nullptr ? detail : ""),
                Source::nccl, static_cast<std::int64_t>(result));
}

Result<ncclDataType_t> to_nccl(DType dtype) {
  switch (dtype) {
    case DType::i8: return ncclInt8;
    case DType::u8: return ncclUint8;
    case DType::i32: return ncclInt32;
    case DType::u32: return ncclUint32;
    case DType::i64: return ncclInt64;
    case DType::u64: return ncclUint64;
    case DType::f16: return ncclFloat16;
    case DType::f32: return ncclFloat32;
    case DType::f64: return ncclFloat64;
    case DType::bf16: return ncclBfloat16;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2: {
      static const int version = [] {
        int v = 0;
        return ncclGetVersion(&v) == ncclSuccess ? v : 0;
      }();
      if (version < 22400) {
        return not_supported(
            fmt::format("{} needs NCCL 2.24 or later; the loaded NCCL is {}", to_string(dtype), version));
      }
      return dtype == DType::fp8_e4m3 ? ncclFloat8e4m3 : ncclFloat8e5m2;
    }
    case DType::c64:
    case DType::c128:
    case DType::c32: break;
  }
  return not_supported(fmt::format("NCCL has no {}", to_string(dtype)));
}

ncclRedOp_t to_nccl(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::prod: return ncclProd;
    case ReduceOp::min: return ncclMin;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::avg: return ncclAvg;
  }
  return ncclSum;
}

NcclComm::~NcclComm() {
  // A destroy would wait for work, and for peers, that may never come.
  if (fast_ != nullptr) ncclCommAbort(fast_);
  if (safe_ != nullptr) ncclCommAbort(safe_);
  for (const auto& pending : pending_) {
    if (cudaEventQuery(pending->done) != cudaErrorNotReady) cudaEventDestroy(pending->done);
  }
  for (cudaEvent_t event : spare_events_) cudaEventDestroy(event);
}

Status NcclComm::init(const UniqueId& id, CudaTarget& target) {
  configure_environment();
  ncclConfig_t safe = NCCL_CONFIG_INITIALIZER;
  safe.blocking = 0;
  ncclUniqueId nccl_id;
  std::memcpy(&nccl_id, id.bytes.data(), sizeof nccl_id);
  std::unique_lock lock(mutex_);
  const ncclResult_t joined = ncclCommInitRankConfig(&safe_, comm_.ranks, nccl_id, comm_.rank, &safe);
  ACCEL_RETURN_IF_ERROR(settle(lock, safe_, joined, "ncclCommInitRankConfig", target));
  if (!split_) return Status();
  ncclConfig_t fast = NCCL_CONFIG_INITIALIZER;
  fast.blocking = 1;
  fast.splitShare = 1;
  // The split is collective over `safe`, which makes it non-blocking; NCCL writes the new handle from its own
  // thread when the split's job ends, which can be after `safe` reads done: so `fast` is then waited for too.
  ACCEL_RETURN_IF_ERROR(
      settle(lock, safe_, ncclCommSplit(safe_, 0, comm_.rank, &fast_, &fast), "ncclCommSplit", target));
  return settle(lock, fast_, ncclInProgress, "ncclCommSplit", target);
}

Status NcclComm::usable(std::string_view request) const {
  if (failure_.ok()) return Status();
  return failure_.with_context(request);
}

Status NcclComm::settle(std::unique_lock<std::mutex>&, ncclComm_t& comm, ncclResult_t result, std::string_view what,
                        CudaTarget& target) {
  const Clock::time_point start = Clock::now();
  Clock::time_point alive = start;
  while (result == ncclInProgress) {
    const Clock::time_point now = Clock::now();
    if (now - start > timeout_) {
      Status cause = deadline_exceeded(
          fmt::format("{}: {} did not complete within {} ms", what, describe(comm_), timeout_.count()));
      abort_locked(cause);
      return cause;
    }
    if (now - alive > 100ms) {
      target.keep_alive();  // an isolated worker's supervisor is not to take this wait for a hang
      alive = now;
    }
    // A non-blocking communicator launches every collective from a thread of its own and answers ncclInProgress
    // meanwhile, which takes tens of microseconds: yielding catches its end, where a sleep would add the timer's
    // slack (50 us or more) to every small collective. Long waits (joining the world, connecting) sleep.
    if (now - start < 500us) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(20us);
    }
    const ncclComm_t made = std::atomic_ref<ncclComm_t>(comm).load();
    if (made == nullptr) continue;  // not written yet by the NCCL thread that makes it
    ncclResult_t state = ncclSuccess;
    const ncclResult_t asked = ncclCommGetAsyncError(made, &state);
    result = asked != ncclSuccess ? asked : state;
  }
  if (result != ncclSuccess) {
    Status cause = nccl_status(result, what, comm).with_context(describe(comm_));
    abort_locked(cause);
    return cause;
  }
  return Status();
}

Status NcclComm::track(CudaRun& run) {
  cudaEvent_t event = nullptr;
  if (!spare_events_.empty()) {
    event = spare_events_.back();
    spare_events_.pop_back();
  } else {
    ACCEL_RETURN_IF_ERROR(
        run.target.check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags"));
  }
  ACCEL_RETURN_IF_ERROR(run.target.check(cudaEventRecord(event, run.target.stream()), "cudaEventRecord"));
  auto pending = std::make_shared<Pending>();
  pending->done = event;
  pending->since = Clock::now();
  pending_.push_back(pending);
  run.check_result = [pending](std::span<const std::byte>) -> Status {
    if (pending->failed.load(std::memory_order_acquire)) return pending->failure;
    return Status();
  };
  return Status();
}

void NcclComm::abort_locked(const Status& cause) {
  failure_ = stale_handle(fmt::format("{} was aborted: {}", describe(comm_), cause.message()));
  for (const auto& pending : pending_) {
    if (pending->failed.load(std::memory_order_relaxed) || cudaEventQuery(pending->done) == cudaSuccess) continue;
    pending->failure = cause;
    pending->failed.store(true, std::memory_order_release);
  }
  // Their kernels end; the pending collectives' completions then read their marks.
  for (ncclComm_t* comm : {&fast_, &safe_}) {
    if (*comm != nullptr) ncclCommAbort(*comm);
    *comm = nullptr;
  }
}

void NcclComm::watch() {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;  // a request is in an NCCL call; it keeps its own deadline
  for (ncclComm_t comm : {fast_, safe_}) {
    if (comm == nullptr) continue;
    ncclResult_t state = ncclSuccess;
    const ncclResult_t asked = ncclCommGetAsyncError(comm, &state);
    const ncclResult_t error = asked != ncclSuccess ? asked : state;
    if (error != ncclSuccess && error != ncclInProgress) {
      abort_locked(nccl_status(error, "NCCL reported an asynchronous error (a peer died or a link failed)", comm)
                       .with_context(describe(comm_)));
      break;
    }
  }
  while (!pending_.empty()) {
    const std::shared_ptr<Pending>& front = pending_.front();
    const cudaError_t state = cudaEventQuery(front->done);
    const Clock::time_point now = Clock::now();
    if (state == cudaSuccess) {
      spare_events_.push_back(front->done);
      pending_.pop_front();
      if (!pending_.empty()) pending_.front()->since = now;
      continue;
    }
    if (state == cudaErrorNotReady && safe_ != nullptr && now - front->since > timeout_) {
      abort_locked(deadline_exceeded(
          fmt::format("{}: a collective made no progress for {} ms (a peer rank is dead, stopped or not calling it)",
                      describe(comm_), timeout_.count())));
    }
    break;
  }
}

Status NcclComm::destroy(CudaTarget& target) {
  std::unique_lock lock(mutex_);
  if (safe_ == nullptr) return Status();  // aborted: NCCL freed them then
  // ncclCommDestroy blocks even for a non-blocking communicator, and across processes it returns only once the
  // other ranks of this host destroy theirs too (each process's proxy serves the others until then). So the
  // communicators are finalised and destroyed, the split one first, on a thread of their own while this one keeps
  // an isolated worker alive and keeps the communicator's deadline; a call still blocked then is left to finish
  // whenever the others come.
  auto destroyed = std::make_shared<std::promise<ncclResult_t>>();
  std::future<ncclResult_t> result = destroyed->get_future();
  std::thread([safe = safe_, fast = fast_, destroyed] {
    ncclResult_t first = fast != nullptr ? ncclCommDestroy(fast) : ncclSuccess;
    ncclResult_t finalized = ncclCommFinalize(safe);
    while (finalized == ncclInProgress) {
      std::this_thread::sleep_for(1ms);
      ncclResult_t state = ncclSuccess;
      const ncclResult_t asked = ncclCommGetAsyncError(safe, &state);
      finalized = asked != ncclSuccess ? asked : state;
    }
    const ncclResult_t freed = ncclCommDestroy(safe);
    if (first == ncclSuccess) first = finalized != ncclSuccess ? finalized : freed;
    destroyed->set_value(first);
  }).detach();
  safe_ = nullptr;
  fast_ = nullptr;
  failure_ = stale_handle(fmt::format("{} was destroyed", describe(comm_)));
  const Clock::time_point deadline = Clock::now() + timeout_;
  while (result.wait_for(100ms) != std::future_status::ready) {
    if (Clock::now() > deadline) {
      return deadline_exceeded(fmt::format(
          "ncclCommDestroy: {} is not destroyed after {} ms: every rank of this host must destroy its communicator",
          describe(comm_), timeout_.count()));
    }
    target.keep_alive();
  }
  return nccl_status(result.get(), "ncclCommDestroy");
}

Result<std::unique_ptr<NcclComms>> NcclComms::open(CudaTarget& target) {
  int device = 0;
  ACCEL_RETURN_IF_ERROR(target.check(cudaGetDevice(&device), "cudaGetDevice"));
  return std::unique_ptr<NcclComms>(new NcclComms(device));
}

NcclComms::NcclComms(int device) : device_(device) {
  watchdog_ = std::thread([this] { watch_loop(); });
}

NcclComms::~NcclComms() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  watchdog_.join();
}

void NcclComms::watch_loop() {
  cudaSetDevice(device_);  // the events it queries are this device's
  std::vector<std::shared_ptr<NcclComm>> comms;
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, 1ms, [&] { return stopping_; })) {
    comms.clear();
    for (const auto& [id, comm] : comms_) comms.push_back(comm);
    lock.unlock();
    for (const auto& comm : comms) comm->watch();
    lock.lock();
  }
}

Status NcclComms::init(const InitComm& request, CudaTarget& target) {
  {
    std::lock_guard lock(mutex_);
    if (comms_.contains(request.comm.id)) {
      return invalid_argument(
          fmt::format("{}: communicator {} exists already on this device", InitComm::kName, request.comm.id));
    }
  }
  auto comm = std::make_shared<NcclComm>(request.comm, device_, std::chrono::milliseconds(request.timeout_ms),
                                         request.blocking_collectives);
  ACCEL_RETURN_IF_ERROR(comm->init(request.id, target).with_context(InitComm::kName));
  std::lock_guard lock(mutex_);
  comms_[request.comm.id] = std::move(comm);
  return Status();
}

Status NcclComms::destroy(const Comm& comm, CudaTarget& target) {
  std::shared_ptr<NcclComm> found;
  {
    std::lock_guard lock(mutex_);
    auto it = comms_.find(comm.id);
    if (it == comms_.end()) {
      return stale_handle(fmt::format("{}: no communicator {} on this device", DestroyComm::kName, comm.id));
    }
    found = std::move(it->second);
    comms_.erase(it);
  }
  return found->destroy(target).with_context(DestroyComm::kName);
}

Result<std::shared_ptr<NcclComm>> NcclComms::find(std::string_view request, const Comm& comm) {
  std::lock_guard lock(mutex_);
  auto it = comms_.find(comm.id);
  if (it == comms_.end()) {
    return stale_handle(fmt::format(
        "{}: no communicator {} on this device (destroyed, never made, or the device's context was rebuilt)", request,
        comm.id));
  }
  const Comm& has = it->second->comm();
  if (has != comm) {
    return invalid_argument(fmt::format("{}: communicator {} is rank {} of {}; the request says rank {} of {}", request,
                                        comm.id, has.rank, has.ranks, comm.rank, comm.ranks));
  }
  return it->second;
}

}  // namespace accel::collective
