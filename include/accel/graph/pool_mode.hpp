/// @file
/// How a graph's `pool` op makes one row of a sequence's rows, shared by the graph (graph.hpp) and its kernels.
#pragma once

#include <cstdint>
#include <string_view>

namespace accel::graph {

/// Of a packed sequence's rows x_0 .. x_{n-1} (rows [offsets[s], offsets[s + 1]) of x). An empty sequence pools to
/// a zero row in every mode, so that padding sequences stay finite.
enum class PoolMode : std::uint8_t {
  mean,              ///< their mean
  max,               ///< their elementwise maximum
  first,             ///< x_0, row offsets[s] (a [CLS] token's state)
  last,              ///< x_{n-1}, row offsets[s + 1] - 1 (a decoder's last token, which has seen them all)
  mean_sqrt_length,  ///< their sum / sqrt(n) (sentence-transformers' mean_sqrt_len_tokens)
  weighted_mean,     ///< sum (i + 1) x_i / sum (i + 1) (sentence-transformers' weightedmean)
};

/// The mode's name, for messages and graph descriptions.
[[nodiscard]] std::string_view to_string(PoolMode mode) noexcept;

}  // namespace accel::graph
