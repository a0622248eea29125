#include "libs/collective/step_checks.hpp"

#include <fmt/format.h>

#include <limits>

namespace accel::collective {
namespace {

constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 48;  // beyond any memory, and far from overflowing

bool is_kind(Kind kind) noexcept { return static_cast<std::uint8_t>(kind) <= static_cast<std::uint8_t>(Kind::recv); }
bool is_op(ReduceOp op) noexcept { return static_cast<std::uint8_t>(op) <= static_cast<std::uint8_t>(ReduceOp::avg); }

bool reduces(Kind kind) noexcept {
  return kind == Kind::all_reduce || kind == Kind::reduce_scatter || kind == Kind::reduce;
}
bool has_root(Kind kind) noexcept { return kind == Kind::broadcast || kind == Kind::reduce; }

// NCCL's in-place offsets for `kind` (see Step in collective.hpp).
bool in_place_offsets(const Step& s, std::int32_t rank) noexcept {
  const std::uint64_t part = static_cast<std::uint64_t>(rank) * s.count;
  switch (s.kind) {
    case Kind::all_gather: return s.send_offset == s.recv_offset + part;
    case Kind::reduce_scatter: return s.recv_offset == s.send_offset + part;
    default: return s.send_offset == s.recv_offset;
  }
}

bool overlap(const BufferHandle& a, std::uint64_t a_first, std::uint64_t a_count, const BufferHandle& b,
             std::uint64_t b_first, std::uint64_t b_count) noexcept {
  return same_buffer(a, b) && a_count != 0 && b_count != 0 && a_first < b_first + b_count &&
         b_first < a_first + a_count;
}

Result<StepUse> check_step(const std::string& name, const Comm& comm, const Step& s) {
  if (!is_kind(s.kind)) return invalid_argument(fmt::format("{}: unknown kind {}", name, int(s.kind)));
  if (!is_dtype(static_cast<std::uint8_t>(s.dtype)))
    return invalid_argument(fmt::format("{}: unknown dtype {}", name, int(s.dtype)));
  if (s.dtype == DType::c64 || s.dtype == DType::c128 || s.dtype == DType::c32) {
    const std::string_view part = s.dtype == DType::c64 ? "f32" : s.dtype == DType::c128 ? "f64" : "f16";
    return not_supported(
        fmt::format("{}: NCCL has no {} (reduce the real and imaginary parts as {})", name, to_string(s.dtype), part));
  }
  if (reduces(s.kind) && !is_op(s.op)) return invalid_argument(fmt::format("{}: unknown op {}", name, int(s.op)));
  const bool per_rank = s.kind == Kind::all_gather || s.kind == Kind::reduce_scatter;
  if (s.count > kMaxElements || (per_rank && s.count > kMaxElements / static_cast<std::uint64_t>(comm.ranks))) {
    return invalid_argument(fmt::format("{}: count {} is too large", name, s.count));
  }
  if ((has_root(s.kind) || s.kind == Kind::send || s.kind == Kind::recv) && (s.peer < 0 || s.peer >= comm.ranks)) {
    return invalid_argument(fmt::format("{}: {} {} is not a rank of a communicator of {} ranks", name,
                                        has_root(s.kind) ? "root" : "peer", s.peer, comm.ranks));
  }
  StepUse use{.step = s};
  const auto ranks = static_cast<std::uint64_t>(comm.ranks);
  const bool root = s.peer == comm.rank;
  switch (s.kind) {
    case Kind::all_reduce: use = {s, true, true, s.count, s.count}; break;
    case Kind::all_gather: use = {s, true, true, s.count, s.count * ranks}; break;
    case Kind::reduce_scatter: use = {s, true, true, s.count * ranks, s.count}; break;
    case Kind::broadcast: use = {s, root, true, root ? s.count : 0, s.count}; break;
    case Kind::reduce: use = {s, true, root, s.count, root ? s.count : 0}; break;
    case Kind::send: use = {s, true, false, s.count, 0}; break;
    case Kind::recv: use = {s, false, true, 0, s.count}; break;
  }
  if (use.reads_send && s.send.is_null()) return invalid_argument(fmt::format("{}: send is null", name));
  if (use.writes_recv && s.recv.is_null()) return invalid_argument(fmt::format("{}: recv is null", name));
  if (use.reads_send && use.writes_recv && same_buffer(s.send, s.recv)) {
    if (!in_place_offsets(s, comm.rank)) {
      return invalid_argument(fmt::format(
          "{}: send and recv are the same buffer at offsets {} and {}, which is not in place for rank {} (see "
          "collective::Step) and would overlap",
          name, s.send_offset, s.recv_offset, comm.rank));
    }
    use.in_place = true;
  }
  return use;
}

}  // namespace

std::string step_name(std::string_view request, std::size_t index, std::size_t steps, Kind kind) {
  if (steps == 1) return fmt::format("{} ({})", request, to_string(kind));
  return fmt::format("{} step {} ({})", request, index, to_string(kind));
}

Status check_comm(std::string_view request, const Comm& comm) {
  if (comm.id == 0) return invalid_argument(fmt::format("{}: the communicator id is 0 (names none)", request));
  if (comm.ranks < 1) return invalid_argument(fmt::format("{}: a communicator of {} ranks", request, comm.ranks));
  if (comm.rank < 0 || comm.rank >= comm.ranks) {
    return invalid_argument(fmt::format("{}: rank {} of a communicator of {} ranks", request, comm.rank, comm.ranks));
  }
  return Status();
}

Status check_timeout(std::string_view request, std::uint32_t timeout_ms) {
  if (timeout_ms == 0) return invalid_argument(fmt::format("{}: timeout_ms is 0", request));
  return Status();
}

Result<CheckedSteps> check_steps(std::string_view request, const Comm& comm, std::span<const Step> steps) {
  ACCEL_RETURN_IF_ERROR(check_comm(request, comm));
  CheckedSteps checked{.comm = comm};
  checked.steps.reserve(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    ACCEL_ASSIGN_OR_RETURN(StepUse use, check_step(step_name(request, i, steps.size(), steps[i].kind), comm, steps[i]));
    checked.steps.push_back(use);
  }
  // A written range may not overlap any other range of the request (the steps of a group run concurrently), except
  // its own step's send when in place.
  for (std::size_t i = 0; i < checked.steps.size(); ++i) {
    const StepUse& w = checked.steps[i];
    if (!w.writes_recv) continue;
    for (std::size_t j = 0; j < checked.steps.size(); ++j) {
      const StepUse& o = checked.steps[j];
      const bool send_clash =
          o.reads_send && !(i == j && w.in_place) &&
          overlap(w.step.recv, w.step.recv_offset, w.recv_count, o.step.send, o.step.send_offset, o.send_count);
      const bool recv_clash =
          i != j && o.writes_recv &&
          overlap(w.step.recv, w.step.recv_offset, w.recv_count, o.step.recv, o.step.recv_offset, o.recv_count);
      if (send_clash || recv_clash) {
        return invalid_argument(fmt::format("{} writes a range of its recv buffer that {} also uses",
                                            step_name(request, i, steps.size(), w.step.kind),
                                            i == j ? "its send" : step_name(request, j, steps.size(), o.step.kind)));
      }
    }
  }
  return checked;
}

void step_operands(const CheckedSteps& checked, Operands& operands) {
  for (std::size_t i = 0; i < checked.steps.size(); ++i) {
    const StepUse& u = checked.steps[i];
    const std::string at = checked.steps.size() == 1 ? std::string() : fmt::format("steps[{}].", i);
    Operand send{.buffer = u.step.send,
                 .name = at + "send",
                 .access = Access::read,
                 .first = u.step.send_offset,
                 .count = u.send_count,
                 .check_dtype = true,
                 .dtype = u.step.dtype};
    Operand recv = send;
    recv.buffer = u.step.recv;
    recv.name = at + "recv";
    recv.access = Access::write;
    recv.first = u.step.recv_offset;
    recv.count = u.recv_count;
    if (u.reads_send) {
      operands.add(std::move(send));
    } else {
      operands.absent(at + "send");
    }
    if (u.writes_recv) {
      operands.add(std::move(recv));
    } else {
      operands.absent(at + "recv");
    }
  }
}

}  // namespace accel::collective
