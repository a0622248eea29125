// The operation contracts of every library family in LibraryRequests (include/accel/device/protocol.hpp): what
// the CPU device and the isolated tier instantiate their generic paths with. A family registers here with one
// include of its operations header, next to its one line in protocol.hpp.
#pragma once

#include "dnn/graph_operation.hpp"
#include "graph/execute_operation.hpp"
#include "jit/jit_operation.hpp"
#include "libs/blas/operations.hpp"
#include "libs/collective/operations.hpp"
#include "libs/fft/operations.hpp"
#include "libs/rand/operations.hpp"
#include "libs/solver/operations.hpp"
#include "libs/sparse/operations.hpp"
#include "libs/tensor/operations.hpp"
