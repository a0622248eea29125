#include "embed/wordpiece_tokenizer.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include "embed/bert_pre_tokenizer.hpp"
#include "embed/tokenizer_config.hpp"

namespace accel::embed {
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

bool is_ascii_space(char byte) { return byte == ' ' || byte == '\t' || byte == '\n' || byte == '\r'; }

// Where to end the stretch of `text` normalized in one go: the first ASCII space after `begin` plus
// kStretch bytes. Every normalizer and pre-tokenizer setting makes such a space a word boundary (and NFD
// reorders nothing across it), so stretches tokenize as the whole text would, and a long text that is cut
// short is only normalized about as far as it is tokenized.
std::size_t stretch_end(std::string_view text, std::size_t begin) {
  constexpr std::size_t kStretch = 4096;
  if (text.size() - begin <= kStretch) return text.size();
  const auto space =
      std::find_if(text.begin() + static_cast<std::ptrdiff_t>(begin + kStretch), text.end(), is_ascii_space);
  return static_cast<std::size_t>(space - text.begin());
}

}  // namespace

WordPieceTokenizer::WordPieceTokenizer(BertNormalizer normalizer, AddedTokenMatcher added_tokens, WordPieceModel model,
                                       std::int32_t cls_id, std::int32_t sep_id)
    : normalizer_(normalizer),
      added_tokens_(std::move(added_tokens)),
      model_(std::move(model)),
      cls_id_(cls_id),
      sep_id_(sep_id) {}

Result<WordPieceTokenizer> WordPieceTokenizer::load(const std::filesystem::path& tokenizer_json) {
  std::ifstream in(tokenizer_json, std::ios::binary);
  if (!in) return invalid_argument("cannot open " + tokenizer_json.string());
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return invalid_argument("cannot read " + tokenizer_json.string());
  auto tokenizer = from_json(text);
  if (!tokenizer) return tokenizer.status().with_context(tokenizer_json.string());
  return tokenizer;
}

Result<WordPieceTokenizer> WordPieceTokenizer::from_json(std::string_view tokenizer_json) {
  ACCEL_ASSIGN_OR_RETURN(TokenizerConfig config, TokenizerConfig::parse(tokenizer_json));
  auto model = WordPieceModel::build(std::move(config.vocabulary), std::move(config.wordpiece));
  if (!model) return model.status().with_context("tokenizer.json");
  return WordPieceTokenizer(BertNormalizer(config.normalizer), AddedTokenMatcher(std::move(config.added_tokens)),
                            std::move(*model), config.cls_id, config.sep_id);
}

bool WordPieceTokenizer::append_words(std::string_view text, std::size_t limit, Scratch& scratch,
                                      std::vector<std::int32_t>& ids) const {
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = stretch_end(text, begin);
    normalizer_.normalize(text.substr(begin, end - begin), scratch.normalized, scratch.cleaned);
    const bool fits = BertPreTokenizer::split(scratch.normalized, scratch.word, [&](std::string_view word) {
      model_.append_ids(word, ids);
      return ids.size() <= limit;
    });
    if (!fits) return false;
    begin = end;
  }
  return true;
}

Status WordPieceTokenizer::encode_into(std::string_view utf8, std::size_t max_length, Scratch& scratch,
                                       Encoding& out) const {
  if (max_length < 2) {
    return invalid_argument("max_length " + std::to_string(max_length) + " leaves no room for [CLS] and [SEP]");
  }
  if (const std::size_t bad = first_invalid_utf8(utf8); bad != std::string_view::npos) {
    return invalid_argument("the text is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  out.ids.clear();
  out.ids.push_back(cls_id_);
  const std::size_t limit = max_length - 1;  // ids before [SEP]
  bool fits = true;
  for (std::size_t from = 0; fits;) {
    const auto added = added_tokens_.find(utf8, from);
    const std::size_t end = added ? added->begin : utf8.size();
    fits = append_words(utf8.substr(from, end - from), limit, scratch, out.ids);
    if (!fits || !added) break;
    out.ids.push_back(added->id);
    fits = out.ids.size() <= limit;
    from = added->end;
  }
  out.truncated = !fits;
  if (out.truncated) out.ids.resize(limit);
  out.ids.push_back(sep_id_);
  return Status();
}

Result<Encoding> WordPieceTokenizer::encode(std::string_view utf8, std::size_t max_length) const {
  Scratch scratch;
  Encoding encoding;
  ACCEL_RETURN_IF_ERROR(encode_into(utf8, max_length, scratch, encoding));
  return encoding;
}

Result<std::vector<Encoding>> WordPieceTokenizer::encode_batch(std::span<const std::string> texts,
                                                               std::size_t max_length, unsigned threads) const {
  std::vector<Encoding> encodings(texts.size());
  // Threads take blocks of texts in order, so a long text holds up one block, not a whole share.
  constexpr std::size_t kBlock = 16;
  const std::size_t blocks = (texts.size() + kBlock - 1) / kBlock;
  if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
  const std::size_t workers = std::min<std::size_t>(threads, blocks);

  std::atomic<std::size_t> next_block{0};
  // Texts after the lowest invalid one found so far are skipped; every text before it is still encoded,
  // so the error reported is that of the lowest invalid index whatever the threads' timing.
  std::atomic<std::size_t> first_failure{std::numeric_limits<std::size_t>::max()};
  std::mutex failure_mutex;
  Status failure;
  auto work = [&] {
    Scratch scratch;
    for (std::size_t block = next_block++; block < blocks; block = next_block++) {
      const std::size_t end = std::min(texts.size(), (block + 1) * kBlock);
      for (std::size_t i = block * kBlock; i < end && i < first_failure.load(std::memory_order_relaxed); ++i) {
        Status status = encode_into(texts[i], max_length, scratch, encodings[i]);
        if (status.ok()) continue;
        const std::scoped_lock lock(failure_mutex);
        if (i < first_failure.load()) {
          first_failure = i;
          failure = status.with_context("text " + std::to_string(i));
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

}  // namespace accel::embed
