// The CUDA halves of the fft family's operation contracts (see libs/fft/operations.hpp).
#pragma once

#include "libs/fft/fft_operation_cuda.hpp"
#include "libs/fft/operations.hpp"
