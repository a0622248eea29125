// The operation contracts of every library family in LibraryRequests (include/accel/device/protocol.hpp): what
// the CPU device and the isolated tier instantiate their generic paths with. A family registers here with one
// include, next to its one line in protocol.hpp.
#pragma once

#include "dnn/graph_operation.hpp"
#include "graph/execute_operation.hpp"
#include "jit/jit_operation.hpp"
#include "libs/blas/gemm_operation.hpp"
#include "libs/blas/level1_operation.hpp"
#include "libs/blas/level2_operation.hpp"
#include "libs/blas/level3_operation.hpp"
#include "libs/collective/collective_operation.hpp"
#include "libs/fft/fft_operation.hpp"
#include "libs/rand/generate_operation.hpp"
#include "libs/solver/cholesky_operation.hpp"
#include "libs/solver/eigen_operation.hpp"
#include "libs/solver/gels_operation.hpp"
#include "libs/solver/gesvdj_operation.hpp"
#include "libs/solver/lu_operation.hpp"
#include "libs/solver/qr_operation.hpp"
#include "libs/solver/svd_operation.hpp"
#include "libs/sparse/convert_operation.hpp"
#include "libs/sparse/dense_to_csr_operation.hpp"
#include "libs/sparse/product_operation.hpp"
#include "libs/sparse/sddmm_operation.hpp"
#include "libs/sparse/solve_operation.hpp"
#include "libs/sparse/spgemm_operation.hpp"
#include "libs/tensor/tensor_operation.hpp"
