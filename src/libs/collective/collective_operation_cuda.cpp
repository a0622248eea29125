#include "libs/collective/collective_operation_cuda.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace accel {
namespace {

using collective::CheckedSteps;
using collective::Kind;
using collective::NcclComms;
using collective::StepUse;

bool reduces(Kind kind) { return kind == Kind::all_reduce || kind == Kind::reduce_scatter || kind == Kind::reduce; }

// NCCL 2.28.3 answered an fp8 average "invalid argument" on the H100, and an argument error from a non-blocking
// communicator leaves it in error (it must then be aborted): so it is refused here, before NCCL sees it.
Status check_nccl_takes(const collective::Step& step) {
  const bool fp8 = step.dtype == DType::fp8_e4m3 || step.dtype == DType::fp8_e5m2;
  if (fp8 && reduces(step.kind) && step.op == collective::ReduceOp::avg) {
    return not_supported(
        fmt::format("NCCL does not average {} (it refuses ncclAvg over fp8); sum, then scale", to_string(step.dtype)));
  }
  return collective::to_nccl(step.dtype).status();
}

Result<CollectivePlan> plan_steps(std::string_view request, const CheckedSteps& checked, CudaTarget& target) {
  for (const StepUse& use : checked.steps) ACCEL_RETURN_IF_ERROR(check_nccl_takes(use.step).with_context(request));
  ACCEL_ASSIGN_OR_RETURN(NcclComms * comms, target.context_state<NcclComms>());
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<collective::NcclComm> comm, comms->find(request, checked.comm));
  return CollectivePlan{.comm = std::move(comm)};
}

// One NCCL call. In place needs nothing more: the offsets the request was checked for make NCCL's in-place addresses.
ncclResult_t launch(const StepUse& use, const BufferView& send, const BufferView& recv, ncclComm_t comm,
                    cudaStream_t stream) {
  const collective::Step& s = use.step;
  const ncclDataType_t type = *collective::to_nccl(s.dtype);  // plan_steps checked it
  const ncclRedOp_t op = collective::to_nccl(s.op);
  const void* in = send.data == nullptr ? nullptr : send.at(s.send_offset);
  void* out = recv.data == nullptr ? nullptr : recv.at(s.recv_offset);
  switch (s.kind) {
    case Kind::all_reduce: return ncclAllReduce(in, out, s.count, type, op, comm, stream);
    case Kind::all_gather: return ncclAllGather(in, out, s.count, type, comm, stream);
    case Kind::reduce_scatter: return ncclReduceScatter(in, out, s.count, type, op, comm, stream);
    case Kind::broadcast: return ncclBroadcast(in, out, s.count, type, s.peer, comm, stream);
    case Kind::reduce: return ncclReduce(in, out, s.count, type, op, s.peer, comm, stream);
    case Kind::send: return ncclSend(in, s.count, type, s.peer, comm, stream);
    case Kind::recv: return ncclRecv(out, s.count, type, s.peer, comm, stream);
  }
  return ncclInvalidArgument;
}

Status run_steps(std::string_view request, const CheckedSteps& checked, const CollectivePlan& plan,
                 std::span<const BufferView> views, CudaRun& run) {
  const cudaStream_t stream = run.target.stream();
  const bool grouped = checked.steps.size() > 1;
  const bool point_to_point = std::any_of(checked.steps.begin(), checked.steps.end(), [](const StepUse& use) {
    return use.step.kind == Kind::send || use.step.kind == Kind::recv;
  });
  return plan.comm->run(request, run, point_to_point, [&](ncclComm_t comm) -> ncclResult_t {
    if (grouped) {
      if (const ncclResult_t started = ncclGroupStart(); started != ncclSuccess) return started;
    }
    ncclResult_t result = ncclSuccess;
    for (std::size_t i = 0; i < checked.steps.size() && (result == ncclSuccess || result == ncclInProgress); ++i) {
      result = launch(checked.steps[i], views[collective::send_slot(i)], views[collective::recv_slot(i)], comm, stream);
    }
    if (!grouped) return result;
    const ncclResult_t ended = ncclGroupEnd();  // also after a failed step: the group must be closed
    return result != ncclSuccess && result != ncclInProgress ? result : ended;
  });
}

}  // namespace

Status CudaOperation<collective::InitComm>::run(const collective::InitComm& request, const Checked&, const Plan&,
                                                std::span<const BufferView>, CudaRun& run) {
  ACCEL_ASSIGN_OR_RETURN(NcclComms * comms, run.target.context_state<NcclComms>());
  return comms->init(request, run.target);
}

Status CudaOperation<collective::DestroyComm>::run(const collective::DestroyComm& request, const Checked&, const Plan&,
                                                   std::span<const BufferView>, CudaRun& run) {
  ACCEL_ASSIGN_OR_RETURN(NcclComms * comms, run.target.context_state<NcclComms>());
  return comms->destroy(request.comm, run.target);
}

Result<CollectivePlan> CudaOperation<collective::Collective>::plan(const collective::Collective&,
                                                                   const Checked& checked, CudaTarget& target) {
  return plan_steps(collective::Collective::kName, checked, target);
}

Status CudaOperation<collective::Collective>::run(const collective::Collective&, const Checked& checked,
                                                  const Plan& plan, std::span<const BufferView> views, CudaRun& run) {
  return run_steps(collective::Collective::kName, checked, plan, views, run);
}

void CudaOperation<collective::Collective>::describe(CudaTarget&, LibraryReport& report) {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) return;
  report.report(LibraryVersion{
      .name = "nccl", .version = fmt::format("{}.{}.{}", version / 10000, version / 100 % 100, version % 100)});
}

Result<CollectivePlan> CudaOperation<collective::Group>::plan(const collective::Group&, const Checked& checked,
                                                              CudaTarget& target) {
  return plan_steps(collective::Group::kName, checked, target);
}

Status CudaOperation<collective::Group>::run(const collective::Group&, const Checked& checked, const Plan& plan,
                                             std::span<const BufferView> views, CudaRun& run) {
  return run_steps(collective::Group::kName, checked, plan, views, run);
}

}  // namespace accel
