// The CUDA halves of the collective family's operation contracts (see libs/collective/operations.hpp).
#pragma once

#include "libs/collective/collective_operation_cuda.hpp"
#include "libs/collective/operations.hpp"
