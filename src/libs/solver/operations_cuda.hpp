// The CUDA halves of the solver family's operation contracts (see libs/solver/operations.hpp).
#pragma once

#include "libs/solver/cholesky_operation_cuda.hpp"
#include "libs/solver/eigen_operation_cuda.hpp"
#include "libs/solver/gels_operation_cuda.hpp"
#include "libs/solver/gesvdj_operation_cuda.hpp"
#include "libs/solver/lu_operation_cuda.hpp"
#include "libs/solver/operations.hpp"
#include "libs/solver/qr_operation_cuda.hpp"
#include "libs/solver/svd_operation_cuda.hpp"
