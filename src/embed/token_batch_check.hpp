// What a model checks of a token batch before anything of it is sent to the device.
#pragma once

#include <cstdint>

#include "accel/core/status.hpp"
#include "accel/embed/model.hpp"

namespace accel::embed {

// OK when `batch`'s offsets cover its ids from 0, every sequence has between 1 and the model's
// max_sequence_length tokens, every id is in its vocabulary and every type id (if any) below `token_types`;
// otherwise an invalid_argument naming the first sequence and value that is not.
[[nodiscard]] Status check_token_batch(const TokenBatch& batch, const ModelInfo& info, std::uint32_t token_types);

}  // namespace accel::embed
