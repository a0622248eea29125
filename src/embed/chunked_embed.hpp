// A call's texts tokenised in chunks while the device runs the chunks before them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "accel/core/future.hpp"
#include "accel/core/result.hpp"
#include "accel/embed/model.hpp"

namespace accel::embed {

// The texts a chunk tokenises at once: enough to spread over the tokenizer's threads (on the H200's 16, text in ran
// 1.04x faster with 1,024 than with 512, and no faster with 2,048), few enough that the device gets its first run
// soon.
inline constexpr std::size_t kChunkTexts = 1024;

// Tokenises `texts` kChunkTexts at a time on this thread (`tokenize`: a chunk's texts and the index of its first, for
// messages) and hands `submit` every whole run of `batch_tokens` the tokens so far fill (split_runs without rungs),
// keeping the last, partial run's sequences for the next chunk, so that every run but a call's last stays full. So
// the device runs one chunk while the host tokenises the next: on a GPU, tokenising a call's texts took longer than
// running them. Returns the rows of every text in order; an error (a chunk's tokenisation or a run's) once every run
// submitted has answered.
[[nodiscard]] Future<Embeddings> embed_in_chunks(
    std::span<const std::string> texts, std::uint32_t batch_tokens,
    const std::function<Result<TokenBatch>(std::span<const std::string>, std::size_t first)>& tokenize,
    const std::function<Future<Embeddings>(TokenBatch)>& submit);

}  // namespace accel::embed
