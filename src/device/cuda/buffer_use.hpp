// A buffer a request on a CUDA stream uses, and how: what the stream orders the request after (CudaContext's
// order_before) and what later users order after (order_after). A kept recording keeps its launch's list
// (recorded_graphs.hpp), so that a replay orders from it as it stands.
#pragma once

#include "accel/core/buffer_handle.hpp"
#include "operation/operation.hpp"

namespace accel::device::cuda {

struct BufferUse {
  BufferHandle buffer;
  Access access = Access::read;
};

}  // namespace accel::device::cuda
