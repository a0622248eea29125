#include "libs/collective/collective_operation.hpp"

#include <fmt/format.h>

#include "libs/collective/host_world.hpp"

namespace accel {

using collective::Collective;
using collective::DestroyComm;
using collective::Group;
using collective::HostComms;
using collective::InitComm;

Result<Operation<InitComm>::Checked> Operation<InitComm>::validate(const InitComm& request) {
  ACCEL_RETURN_IF_ERROR(collective::check_comm(InitComm::kName, request.comm));
  ACCEL_RETURN_IF_ERROR(collective::check_timeout(InitComm::kName, request.timeout_ms));
  return Checked{};
}

Status Operation<InitComm>::run_cpu(const InitComm& request, const Checked&, std::span<const BufferView>,
                                    const CpuTarget&) {
  return HostComms::instance().init(request);
}

Result<Operation<DestroyComm>::Checked> Operation<DestroyComm>::validate(const DestroyComm& request) {
  ACCEL_RETURN_IF_ERROR(collective::check_comm(DestroyComm::kName, request.comm));
  return Checked{};
}

Status Operation<DestroyComm>::run_cpu(const DestroyComm& request, const Checked&, std::span<const BufferView>,
                                       const CpuTarget&) {
  return HostComms::instance().destroy(request.comm);
}

Result<Operation<Collective>::Checked> Operation<Collective>::validate(const Collective& request) {
  return collective::check_steps(Collective::kName, request.comm, std::span<const collective::Step>(&request.step, 1));
}

Status Operation<Collective>::run_cpu(const Collective& request, const Checked& checked,
                                      std::span<const BufferView> views, const CpuTarget&) {
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<collective::HostComm> comm,
                         HostComms::instance().find(Collective::kName, request.comm));
  return comm->run(Collective::kName, checked, views);
}

Result<Operation<Group>::Checked> Operation<Group>::validate(const Group& request) {
  if (request.steps.empty()) return invalid_argument(fmt::format("{}: no steps", Group::kName));
  if (request.steps.size() > Group::kMaxSteps) {
    return invalid_argument(
        fmt::format("{}: {} steps, more than {}", Group::kName, request.steps.size(), Group::kMaxSteps));
  }
  return collective::check_steps(Group::kName, request.comm, request.steps);
}

Status Operation<Group>::run_cpu(const Group& request, const Checked& checked, std::span<const BufferView> views,
                                 const CpuTarget&) {
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<collective::HostComm> comm,
                         HostComms::instance().find(Group::kName, request.comm));
  return comm->run(Group::kName, checked, views);
}

// Steps are plain data; their enums and counts are checked by validate in the worker, like a plain request's.
void Operation<Group>::encode(ByteWriter& out, const Group& request) { out.pod(request.comm).pods(request.steps); }

Result<Group> Operation<Group>::decode(ByteReader& in) {
  Group group;
  in.pod(group.comm).pods(group.steps);
  if (!in.finished()) {
    return internal_error(fmt::format("the staged encoding of a {} request is damaged", Group::kName));
  }
  return group;
}

}  // namespace accel
