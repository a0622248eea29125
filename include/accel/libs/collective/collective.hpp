/// @file
/// Collective communication between devices (NCCL on CUDA devices; a world of CPU devices of one process on the
/// CPU), as requests on the device protocol. A communicator is the state of one rank on one device: InitComm makes
/// it on the device (in an isolated device's worker when the device is isolated), the collectives name it by its
/// Comm, and DestroyComm ends it. communicator.hpp builds communicators for several devices of one process, and
/// launcher.hpp for one process per GPU started by mpirun or torchrun.
///
/// Every collective is an ordinary request: it is ordered after the earlier requests on its buffers (on a CUDA
/// device by events, without a host wait), and its reply comes when its work has finished, with its real status.
///
/// Faults: a collective that has not finished `timeout_ms` after it became the oldest unfinished one of its
/// communicator, or an asynchronous error NCCL reports (a peer that died, a network error), aborts the
/// communicator (ncclCommAbort): every collective of it still pending is answered with the cause
/// (`deadline_exceeded` for the timeout, `unavailable` for an NCCL error), and every later request naming it is
/// answered `stale_handle` ("communicator 3 (rank 0 of 2) was aborted: ..."), until DestroyComm forgets it. A new
/// communicator (a new unique id, the surviving or restarted ranks) can then be built.
///
/// @code
///   auto comms = *accel::collective::init_all({dev0, dev1}).wait();
///   dev0.ask(accel::collective::all_reduce(comms[0].comm(), x0, x0, n, DType::f32, ReduceOp::sum));
///   dev1.ask(accel::collective::all_reduce(comms[1].comm(), x1, x1, n, DType::f32, ReduceOp::sum));
/// @endcode
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/result.hpp"

