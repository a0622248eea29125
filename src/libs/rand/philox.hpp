// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011) as a pure function of a
// 128-bit counter and a 64-bit key, and the sequential reader of its words that a cuRAND Philox state is.
#pragma once

#include <array>
#include <cstdint>

namespace accel::rand {

using PhiloxBlock = std::array<std::uint32_t, 4>;

// Ten rounds of the 4x32 bijection; the counter's word 0 is its least significant.
[[nodiscard]] constexpr PhiloxBlock philox4x32_10(PhiloxBlock counter, std::uint32_t key0,
                                                  std::uint32_t key1) noexcept {
  constexpr std::uint32_t kMultiplier0 = 0xD2511F53u, kMultiplier1 = 0xCD9E8D57u;
  constexpr std::uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t product0 = std::uint64_t{kMultiplier0} * counter[0];
    const std::uint64_t product1 = std::uint64_t{kMultiplier1} * counter[2];
    counter = {static_cast<std::uint32_t>(product1 >> 32) ^ counter[1] ^ key0, static_cast<std::uint32_t>(product1),
               static_cast<std::uint32_t>(product0 >> 32) ^ counter[3] ^ key1, static_cast<std::uint32_t>(product0)};
    key0 += kWeyl0;
    key1 += kWeyl1;
  }
  return counter;
}

// The block at `block` of `subsequence` under `seed`, as curand_init(seed, subsequence, 4 * block) sees it.
[[nodiscard]] constexpr PhiloxBlock philox_block(std::uint64_t seed, std::uint64_t subsequence,
                                                 std::uint64_t block) noexcept {
  return philox4x32_10({static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32),
                        static_cast<std::uint32_t>(subsequence), static_cast<std::uint32_t>(subsequence >> 32)},
                       static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

// The words of one subsequence in order, from its start: what curand() and curand4() of a state made by
// curand_init(seed, subsequence, 0) return, one word or four at a time.
class PhiloxWords {
 public:
  PhiloxWords(std::uint64_t seed, std::uint64_t subsequence) noexcept
      : seed_(seed), subsequence_(subsequence), block_(philox_block(seed, subsequence, 0)) {}

  std::uint32_t next() noexcept {
    const std::uint32_t word = block_[word_];
    if (++word_ == 4) {
      block_ = philox_block(seed_, subsequence_, ++counter_);
      word_ = 0;
    }
    return word;
  }
  PhiloxBlock next4() noexcept { return {next(), next(), next(), next()}; }

 private:
  std::uint64_t seed_;
  std::uint64_t subsequence_;
  std::uint64_t counter_ = 0;
  unsigned word_ = 0;
  PhiloxBlock block_;
};

}  // namespace accel::rand
