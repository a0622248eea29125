// The sparse family's operation contracts (Note [The operation contract] in operation/operation.hpp): what the
// device registers the family by (device/library_operations.hpp). A request added to the family adds its header here.
#pragma once

#include "libs/sparse/convert_operation.hpp"
#include "libs/sparse/dense_to_csr_operation.hpp"
#include "libs/sparse/product_operation.hpp"
#include "libs/sparse/sddmm_operation.hpp"
#include "libs/sparse/solve_operation.hpp"
#include "libs/sparse/spgemm_operation.hpp"
