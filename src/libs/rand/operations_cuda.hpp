// The CUDA halves of the rand family's operation contracts (see libs/rand/operations.hpp).
#pragma once

#include "libs/rand/generate_operation_cuda.hpp"
#include "libs/rand/operations.hpp"
