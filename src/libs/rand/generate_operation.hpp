// The operation contract of rand::Generate (Note [The operation contract] in operation/operation.hpp): checked by
// check_generate, one written operand (the output), run on the CPU by our Philox implementation or cuRAND's
// host-side generators, and on CUDA by our Philox kernel or cuRAND's host API (generate_operation_cuda.hpp).
#pragma once

#include <span>

#include "accel/libs/rand/generate.hpp"
#include "libs/rand/generate_checks.hpp"
#include "operation/operation.hpp"

namespace accel {

template <>
struct Operation<rand::Generate> {
  using Checked = rand::CheckedGenerate;
  enum Slot : std::size_t { output };

  static Result<rand::CheckedGenerate> validate(const rand::Generate& request) { return rand::check_generate(request); }
  // The output must hold `count` elements of the dtype; it is written from its first element.
  static void operands(const rand::Generate& request, const rand::CheckedGenerate& checked, Operands& operands) {
    operands.typed(request.output, "output", Access::write, checked.dtype, checked.count);
  }
  // XORWOW, MRG32k3a and Sobol32 need cuRAND's host-side generators, there when accel was built with the toolkit.
  static Status check_cpu_support(const rand::CheckedGenerate& checked);
  static Status run_cpu(const rand::Generate& request, const rand::CheckedGenerate& checked,
                        std::span<const BufferView> views, const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

}  // namespace accel
