// The slack on each side of the memory of every CPU buffer, and of LAPACK workspaces, that nothing uses.
//
// Debian's OpenBLAS 0.3.21 reads up to about a kilobyte past the vectors its complex gemv kernels are given (gcc 12's
// tree vectorizer on kernel/x86_64/[cz]gemv_n_4.c; OpenBLAS 0.3.24 builds them without it), so a matrix LAPACK's
// heevd or gesvd works on that ends at an unmapped page faults about once in a few hundred runs (valgrind shows the
// reads every time). A page on each side keeps those reads in memory of ours.
#pragma once

#include <cstddef>

namespace accel {

inline constexpr std::size_t kHostSlackBytes = 4096;

}  // namespace accel
