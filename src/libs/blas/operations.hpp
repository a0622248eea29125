// The blas family's operation contracts (Note [The operation contract] in operation/operation.hpp): what the
// device registers the family by (device/library_operations.hpp). A request added to the family adds its header here.
#pragma once

#include "libs/blas/gemm_operation.hpp"
#include "libs/blas/level1_operation.hpp"
#include "libs/blas/level2_operation.hpp"
#include "libs/blas/level3_operation.hpp"
