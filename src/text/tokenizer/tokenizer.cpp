// Running the pipeline, as `tokenizers`' TokenizerImpl::encode does: added tokens and normalization, pre-tokenizer,
// model, then truncation (leaving room for the post-processor's special tokens) and the post-processor.
#include <utf8proc.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include "accel/text/tokenizer.hpp"
#include "text/tokenizer/pipeline.hpp"

namespace accel::text {
namespace {

// The byte offset of the first malformed sequence (overlong forms, surrogates and code points past U+10FFFF
// included), or npos.
std::size_t first_invalid_utf8(std::string_view text) {
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  const auto size = static_cast<utf8proc_ssize_t>(text.size());
  for (utf8proc_ssize_t i = 0; i < size;) {
    if (bytes[i] < 0x80) {
      ++i;
      continue;
    }
    utf8proc_int32_t c = 0;
    const utf8proc_ssize_t length = utf8proc_iterate(bytes + i, size - i, &c);
    if (length <= 0) return static_cast<std::size_t>(i);
    i += length;
  }
  return std::string_view::npos;
}

Status check_utf8(std::string_view text, std::string_view which) {
  const std::size_t bad = first_invalid_utf8(text);
  if (bad == std::string_view::npos) return Status();
  return invalid_argument(std::string(which) + " is not valid UTF-8 (byte " + std::to_string(bad) + ")");
}

// One text's tokens, offsets in its bytes, before truncation and post-processing.
Encoding encode_sequence(const Tokenizer::Pipeline& pipeline, std::string_view text, std::uint32_t sequence) {
  std::vector<Split> splits = pipeline.added_vocabulary.extract_and_normalize(text, pipeline.normalizer.get());
  if (pipeline.pre_tokenizer) pipeline.pre_tokenizer->pre_tokenize(splits);

  Encoding encoding;
  std::vector<Token> model_tokens;
  for (const Split& split : splits) {
    const std::vector<Token>* tokens = nullptr;
    if (split.tokens) {
      tokens = &*split.tokens;
    } else {
      model_tokens.clear();
      if (!split.text.empty()) pipeline.model->tokenize(split.text.normalized(), model_tokens);
      tokens = &model_tokens;
    }
    for (const Token& token : *tokens) {
      encoding.ids.push_back(token.id);
      encoding.tokens.push_back(token.value);
      encoding.offsets.push_back(split.text.original_range(token.offsets));
    }
  }
  const std::size_t count = encoding.ids.size();
  encoding.type_ids.assign(count, static_cast<std::int32_t>(sequence));
  encoding.special_tokens_mask.assign(count, 0);
  encoding.sequence_ids.assign(count, sequence);
  return encoding;
}

void truncate(Encoding& encoding, std::size_t keep, TruncationSide side) {
  const std::size_t size = encoding.ids.size();
  if (size <= keep) return;
  const auto cut = [&](auto& values) {
    if (side == TruncationSide::right) {
      values.resize(keep);
    } else {
      values.erase(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(size - keep));
    }
  };
  cut(encoding.ids);
  cut(encoding.type_ids);
  cut(encoding.tokens);
  cut(encoding.offsets);
  cut(encoding.special_tokens_mask);
  cut(encoding.sequence_ids);
  encoding.truncated = true;
}

// `tokenizers`' longest_first: the shorter sequence keeps what it can of an even share, the longer one the rest.
void truncate_longest_first(Encoding& first, Encoding& second, std::size_t max_length, TruncationSide side) {
  std::size_t shorter = std::min(first.ids.size(), second.ids.size());
  std::size_t longer = std::max(first.ids.size(), second.ids.size());
  if (shorter + longer <= max_length) return;
  longer = shorter > max_length ? shorter : std::max(shorter, max_length - shorter);
  if (shorter + longer > max_length) {
    shorter = max_length / 2;
    longer = shorter + max_length % 2;
  }
  const bool first_is_longer = first.ids.size() > second.ids.size();
  truncate(first, first_is_longer ? longer : shorter, side);
  truncate(second, first_is_longer ? shorter : longer, side);
}

Result<Encoding> encode_valid(const Tokenizer::Pipeline& pipeline, std::string_view first,
                              const std::string_view* second, const EncodeOptions& options) {
  const bool pair = second != nullptr;
  const std::size_t special =
      options.add_special_tokens && pipeline.post_processor ? pipeline.post_processor->added_tokens(pair) : 0;
  if (options.max_length != 0 && options.max_length <= special) {
    return invalid_argument("max_length " + std::to_string(options.max_length) + " leaves no room for a token beside " +
                            std::to_string(special) + " special tokens");
  }

  Encoding encoding = encode_sequence(pipeline, first, 0);
  std::optional<Encoding> pair_encoding;
  if (pair) pair_encoding = encode_sequence(pipeline, *second, 1);

  if (options.max_length != 0) {
    const std::size_t budget = options.max_length - special;
    if (pair_encoding) {
      truncate_longest_first(encoding, *pair_encoding, budget, options.side);
    } else {
      truncate(encoding, budget, options.side);
    }
  }

  if (pipeline.post_processor) {
    pipeline.post_processor->process(encoding, pair_encoding ? &*pair_encoding : nullptr, options.add_special_tokens);
  } else if (pair_encoding) {
    append_encoding(encoding, std::move(*pair_encoding));
  }
  return encoding;
}

}  // namespace

Result<Encoding> Tokenizer::encode(std::string_view utf8, const EncodeOptions& options) const {
  ACCEL_RETURN_IF_ERROR(check_utf8(utf8, "the text"));
  return encode_valid(*pipeline_, utf8, nullptr, options);
}

Result<Encoding> Tokenizer::encode_pair(std::string_view first, std::string_view second,
                                        const EncodeOptions& options) const {
  ACCEL_RETURN_IF_ERROR(check_utf8(first, "the first text"));
  ACCEL_RETURN_IF_ERROR(check_utf8(second, "the second text"));
  return encode_valid(*pipeline_, first, &second, options);
}

namespace {

// encode_one(i) for i in [0, count), on up to `threads` host threads, in index order; `what` names an input in the
// error of the lowest failing one.
template <class EncodeOne>
Result<std::vector<Encoding>> encode_each(std::size_t count, unsigned threads, std::string_view what,
                                          const EncodeOne& encode_one) {
  std::vector<Encoding> encodings(count);
  if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
  // Threads take blocks of texts in order, so a long text holds up one block, not a whole share. Blocks of up to 16
  // texts, and at least 8 a thread where the texts allow: a call of a few hundred texts (embed's chunks) on 16
  // threads then ends evenly, where blocks of 16 gave each thread two and the call waited for the slowest.
  const std::size_t block = std::clamp<std::size_t>(count / (std::size_t{threads} * 8), 1, 16);
  const std::size_t blocks = (count + block - 1) / block;
  const std::size_t workers = std::min<std::size_t>(threads, blocks);

  std::atomic<std::size_t> next_block{0};
  // Texts after the lowest failing one found so far are skipped; every text before it is still encoded, so the
  // error reported is that of the lowest failing index whatever the threads' timing.
  std::atomic<std::size_t> first_failure{std::numeric_limits<std::size_t>::max()};
  std::mutex failure_mutex;
  Status failure;
  auto work = [&] {
    for (std::size_t taken = next_block++; taken < blocks; taken = next_block++) {
      const std::size_t end = std::min(count, (taken + 1) * block);
      for (std::size_t i = taken * block; i < end && i < first_failure.load(std::memory_order_relaxed); ++i) {
        Result<Encoding> encoding = encode_one(i);
        if (encoding) {
          encodings[i] = std::move(*encoding);
          continue;
        }
        const std::scoped_lock lock(failure_mutex);
        if (i < first_failure.load()) {
          first_failure = i;
          failure = encoding.status().with_context(std::string(what) + " " + std::to_string(i));
        }
        break;
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    for (std::size_t w = 1; w < workers; ++w) {
      try {
        pool.emplace_back(work);
      } catch (const std::system_error&) {
        break;  // no more threads to be had: the ones started and this one share the blocks
      }
    }
    work();
  }
  if (!failure.ok()) return failure;
  return encodings;
}

}  // namespace

Result<std::vector<Encoding>> Tokenizer::encode_batch(std::span<const std::string> texts, const EncodeOptions& options,
                                                      unsigned threads) const {
  return encode_each(texts.size(), threads, "text", [&](std::size_t i) { return encode(texts[i], options); });
}

Result<std::vector<Encoding>> Tokenizer::encode_pairs(std::string_view first, std::span<const std::string> seconds,
                                                      const EncodeOptions& options, unsigned threads) const {
  return encode_each(seconds.size(), threads, "pair",
                     [&](std::size_t i) { return encode_pair(first, seconds[i], options); });
}

std::optional<std::int32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (auto id = pipeline_->added_vocabulary.token_to_id(token)) return id;
  return pipeline_->model->token_to_id(token);
}

std::optional<std::string> Tokenizer::id_to_token(std::int32_t id) const {
  if (auto token = pipeline_->added_vocabulary.id_to_token(id)) return std::string(*token);
  if (auto token = pipeline_->model->id_to_token(id)) return std::string(*token);
  return std::nullopt;
}

Result<std::string> Tokenizer::decode(std::span<const std::int32_t> ids, bool skip_special_tokens) const {
  if (!pipeline_->decoder_refusal.ok()) return pipeline_->decoder_refusal;
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const std::int32_t id : ids) {
    if (skip_special_tokens && pipeline_->added_vocabulary.is_special(id)) continue;
    if (std::optional<std::string> token = id_to_token(id)) tokens.push_back(std::move(*token));
  }
  std::string text;
  if (pipeline_->decoder == nullptr) {
    for (std::size_t i = 0; i < tokens.size(); ++i) text += (i == 0 ? "" : " ") + tokens[i];
    return text;
  }
  pipeline_->decoder->decode_chain(tokens);
  for (const std::string& piece : tokens) text += piece;
  return text;
}

std::size_t Tokenizer::vocabulary_size() const {
  return std::max(pipeline_->model->vocabulary_size(), pipeline_->added_vocabulary.id_limit());
}

std::string Tokenizer::describe() const { return pipeline_->description; }

}  // namespace accel::text
