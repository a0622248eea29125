// The CUDA halves of the operation contracts of every library family (see device/library_operations.hpp).
#pragma once

#include "device/library_operations.hpp"
#include "dnn/cudnn/cudnn_operation.hpp"
#include "graph/cuda/execute_operation_cuda.hpp"
#include "jit/cuda/jit_operation_cuda.hpp"
#include "libs/blas/operations_cuda.hpp"
#include "libs/collective/operations_cuda.hpp"
#include "libs/fft/operations_cuda.hpp"
#include "libs/rand/operations_cuda.hpp"
#include "libs/solver/operations_cuda.hpp"
#include "libs/sparse/operations_cuda.hpp"
#include "libs/tensor/operations_cuda.hpp"
