// OpenBLAS's kernels for this CPU. Debian's OpenBLAS (0.3.21, built for every x86-64 core) names a CPU model it does
// not know "Prescott" and runs SSE3 kernels there: on the GPU test machine's virtual Xeon (AVX-512, AMX) that made
// every CPU GEMM about 2.2x slower than its AVX-512 kernels. When OpenBLAS has fallen back so and the user has not
// named a core (OPENBLAS_CORETYPE), the kernels are chosen again from what the CPU reports it can run.
#pragma once

#include <string>

#include "core/vector_versions.hpp"

namespace accel::blas {

// The OPENBLAS_CORETYPE to choose again under, or "" to keep the one OpenBLAS chose.
std::string openblas_core_to_force(const std::string& chosen_core, detail::CpuVectorLevel cpu);

// Chooses again once per process if openblas_core_to_force says so (also done when the library loads, before any
// thread runs a GEMM); returns the core OpenBLAS runs.
const std::string& ensure_openblas_kernels();

}  // namespace accel::blas
