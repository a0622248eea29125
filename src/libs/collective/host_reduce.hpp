// Reductions on the host, element by element, the ranks' contributions taken in rank order: the CPU world's
// arithmetic and the reference the GPU tests compare NCCL with. Floating-point types are reduced in double and
// rounded once (NCCL rounds after each step, so with more than two ranks low-precision sums may differ by a
// rounding); integers wrap; avg is the sum divided by the number of ranks (truncated for integers, as NCCL's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "accel/core/dtype.hpp"
#include "accel/libs/collective/collective.hpp"

namespace accel::collective {

// out[i] = op over r of inputs[r][i], for i < count. `out` may be one of the inputs.
void reduce_host(DType dtype, ReduceOp op, std::span<const std::byte* const> inputs, std::byte* out,
                 std::uint64_t count);

}  // namespace accel::collective
