#include "accel/libs/collective/collective.hpp"

namespace accel::collective {

std::string_view to_string(Kind kind) noexcept {
  switch (kind) {
    case Kind::all_reduce: return "all_reduce";
    case Kind::all_gather: return "all_gather";
    case Kind::reduce_scatter: return "reduce_scatter";
    case Kind::broadcast: return "broadcast";
    case Kind::reduce: return "reduce";
    case Kind::send: return "send";
    case Kind::recv: return "recv";
  }
  return "unknown_kind";
}

std::string_view to_string(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::prod: return "prod";
    case ReduceOp::min: return "min";
    case ReduceOp::max: return "max";
    case ReduceOp::avg: return "avg";
  }
  return "unknown_op";
}

Collective all_reduce(Comm comm, BufferHandle send, BufferHandle recv, std::uint64_t count, DType dtype, ReduceOp op) {
  return {comm, {.kind = Kind::all_reduce, .dtype = dtype, .op = op, .count = count, .send = send, .recv = recv}};
}

// In place when send is recv: the input is this rank's part of recv.
Collective all_gather(Comm comm, BufferHandle send, BufferHandle recv, std::uint64_t send_count, DType dtype) {
  const bool in_place = send == recv;
  return {comm,
          {.kind = Kind::all_gather,
           .dtype = dtype,
           .count = send_count,
           .send = send,
           .send_offset = in_place ? static_cast<std::uint64_t>(comm.rank) * send_count : 0,
           .recv = recv}};
}

// In place when send is recv: the output is this rank's part of send.
Collective reduce_scatter(Comm comm, BufferHandle send, BufferHandle recv, std::uint64_t recv_count, DType dtype,
                          ReduceOp op) {
  const bool in_place = send == recv;
  return {comm,
          {.kind = Kind::reduce_scatter,
           .dtype = dtype,
           .op = op,
           .count = recv_count,
           .send = send,
           .recv = recv,
           .recv_offset = in_place ? static_cast<std::uint64_t>(comm.rank) * recv_count : 0}};
}

Collective broadcast(Comm comm, BufferHandle send, BufferHandle recv, std::uint64_t count, DType dtype,
                     std::int32_t root) {
  return {comm, {.kind = Kind::broadcast, .dtype = dtype, .peer = root, .count = count, .send = send, .recv = recv}};
}

Collective reduce(Comm comm, BufferHandle send, BufferHandle recv, std::uint64_t count, DType dtype, ReduceOp op,
                  std::int32_t root) {
  return {comm,
          {.kind = Kind::reduce, .dtype = dtype, .op = op, .peer = root, .count = count, .send = send, .recv = recv}};
}

Collective send(Comm comm, BufferHandle send, std::uint64_t count, DType dtype, std::int32_t peer) {
  return {comm, {.kind = Kind::send, .dtype = dtype, .peer = peer, .count = count, .send = send}};
}

Collective recv(Comm comm, BufferHandle recv, std::uint64_t count, DType dtype, std::int32_t peer) {
  return {comm, {.kind = Kind::recv, .dtype = dtype, .peer = peer, .count = count, .recv = recv}};
}

}  // namespace accel::collective
