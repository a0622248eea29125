// The CUDA halves of the tensor family's operation contracts (see libs/tensor/operations.hpp).
#pragma once

#include "libs/tensor/operations.hpp"
#include "libs/tensor/tensor_operation_cuda.hpp"
