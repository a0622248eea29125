/// @file
/// The requests of the cuDNN family, as the device protocol registers them.
#pragma once

#include "accel/core/protocol.hpp"
#include "accel/dnn/convolution.hpp"
#include "accel/dnn/graph.hpp"

namespace accel::dnn {
/// The requests of the DNN family, as the device protocol registers them.
using Requests = RequestList<ConvFwd, ConvBwdData, ConvBwdFilter, RunGraph>;
}  // namespace accel::dnn
