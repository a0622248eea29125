// What a request on a CUDA stream uses. A buffer, and how: what the stream orders the request after (CudaContext's
// order_before) and what later users order after (order_after); a kept recording keeps its launch's list
// (recorded_graphs.hpp), so that a replay orders from it as it stands. And the host memory a recorded copy uses.
#pragma once

#include <cstdint>

#include "accel/core/buffer_handle.hpp"
#include "operation/operation.hpp"

namespace accel::device::cuda {

struct BufferUse {
  BufferHandle buffer;
  Access access = Access::read;
};

// A recorded host copy's memory and the CUDA host allocation or registration it lies in (pinned_host_allocation in
// cuda_resources.hpp; 0 for a copy of nothing): a graph captured over one must not be launched over another.
struct HostMemoryUse {
  const void* data = nullptr;
  std::uint64_t allocation = 0;
  friend bool operator==(const HostMemoryUse&, const HostMemoryUse&) = default;
};

}  // namespace accel::device::cuda
