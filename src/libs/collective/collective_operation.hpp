// The operation contracts of the collective family (Note [The operation contract] in operation/operation.hpp):
// InitComm and DestroyComm (no buffers), Collective and Group (two operands per step, step_checks.hpp). On the
// CPU device they run in a CPU world of the process (host_world.hpp); on CUDA through NCCL
// (collective_operation_cuda.hpp). Group holds a list, so it crosses to an isolated worker encoded.
#pragma once

#include <span>

#include "accel/core/byte_codec.hpp"
#include "accel/libs/collective/collective.hpp"
#include "libs/collective/step_checks.hpp"
#include "operation/operation.hpp"

namespace accel {

template <>
struct Operation<collective::InitComm> {
  struct Checked {};
  static Result<Checked> validate(const collective::InitComm& request);
  static void operands(const collective::InitComm&, const Checked&, Operands&) {}
  static Status run_cpu(const collective::InitComm& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
};

template <>
struct Operation<collective::DestroyComm> {
  struct Checked {};
  static Result<Checked> validate(const collective::DestroyComm& request);
  static void operands(const collective::DestroyComm&, const Checked&, Operands&) {}
  static Status run_cpu(const collective::DestroyComm& request, const Checked& checked,
                        std::span<const BufferView> views, const CpuTarget& target);
};

template <>
struct Operation<collective::Collective> {
  using Checked = collective::CheckedSteps;
  static Result<Checked> validate(const collective::Collective& request);
  static void operands(const collective::Collective&, const Checked& checked, Operands& operands) {
    collective::step_operands(checked, operands);
  }
  static Status run_cpu(const collective::Collective& request, const Checked& checked,
                        std::span<const BufferView> views, const CpuTarget& target);
};

template <>
struct Operation<collective::Group> {
  using Checked = collective::CheckedSteps;
  static Result<Checked> validate(const collective::Group& request);
  static void operands(const collective::Group&, const Checked& checked, Operands& operands) {
    collective::step_operands(checked, operands);
  }
  static Status run_cpu(const collective::Group& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void encode(ByteWriter& out, const collective::Group& request);
  static Result<collective::Group> decode(ByteReader& in);
};

}  // namespace accel
