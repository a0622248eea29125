#include "libs/blas/openblas_kernels.hpp"

#include <cblas.h>

#include <cstdlib>
#include <mutex>

// Exported by OpenBLAS builds for every core (DYNAMIC_ARCH), not declared in its headers: the start-up step that
// reads OPENBLAS_CORETYPE and picks the kernel table, and the step that forgets the pick. Weak, so that a build
// against an OpenBLAS for one core still links (and keeps that core).
extern "C" {
__attribute__((weak)) void gotoblas_dynamic_init();
__attribute__((weak)) void gotoblas_dynamic_quit();
}

namespace accel::blas {
namespace {

std::string choose() {
  const std::string chosen = openblas_get_corename();
  if (std::getenv("OPENBLAS_CORETYPE") || !gotoblas_dynamic_init || !gotoblas_dynamic_quit) return chosen;
  const std::string forced = openblas_core_to_force(chosen, detail::cpu_vector_level());
  if (forced.empty()) return chosen;
  setenv("OPENBLAS_CORETYPE", forced.c_str(), 0);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  return openblas_get_corename();
}

// At load, while the process has one thread: no GEMM can be running while the kernel table changes.
__attribute__((constructor)) void choose_at_load() { ensure_openblas_kernels(); }

}  // namespace

std::string openblas_core_to_force(const std::string& chosen_core, detail::CpuVectorLevel cpu) {
  if (chosen_core != "Prescott") return "";
  switch (cpu) {
    case detail::CpuVectorLevel::avx512: return "SkylakeX";
    case detail::CpuVectorLevel::avx2: return "Haswell";
    case detail::CpuVectorLevel::baseline: break;
  }
  return "";
}

const std::string& ensure_openblas_kernels() {
  static const std::string core = choose();
  return core;
}

}  // namespace accel::blas
