#include "text/tokenizer/unigram.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "text/tokenizer/json_fields.hpp"
#include "text/tokenizer/piece_table.hpp"  // byte_fallback_piece
#include "text/tokenizer/piece_trie.hpp"
#include "text/tokenizer/utf8.hpp"

namespace accel::text {
namespace {

constexpr double kUnknownPenalty = 10.0;  // tokenizers' (and SentencePiece's) kUnkPenalty

// The best segmentation of the text up to a byte: its score and its last piece.
struct BestPath {
  double score = 0.0;
  std::int32_t id = 0;
  std::size_t start = 0;
  bool reached = false;
};

// Per thread, so that tokenizing a word allocates nothing once the buffers have grown.
struct Scratch {
  std::vector<BestPath> best;
  std::vector<std::size_t> ends;  // of the pieces of the best path, last first
};

class Unigram final : public TokenModel {
 public:
  Unigram(std::vector<std::string> pieces, std::vector<double> scores, PieceTrie trie, std::int32_t unk_id,
          bool byte_fallback)
      : pieces_(std::move(pieces)),
        scores_(std::move(scores)),
        trie_(std::move(trie)),
        unk_id_(unk_id),
        byte_fallback_(byte_fallback) {
    unknown_score_ = *std::min_element(scores_.begin(), scores_.end()) - kUnknownPenalty;
    for (unsigned byte = 0; byte < byte_ids_.size(); ++byte) {
      byte_ids_[byte] = trie_.find(byte_fallback_piece(static_cast<unsigned char>(byte)));
    }
  }

  void tokenize(std::string_view text, std::vector<Token>& out) const override {
    if (text.empty()) return;
    thread_local Scratch scratch;
    best_paths(text, scratch.best);
    scratch.ends.clear();
    for (std::size_t end = text.size(); end > 0; end = scratch.best[end].start) scratch.ends.push_back(end);
    std::size_t start = 0;
    std::size_t unknown_start = 0;  // of the run of unknown pieces ending at `start`
    for (auto end = scratch.ends.rbegin(); end != scratch.ends.rend(); ++end) {
      const std::int32_t id = scratch.best[*end].id;
      if (id != unk_id_) {
        if (unknown_start < start) emit_unknown(text, Range{unknown_start, start}, out);
        out.push_back(Token{id, pieces_[static_cast<std::size_t>(id)], Range{start, *end}});
        unknown_start = *end;
      }
      start = *end;
    }
    if (unknown_start < start) emit_unknown(text, Range{unknown_start, start}, out);
  }

  [[nodiscard]] std::optional<std::int32_t> token_to_id(std::string_view token) const override {
    const std::int32_t id = trie_.find(token);
    return id >= 0 ? std::optional(id) : std::nullopt;
  }
  [[nodiscard]] std::optional<std::string_view> id_to_token(std::int32_t id) const override {
    if (id < 0 || static_cast<std::size_t>(id) >= pieces_.size()) return std::nullopt;
    return pieces_[static_cast<std::size_t>(id)];
  }
  [[nodiscard]] std::size_t vocabulary_size() const override { return pieces_.size(); }

 private:
  // best[end] for every code point boundary `end` of the text (tokenizers' encode_optimized): ties keep the
  // path found first, the one whose last piece starts earliest.
  void best_paths(std::string_view text, std::vector<BestPath>& best) const {
    best.assign(text.size() + 1, BestPath{});
    const auto offer = [&best](std::size_t end, double score, std::int32_t id, std::size_t start) {
      BestPath& target = best[end];
      if (!target.reached || score > target.score) target = BestPath{score, id, start, true};
    };
    for (std::size_t start = 0; start < text.size();) {
      const std::size_t char_end =
          start + std::min(utf8::sequence_length(static_cast<unsigned char>(text[start])), text.size() - start);
      const double score_here = best[start].score;
      bool one_code_point_piece = false;
      trie_.for_each_prefix(text, start, [&](std::size_t end, std::int32_t id) {
        offer(end, score_here + scores_[static_cast<std::size_t>(id)], id, start);
        one_code_point_piece = one_code_point_piece || end == char_end;
      });
      if (!one_code_point_piece) offer(char_end, score_here + unknown_score_, unk_id_, start);
      start = char_end;
    }
  }

  // A run of unknown pieces is one token: the piece it spells if there is one, else its bytes' <0xXX> pieces
  // (each with the run's offsets) where byte fallback has them all, else the unknown id with the run's text.
  void emit_unknown(std::string_view text, Range range, std::vector<Token>& out) const {
    const std::string_view run = text.substr(range.begin, range.end - range.begin);
    if (const std::int32_t id = trie_.find(run); id >= 0) {
      out.push_back(Token{id, std::string(run), range});
      return;
    }
    if (byte_fallback_ && std::all_of(run.begin(), run.end(),
                                      [this](char byte) { return byte_ids_[static_cast<unsigned char>(byte)] >= 0; })) {
      for (const char byte : run) {
        const std::int32_t id = byte_ids_[static_cast<unsigned char>(byte)];
        out.push_back(Token{id, pieces_[static_cast<std::size_t>(id)], range});
      }
      return;
    }
    out.push_back(Token{unk_id_, std::string(run), range});
  }

  std::vector<std::string> pieces_;  // by id
  std::vector<double> scores_;
  PieceTrie trie_;  // also maps a piece to its id (of equal pieces the last, as in tokenizers)
  std::int32_t unk_id_;
  double unknown_score_ = 0.0;
  bool byte_fallback_;
  std::array<std::int32_t, 256> byte_ids_{};
};

}  // namespace

Result<std::unique_ptr<TokenModel>> make_unigram(const nlohmann::json& object, std::string_view path) {
  using namespace json_fields;
  const std::string vocab_path = child(path, "vocab");
  ACCEL_ASSIGN_OR_RETURN(const json* vocab, member(object, path, "vocab"));
  if (!vocab->is_array() || vocab->empty()) {
    return refused(vocab_path, *vocab, "expected a non-empty array of [piece, score] pairs");
  }
  std::vector<std::string> pieces;
  std::vector<double> scores;
  pieces.reserve(vocab->size());
  scores.reserve(vocab->size());
  for (std::size_t i = 0; i < vocab->size(); ++i) {
    const json& entry = (*vocab)[i];
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number() ||
        !std::isfinite(entry[1].get<double>())) {
      return refused(indexed(vocab_path, i), entry, "expected a [piece, score] pair with a finite score");
    }
    pieces.push_back(entry[0].get<std::string>());
    scores.push_back(entry[1].get<double>());
  }
  ACCEL_ASSIGN_OR_RETURN(const json* unk_id_json, optional_member(object, path, "unk_id"));
  // tokenizers fails only when a word needs the unknown piece; we cannot fail then, so we refuse the file.
  if (unk_id_json == nullptr) {
    return invalid_argument("tokenizer.json: " + child(path, "unk_id") +
                            " is missing or null; we need the unknown piece for code points no piece covers");
  }
  ACCEL_ASSIGN_OR_RETURN(const std::uint64_t unk_id, count_member(object, path, "unk_id", pieces.size() - 1));
  ACCEL_ASSIGN_OR_RETURN(const bool byte_fallback, bool_member_or(object, path, "byte_fallback", false));
  auto trie = PieceTrie::build(pieces);
  if (!trie.ok()) return trie.status().with_context("tokenizer.json: " + vocab_path);
  return std::unique_ptr<TokenModel>(std::make_unique<Unigram>(std::move(pieces), std::move(scores), std::move(*trie),
                                                               static_cast<std::int32_t>(unk_id), byte_fallback));
}

}  // namespace accel::text
