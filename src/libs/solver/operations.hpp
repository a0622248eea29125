// The solver family's operation contracts (Note [The operation contract] in operation/operation.hpp): what the
// device registers the family by (device/library_operations.hpp). A request added to the family adds its header here.
#pragma once

#include "libs/solver/cholesky_operation.hpp"
#include "libs/solver/eigen_operation.hpp"
#include "libs/solver/gels_operation.hpp"
#include "libs/solver/gesvdj_operation.hpp"
#include "libs/solver/lu_operation.hpp"
#include "libs/solver/qr_operation.hpp"
#include "libs/solver/svd_operation.hpp"
