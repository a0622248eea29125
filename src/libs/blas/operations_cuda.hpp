// The CUDA halves of the blas family's operation contracts (see libs/blas/operations.hpp).
#pragma once

#include "libs/blas/gemm_operation_cuda.hpp"
#include "libs/blas/level1_operation_cuda.hpp"
#include "libs/blas/level2_operation_cuda.hpp"
#include "libs/blas/level3_operation_cuda.hpp"
#include "libs/blas/operations.hpp"
