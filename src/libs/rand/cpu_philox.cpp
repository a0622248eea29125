#include "libs/rand/cpu_philox.hpp"

#include <array>
#include <cmath>

#include "libs/rand/philox.hpp"
#include "libs/rand/philox_transforms.hpp"

namespace accel::rand {
namespace {

// The elements of block `block` (elements_per_block(Kind) of them), as philox_kernel.cu's draw() makes them.
template <OutputKind Kind, class T>
void draw(const PhiloxArgs& args, std::uint64_t block, T* v) {
  const PhiloxBlock w = philox_block(args.seed, 0, block);
  if constexpr (Kind == OutputKind::bits) {
    for (int i = 0; i < 4; ++i) v[i] = w[i];
  } else if constexpr (Kind == OutputKind::uniform_f32) {
    for (int i = 0; i < 4; ++i) v[i] = uniform_f32(w[i]);
  } else if constexpr (Kind == OutputKind::normal_f32 || Kind == OutputKind::log_normal_f32) {
    const float mean = static_cast<float>(args.mean), stddev = static_cast<float>(args.stddev);
    const std::array<float, 2> a = box_muller_f32(w[0], w[1]), b = box_muller_f32(w[2], w[3]);
    const std::array<float, 4> n = {a[0], a[1], b[0], b[1]};
    for (int i = 0; i < 4; ++i) {
      const float x = std::fmaf(stddev, n[i], mean);
      v[i] = Kind == OutputKind::normal_f32 ? x : std::exp(x);
    }
  } else if constexpr (Kind == OutputKind::uniform_f64) {
    v[0] = uniform_f64(w[0], w[1]);
    v[1] = uniform_f64(w[2], w[3]);
  } else {
    static_assert(Kind == OutputKind::normal_f64 || Kind == OutputKind::log_normal_f64);
    const std::array<double, 2> n = box_muller_f64(w[0], w[1], w[2], w[3]);
    for (int i = 0; i < 2; ++i) {
      const double x = std::fma(args.stddev, n[i], args.mean);
      v[i] = Kind == OutputKind::normal_f64 ? x : std::exp(x);
    }
  }
}

template <OutputKind Kind, class T>
void run_blocks(const PhiloxArgs& args) {
  constexpr std::uint64_t kPerBlock = elements_per_block(Kind);
  T* out = static_cast<T*>(args.output);
  const std::uint64_t end = args.offset + args.count;
  for (std::uint64_t block = args.offset / kPerBlock; block * kPerBlock < end; ++block) {
    T v[kPerBlock];
    draw<Kind>(args, block, v);
    for (std::uint64_t w = 0; w < kPerBlock; ++w) {
      const std::uint64_t e = block * kPerBlock + w;
      if (e >= args.offset && e < end) out[e - args.offset] = v[w];
    }
  }
}

}  // namespace

void run_cpu_philox(const PhiloxArgs& args) {
  if (args.count == 0) return;
  switch (args.kind) {
    case OutputKind::bits: return run_blocks<OutputKind::bits, std::uint32_t>(args);
    case OutputKind::uniform_f32: return run_blocks<OutputKind::uniform_f32, float>(args);
    case OutputKind::normal_f32: return run_blocks<OutputKind::normal_f32, float>(args);
    case OutputKind::log_normal_f32: return run_blocks<OutputKind::log_normal_f32, float>(args);
    case OutputKind::uniform_f64: return run_blocks<OutputKind::uniform_f64, double>(args);
    case OutputKind::normal_f64: return run_blocks<OutputKind::normal_f64, double>(args);
    case OutputKind::log_normal_f64: return run_blocks<OutputKind::log_normal_f64, double>(args);
    case OutputKind::poisson: break;
  }
  auto* out = static_cast<std::uint32_t*>(args.output);
  for (std::uint64_t i = 0; i < args.count; ++i) out[i] = poisson_element(args.seed, args.offset + i, args.lambda);
}

}  // namespace accel::rand