namespace accel::collective {

/// What a world is known by while it forms: NCCL's ncclUniqueId (128 bytes made by the process that hosts its
/// bootstrap root), or the name of a CPU world of this process. Every rank must be given the same bytes.
struct UniqueId {
  static constexpr std::size_t kBytes = 128;  ///< The size of an ncclUniqueId.
  std::array<std::uint8_t, kBytes> bytes{};   ///< the id's bytes, the same for every rank
  /// Equal when every field is.
  friend bool operator==(const UniqueId&, const UniqueId&) noexcept = default;
};

/// One rank's communicator on one device. `id` names it on that device (communicator.hpp hands out ids unique in
/// the process); `ranks` and `rank` travel with every request, so that a request is checked whole before it
/// reaches the device, which then checks them against the communicator it names.
struct Comm {
  std::uint64_t id = 0;    ///< 0 names none
  std::int32_t ranks = 0;  ///< the number of ranks in the world
  std::int32_t rank = 0;   ///< this communicator's rank, 0 to ranks - 1
  /// Equal when every field is.
  friend bool operator==(const Comm&, const Comm&) noexcept = default;
};

/// What a Step does (the table in Step's description gives its buffers).
enum class Kind : std::uint8_t { all_reduce, all_gather, reduce_scatter, broadcast, reduce, send, recv };
/// How all_reduce, reduce_scatter and reduce combine the ranks' elements; avg is the sum over the number of ranks.
enum class ReduceOp : std::uint8_t { sum, prod, min, max, avg };
/// The enumerator's name, for messages.
[[nodiscard]] std::string_view to_string(Kind kind) noexcept;
/// The enumerator's name, for messages.
[[nodiscard]] std::string_view to_string(ReduceOp op) noexcept;

/// One collective call, NCCL's arguments. `count` is in elements of `dtype`, as NCCL counts them:
///   all_reduce      count in send, count out in recv
///   all_gather      count in send, ranks * count out in recv (rank r's part at r * count)
///   reduce_scatter  ranks * count in send, count out in recv (rank r gets part r)
///   broadcast       count in send (read at the root only; null elsewhere), count out in recv
///   reduce          count in send, count out in recv (written at the root only; null elsewhere)
///   send / recv     count from send to rank `peer` / count from rank `peer` into recv (the other buffer null)
/// Buffers are used from their offsets (elements). In place is NCCL's: send and recv the same buffer, with
/// recv_offset == send_offset, except all_gather (send_offset == recv_offset + rank * count) and reduce_scatter
/// (recv_offset == send_offset + rank * count). Any other overlap of a written range is refused.
/// avg is the sum divided by the number of ranks (for integers, truncated, as NCCL does).
struct Step {
  Kind kind = Kind::all_reduce;   ///< which collective or point-to-point call
  DType dtype = DType::f32;       ///< element type of both buffers
  ReduceOp op = ReduceOp::sum;    ///< all_reduce, reduce_scatter, reduce
  std::int32_t peer = 0;          ///< the root of broadcast and reduce; the other rank of send and recv
  std::uint64_t count = 0;        ///< elements, as NCCL counts them (see the table above)
  BufferHandle send;              ///< the buffer read (null where the kind reads none on this rank)
  std::uint64_t send_offset = 0;  ///< elements from the start of send
  BufferHandle recv;              ///< the buffer written (null where the kind writes none on this rank)
  std::uint64_t recv_offset = 0;  ///< elements from the start of recv
};

/// Joins the world `id` as `rank` of `ranks` on this device and keeps the communicator as `comm.id`. Answered when
/// every rank has joined, or with `deadline_exceeded` after timeout_ms. The CPU device joins a CPU world of this
/// process (the other ranks are other CPU devices of this process); a CUDA device an NCCL world.
struct InitComm {
  static constexpr const char* kName = "collective::InitComm";
  using Response = Done;
  Comm comm;    ///< the communicator to make: its id on this device, the number of ranks and this rank
  UniqueId id;  ///< the world to join, the same on every rank
  std::uint32_t timeout_ms = 60'000;  ///< for the joining, and for each collective of the communicator
  /// CUDA: collectives run on a blocking communicator split from the non-blocking one that joins the world, which
  /// halves their launch time and costs GPU memory (CommOptions::blocking_collectives); false runs every call on the
  /// non-blocking one. A CPU world has one kind of communicator and ignores it.
  bool blocking_collectives = true;
};

/// Ends the communicator (NCCL's ncclCommDestroy after its pending work, or the rest of an aborted one). Its id may
/// be used again after.
struct DestroyComm {
  static constexpr const char* kName = "collective::DestroyComm";
  using Response = Done;
  Comm comm;  ///< the communicator
};

/// One collective or point-to-point call.
struct Collective {
  static constexpr const char* kName = "collective::Collective";
  using Response = Done;
  Comm comm;  ///< the communicator
  Step step;  ///< the call
};

/// Several calls as one NCCL group (ncclGroupStart ... ncclGroupEnd): they run concurrently, so sends and
/// receives between the same ranks do not wait for each other; none may write a range another one uses.
struct Group {
  static constexpr const char* kName = "collective::Group";
  static constexpr std::size_t kMaxSteps = 256;  ///< The most steps one Group may hold.
  using Response = Done;
  Comm comm;                ///< the communicator
  std::vector<Step> steps;  ///< the calls, at most kMaxSteps
};

/// The requests, built the way NCCL's calls read (in place: the same buffer as send and recv).
[[nodiscard]] Collective all_reduce(Comm comm, BufferHandle send, BufferHandle recv, std::uint64_t count, DType dtype,
                                    ReduceOp op);
/// All-gather: `send_count` elements from each rank into recv, rank r's at r * send_count.
[[nodiscard]] Collective all_gather(Comm comm, BufferHandle send, BufferHandle recv, std::uint64_t send_count,
                                    DType dtype);
/// Reduce-scatter: rank r receives part r, `recv_count` elements, of the reduction.
[[nodiscard]] Collective reduce_scatter(Comm comm, BufferHandle send, BufferHandle recv, std::uint64_t recv_count,
                                        DType dtype, ReduceOp op);
/// Broadcast of `count` elements from rank `root`'s send to every rank's recv.
[[nodiscard]] Collective broadcast(Comm comm, BufferHandle send, BufferHandle recv, std::uint64_t count, DType dtype,
                                   std::int32_t root);
/// Reduction of `count` elements into rank `root`'s recv.
[[nodiscard]] Collective reduce(Comm comm, BufferHandle send, BufferHandle recv, std::uint64_t count, DType dtype,
                                ReduceOp op, std::int32_t root);
/// Sends `count` elements to rank `peer`.
[[nodiscard]] Collective send(Comm comm, BufferHandle send, std::uint64_t count, DType dtype, std::int32_t peer);
/// Receives `count` elements from rank `peer`.
[[nodiscard]] Collective recv(Comm comm, BufferHandle recv, std::uint64_t count, DType dtype, std::int32_t peer);

}  // namespace accel::collective
