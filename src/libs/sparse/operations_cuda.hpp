// The CUDA halves of the sparse family's operation contracts (see libs/sparse/operations.hpp).
#pragma once

#include "libs/sparse/convert_operation_cuda.hpp"
#include "libs/sparse/dense_to_csr_operation_cuda.hpp"
#include "libs/sparse/operations.hpp"
#include "libs/sparse/product_operation_cuda.hpp"
#include "libs/sparse/sddmm_operation_cuda.hpp"
#include "libs/sparse/solve_operation_cuda.hpp"
#include "libs/sparse/spgemm_operation_cuda.hpp"
