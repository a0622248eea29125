// The CUDA halves of the operation contracts of every library family (see device/library_operations.hpp).
#pragma once

#include "device/library_operations.hpp"
#include "dnn/cudnn/cudnn_operation.hpp"
#include "graph/cuda/execute_operation_cuda.hpp"
#include "jit/cuda/jit_operation_cuda.hpp"
#include "libs/blas/gemm_operation_cuda.hpp"
#include "libs/collective/collective_operation_cuda.hpp"
#include "libs/fft/fft_operation_cuda.hpp"
#include "libs/rand/generate_operation_cuda.hpp"
#include "libs/solver/cholesky_operation_cuda.hpp"
#include "libs/solver/eigen_operation_cuda.hpp"
#include "libs/solver/lu_operation_cuda.hpp"
#include "libs/solver/qr_operation_cuda.hpp"
#include "libs/solver/svd_operation_cuda.hpp"
