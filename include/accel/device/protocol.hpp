// The protocol every device actor speaks, CPU or CUDA: the same request types, so user code does not change
// between devices.
#pragma once

#include "accel/core/protocol.hpp"
#include "accel/device/requests.hpp"
#include "accel/dnn/convolution.hpp"
#include "accel/dnn/graph.hpp"
#include "accel/jit/cutlass.hpp"
#include "accel/jit/kernel.hpp"
#include "accel/libs/blas/gemm.hpp"

namespace accel {

using DeviceProtocol = Protocol<Allocate, Free, CopyToDevice, CopyToHost, CopyOnDevice, QueryDevice, ResetContext, Gemm,
                                ConvFwd, ConvBwdData, ConvBwdFilter, RunGraph, LaunchKernel, CutlassGemm,
                                CutlassGroupedGemm, CutlassConv, InjectFault>;

}  // namespace accel
