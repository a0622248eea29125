// How a Philox4x32-10 request is laid out over its stream, shared by the CUDA kernel (philox_kernel.cu) and the
// CPU implementation (cpu_philox.cpp) so that both write the same numbers (see include/accel/libs/rand/generate.hpp).
//
// The stream of a seed is the sequence of 32-bit words cuRAND's device API draws from a Philox state made by
// curand_init(seed, 0, 0): word w is word w % 4 of Philox4x32-10 applied to the 128-bit counter w / 4 (subsequence
// 0 is the counter's upper 64 bits) under the key (seed low, seed high). A request's element e uses:
//   bits, uniform / normal / log-normal f32   block e / 4, word e % 4; normals pair (e & ~1, e | 1), one
//                                               Box-Muller of words (e & ~1, e | 1), sine first (curand_normal4);
//   uniform / normal / log-normal f64          block e / 2: uniform takes words 2(e % 2) and 2(e % 2) + 1
//                                               (curand_uniform2_double), normals pair (e & ~1, e | 1) and take
//                                               all four words (curand_normal2_double);
//   Poisson                                    curand_poisson of curand_init(seed, e, 0): a subsequence of its own,
//                                               since it draws as many words as its rejection loop needs.
// Plain C++17 with no accel headers: nvcc compiles this into the kernel.
#pragma once

#include <cstdint>

namespace accel::rand {

// The distribution and dtype of a request together: what one instance of the Philox kernel makes, and which of
// cuRAND's host-API calls the other generators use.
enum class OutputKind : std::uint8_t {
  bits,
  uniform_f32,
  normal_f32,
  log_normal_f32,
  uniform_f64,
  normal_f64,
  log_normal_f64,
  poisson,
};

// One Philox request as both devices run it. `output` holds `count` elements of the kind's dtype.
struct PhiloxArgs {
  void* output = nullptr;
  std::uint64_t count = 0;
  std::uint64_t seed = 0;
  std::uint64_t offset = 0;
  OutputKind kind = OutputKind::uniform_f32;
  double mean = 0.0;
  double stddev = 1.0;
  double lambda = 1.0;
};

// Elements made from one Philox block of four words; Poisson takes a subsequence per element instead (1 here).
constexpr unsigned elements_per_block(OutputKind kind) {
  switch (kind) {
    case OutputKind::uniform_f64:
    case OutputKind::normal_f64:
    case OutputKind::log_normal_f64: return 2;
    case OutputKind::poisson: return 1;
    default: return 4;
  }
}

constexpr bool is_f64(OutputKind kind) { return elements_per_block(kind) == 2; }

// cuRAND's scale factors (curand_globals.h), as its device functions use them: 2^-32, 2^-32 * 2pi rounded to
// float, and 2^-53.
constexpr float kTwoPow32Inv = 2.3283064e-10f;
constexpr float kTwoPow32Inv2Pi = 2.3283064e-10f * 6.2831855f;
constexpr double kTwoPow53Inv = 1.1102230246251565e-16;

}  // namespace accel::rand
