// What rand::Generate's validation establishes, before any buffer or device is involved.
#pragma once

#include "accel/libs/rand/generate.hpp"
#include "libs/rand/philox_layout.hpp"

namespace accel::rand {

// A request that passed check_generate.
struct CheckedGenerate {
  Generator generator = Generator::philox4x32_10;
  OutputKind kind = OutputKind::uniform_f32;
  DType dtype = DType::f32;
  std::uint64_t count = 0;

  [[nodiscard]] bool philox() const noexcept { return generator == Generator::philox4x32_10; }
};

// Every field: enums in range (requests cross from other processes byte for byte), the dtype the distribution
// makes, parameters finite and in range, the seed (none for Sobol32), an even count where cuRAND's Box-Muller
// needs one, offset + count within the stream.
[[nodiscard]] Result<CheckedGenerate> check_generate(const Generate& request);

// The Philox kernel's arguments for a checked request writing to `output`.
[[nodiscard]] PhiloxArgs philox_args(const Generate& request, const CheckedGenerate& checked, void* output) noexcept;

}  // namespace accel::rand
