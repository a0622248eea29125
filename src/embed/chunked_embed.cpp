#include "embed/chunked_embed.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "embed/run_split.hpp"

namespace accel::embed {
namespace {

// Sequences [first, last) of `from` added at the end of `to` (with their type ids, if `from` has them).
void append_sequences(TokenBatch& to, const TokenBatch& from, std::size_t first, std::size_t last) {
  const std::span<const std::int32_t> ids(from.ids), types(from.type_ids);
  for (std::size_t s = first; s < last; ++s)
    to.append(ids.subspan(from.offsets[s], from.length(s)),
              types.empty() ? types : types.subspan(from.offsets[s], from.length(s)));
}

// Every part's rows, in order; the first error once all have answered. A member function of an object that lives as
// long as the process, not a free or static one: clang 14 with -fsanitize=fuzzer-no-link (scripts/fuzz-ci) fails on
// those coroutines ("Cannot represent a difference across sections") and compiles this one.
// The rows are made once, at the size of every text's (`texts`), when the first part answers: grown part by part,
// they were copied again at each doubling, into fresh pages each time.
struct Gathering {
  Future<Embeddings> rows(std::vector<Future<Embeddings>> parts, std::size_t texts, Status failure) const {
    Embeddings out;
    for (Future<Embeddings>& part : parts) {
      Result<Embeddings> done = co_await std::move(part);
      if (!done.ok() && failure.ok()) failure = done.status();
      if (!done.ok() || !failure.ok()) continue;
      if (out.tokens.empty() && done->count() > 0) {
        out.values.reserve(done->values.size() / done->count() * texts);
        out.tokens.reserve(texts);
      }
      out.dimensions = done->dimensions;
      out.values.insert(out.values.end(), done->values.begin(), done->values.end());
      out.tokens.insert(out.tokens.end(), done->tokens.begin(), done->tokens.end());
    }
    if (!failure.ok()) co_return failure;
    co_return out;
  }
};
constexpr Gathering kGathering;

}  // namespace

Future<Embeddings> embed_in_chunks(
    std::span<const std::string> texts, std::uint32_t batch_tokens,
    const std::function<Result<TokenBatch>(std::span<const std::string>, std::size_t first)>& tokenize,
    const std::function<Future<Embeddings>(TokenBatch)>& submit) {
  std::vector<Future<Embeddings>> parts;
  TokenBatch pending;
  Status failure;
  for (std::size_t first = 0; first < texts.size(); first += kChunkTexts) {
    const std::size_t count = std::min(kChunkTexts, texts.size() - first);
    Result<TokenBatch> chunk = tokenize(texts.subspan(first, count), first);
    if (!chunk.ok()) {
      failure = chunk.status();
      break;
    }
    if (pending.sequences() == 0) {
      pending = std::move(*chunk);
    } else {
      append_sequences(pending, *chunk, 0, chunk->sequences());
    }
    if (first + count == texts.size()) break;
    const std::vector<std::size_t> starts = split_runs(pending.offsets, batch_tokens, pending.sequences(), {});
    if (starts.size() < 3) continue;                      // one run so far: it may fill yet
    const std::size_t whole = starts[starts.size() - 2];  // the sequences of every run but the last
    TokenBatch runs, rest;
    append_sequences(runs, pending, 0, whole);
    append_sequences(rest, pending, whole, pending.sequences());
    parts.push_back(submit(std::move(runs)));
    pending = std::move(rest);
  }
  if (failure.ok() && (pending.sequences() > 0 || parts.empty())) parts.push_back(submit(std::move(pending)));
  // A call of one part (a query, any call of one chunk) answers with that part's future: no gathering frame and no
  // copy of its rows on a query's path.
  if (failure.ok() && parts.size() == 1) return std::move(parts.front());
  return kGathering.rows(std::move(parts), texts.size(), std::move(failure));
}

}  // namespace accel::embed
