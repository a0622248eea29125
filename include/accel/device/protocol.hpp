/// @file
/// The protocol every device actor speaks, CPU or CUDA, in process or isolated: the same request types, so user
/// code does not change between devices. It is the device's own requests (memory, copies, queries, faults) and
/// every library family's; each family's requests run on every device through its operation contract
/// (src/operation/operation.hpp), so registering a family is its one line below.
#pragma once

#include "accel/core/protocol.hpp"
#include "accel/device/process_sharing.hpp"
#include "accel/device/requests.hpp"
#include "accel/device/run_recorded.hpp"
#include "accel/dnn/requests.hpp"
#include "accel/graph/execute.hpp"
#include "accel/jit/requests.hpp"
#include "accel/libs/blas/requests.hpp"
#include "accel/libs/collective/requests.hpp"
#include "accel/libs/fft/requests.hpp"
#include "accel/libs/rand/requests.hpp"
#include "accel/libs/solver/requests.hpp"
#include "accel/libs/sparse/requests.hpp"
#include "accel/libs/tensor/requests.hpp"

namespace accel {

/// The device's own requests: memory, copies, queries, fences and faults (device/requests.hpp), and recorded steps
/// run as one request (device/run_recorded.hpp).
using DeviceRequests = RequestList<Allocate, Free, CopyToDevice, CopyToHost, CopyOnDevice, QueryDevice, ResetContext,
                                   RecordFence, WaitFence, InjectFault, RunRecorded>;

/// Every library family's requests; a new family is one line here.
using LibraryRequests = ConcatRequests<blas::Requests,    //
                                       dnn::Requests,     //
                                       jit::Requests,     //
                                       graph::Requests,   //
                                       fft::Requests,     //
                                       solver::Requests,  //
                                       rand::Requests,    //
                                       sparse::Requests,  //
                                       tensor::Requests,  //
                                       collective::Requests>;

/// Device requests added after the families, at the end so that every earlier request keeps its wire tag.
using LaterDeviceRequests = RequestList<ShareMemory, ExportBuffer, ImportBuffer, JoinOrders>;

/// The protocol every device actor speaks: the device's requests and every family's.
using DeviceProtocol = ProtocolOf<ConcatRequests<DeviceRequests, LibraryRequests, LaterDeviceRequests>>;

}  // namespace accel
