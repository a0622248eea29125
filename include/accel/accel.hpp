/// @file
/// Everything a program needs to use accel, in one include: the runtime (System, Future, Result, Status), devices
/// and buffers, device pools (placement over several devices), every library family's requests, compiled graphs,
/// text embedding models and tokenizers. Link accel::accel (find_package(accel) or add_subdirectory/FetchContent).
///
/// @code
///   accel::System system;
///   accel::Device device = *accel::Device::open_default(system);  // a GPU when there is one, else the CPU
///   accel::Status status = device.gemm({.shape = {.m = m, .n = n, .k = k}, .a = a, .b = b, .c = c}).wait().status();
/// @endcode
///
/// Each family has one header of entry points, a function per request sent to a device (accel/blas.hpp, fft.hpp,
/// rand.hpp, solver.hpp, sparse.hpp, tensor.hpp, dnn.hpp, jit.hpp, graph.hpp; collectives go through
/// collective::Communicator). Each header may be included alone instead (each compiles by itself: tests/public_api).
/// accel/libs/collective/mpi.hpp is not here: it is built only where MPI is, and is not part of libaccel.
#pragma once

#include "accel/blas.hpp"
#include "accel/core/future.hpp"
#include "accel/core/result.hpp"
#include "accel/core/status.hpp"
#include "accel/core/system.hpp"
#include "accel/device/device.hpp"
#include "accel/device/peer.hpp"
#include "accel/device/pool.hpp"
#include "accel/dnn.hpp"
#include "accel/embed/model.hpp"
#include "accel/fft.hpp"
#include "accel/graph.hpp"
#include "accel/graph/graph.hpp"
#include "accel/jit.hpp"
#include "accel/libs/collective/communicator.hpp"
#include "accel/libs/collective/launcher.hpp"
#include "accel/libs/collective/requests.hpp"
#include "accel/rand.hpp"
#include "accel/solver.hpp"
#include "accel/sparse.hpp"
#include "accel/tensor.hpp"
#include "accel/text/tokenizer.hpp"
#include "accel/version.hpp"
