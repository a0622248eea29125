// Post-processors: the special tokens around the model's tokens, type ids, and ByteLevel's offset trimming, as
// HuggingFace `tokenizers` (processors/) defines them. Like `tokenizers`, each works on a list of parts (first the
// one or two sequences; TemplateProcessing turns them into one part per template piece) that are concatenated at
// the end, so that processors chained in a Sequence see what they would see there.
//
// Where `tokenizers` leaves a special token's sequence id unset, ours is the side it was added to: for Bert and
// RoBERTa the sequence it is attached to; for a template, the sequence piece before it (the first one after it for
// tokens that open the template).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "accel/text/tokenizer.hpp"
#include "text/tokenizer/components.hpp"
#include "text/tokenizer/json_fields.hpp"
#include "text/tokenizer/utf8.hpp"

namespace accel::text {
namespace {

using json_fields::child;
using json_fields::indexed;
using json_fields::json;

constexpr std::string_view kSupported = "BertProcessing, RobertaProcessing, TemplateProcessing, ByteLevel, Sequence";

// The special tokens of one processor, in order.
struct SpecialTokens {
  std::vector<std::int32_t> ids;
  std::vector<std::string> tokens;
};

// One special token as a part of its own.
Encoding special_part(const SpecialTokens& special, std::int32_t type_id, std::uint32_t side) {
  Encoding part;
  const std::size_t count = special.ids.size();
  part.ids = special.ids;
  part.tokens = special.tokens;
  part.type_ids.assign(count, type_id);
  part.offsets.assign(count, Range{});
  part.special_tokens_mask.assign(count, 1);
  part.sequence_ids.assign(count, side);
  return part;
}

// Room for `count` tokens in each of the encoding's per-token vectors, so that appending parts moves each once.
void reserve_tokens(Encoding& encoding, std::size_t count) {
  encoding.ids.reserve(count);
  encoding.type_ids.reserve(count);
  encoding.tokens.reserve(count);
  encoding.offsets.reserve(count);
  encoding.special_tokens_mask.reserve(count);
  encoding.sequence_ids.reserve(count);
}

// A processor over the list of parts (`tokenizers`' process_encodings); process() does what `tokenizers`' default
// PostProcessor::process does around it.
class PartsProcessor : public PostProcessor {
 public:
  virtual void process_parts(std::vector<Encoding>& parts, bool add_special_tokens) const = 0;

  void process(Encoding& first, const Encoding* second, bool add_special_tokens) const final {
    std::vector<Encoding> parts;
    parts.push_back(std::move(first));
    if (second != nullptr) parts.push_back(*second);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      parts[i].type_ids.assign(parts[i].ids.size(), static_cast<std::int32_t>(i));
      parts[i].sequence_ids.assign(parts[i].ids.size(), static_cast<std::uint32_t>(i));
    }
    process_parts(parts, add_special_tokens);
    first = Encoding{};
    std::size_t tokens = 0;
    for (const Encoding& part : parts) tokens += part.ids.size();
    reserve_tokens(first, tokens);
    for (Encoding& part : parts) append_encoding(first, std::move(part));
  }
};

// `tokenizers`' process_offsets: offsets leave out the whitespace at either end of a token ('Ġ', the byte-level
// space, or Unicode White_Space). Like `tokenizers`, it moves byte offsets by a count of code points. The single
// leading space of a first token that add_prefix_space put there is kept.
void trim_offsets(Encoding& part, bool add_prefix_space) {
  constexpr char32_t kByteLevelSpace = 0x120;
  const auto is_space = [](char32_t c) { return c == kByteLevelSpace || utf8::is_white_space(c); };
  for (std::size_t t = 0; t < part.tokens.size(); ++t) {
    const std::string& token = part.tokens[t];
    std::vector<char32_t> code_points;
    for (std::size_t i = 0; i < token.size();) code_points.push_back(utf8::decode(token, i));
    std::size_t leading = 0;
    while (leading < code_points.size() && is_space(code_points[leading])) ++leading;
    std::size_t trailing = 0;
    while (trailing < code_points.size() && is_space(code_points[code_points.size() - 1 - trailing])) ++trailing;

    Range& offsets = part.offsets[t];
    if (leading > 0) {
      const bool is_first = t == 0 || offsets.begin == 0;
      if (!(is_first && add_prefix_space && leading == 1))
        offsets.begin = std::min(offsets.begin + leading, offsets.end);
    }
    if (trailing > 0 && offsets.end >= trailing) offsets.end = std::max(offsets.end - trailing, offsets.begin);
  }
}

// BertProcessing ([CLS] A [SEP] B [SEP]) and RobertaProcessing (<s> A </s> </s> B </s>, every type id 0).
class ClsSepProcessor final : public PartsProcessor {
 public:
  struct Options {
    bool roberta = false;
    bool trim_offsets = false;
    bool add_prefix_space = false;
  };
  ClsSepProcessor(SpecialTokens sep, SpecialTokens cls, Options options)
      : sep_(std::move(sep)), cls_(std::move(cls)), options_(options) {}

  std::size_t added_tokens(bool pair) const override { return pair ? (options_.roberta ? 4 : 3) : 2; }

  void process_parts(std::vector<Encoding>& parts, bool add_special_tokens) const override {
    if (options_.roberta) {
      for (Encoding& part : parts) {
        if (options_.trim_offsets) trim_offsets(part, options_.add_prefix_space);
        part.type_ids.assign(part.ids.size(), 0);
      }
    }
    if (!add_special_tokens) return;
    std::vector<Encoding> result;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const std::uint32_t side = parts[i].sequence_ids.empty() ? (i == 0 ? 0 : 1) : parts[i].sequence_ids.front();
      const std::int32_t type_id = i == 0 || options_.roberta ? 0 : 1;
      if (i == 0) {
        result.push_back(special_part(cls_, 0, side));
      } else if (options_.roberta) {
        result.push_back(special_part(sep_, 0, side));
      }
      result.push_back(std::move(parts[i]));
      result.push_back(special_part(sep_, type_id, side));
    }
    parts = std::move(result);
  }

 private:
  SpecialTokens sep_;
  SpecialTokens cls_;
  Options options_;
};

class ByteLevelProcessor final : public PartsProcessor {
 public:
  ByteLevelProcessor(bool trim, bool add_prefix_space) : trim_(trim), add_prefix_space_(add_prefix_space) {}
  std::size_t added_tokens(bool /*pair*/) const override { return 0; }
  void process_parts(std::vector<Encoding>& parts, bool /*add_special_tokens*/) const override {
    if (!trim_) return;
    for (Encoding& part : parts) trim_offsets(part, add_prefix_space_);
  }

 private:
  bool trim_;
  bool add_prefix_space_;
};

class TemplateProcessor final : public PartsProcessor {
 public:
  struct Piece {
    bool is_sequence = false;
    std::size_t sequence = 0;  // 0: $A, 1: $B
    std::size_t special = 0;   // index into the special tokens
    std::int32_t type_id = 0;
  };
  TemplateProcessor(std::vector<Piece> single, std::vector<Piece> pair, std::vector<SpecialTokens> specials)
      : single_(std::move(single)), pair_(std::move(pair)), specials_(std::move(specials)) {}

  std::size_t added_tokens(bool pair) const override {
    std::size_t count = 0;
    for (const Piece& piece : pair ? pair_ : single_)
      count += piece.is_sequence ? 0 : specials_[piece.special].ids.size();
    return count;
  }

  void process_parts(std::vector<Encoding>& parts, bool add_special_tokens) const override {
    // The factory made sure a single template names $A only; a pair of parts here is the caller's pair.
    const std::vector<Piece>& pieces = parts.size() == 2 ? pair_ : single_;
    std::vector<Encoding> result;
    std::optional<std::uint32_t> side;
    for (std::size_t p = 0; p < pieces.size(); ++p) {
      const Piece& piece = pieces[p];
      if (piece.is_sequence) {
        side = static_cast<std::uint32_t>(piece.sequence);
        // Moved at its template's last use of it (a template may name a sequence twice), copied before.
        const bool used_again =
            std::any_of(pieces.begin() + static_cast<std::ptrdiff_t>(p) + 1, pieces.end(),
                        [&](const Piece& later) { return later.is_sequence && later.sequence == piece.sequence; });
        Encoding part = used_again ? parts[piece.sequence] : std::move(parts[piece.sequence]);
        part.type_ids.assign(part.ids.size(), piece.type_id);
        part.sequence_ids.assign(part.ids.size(), *side);
        result.push_back(std::move(part));
      } else if (add_special_tokens) {
        result.push_back(
            special_part(specials_[piece.special], piece.type_id, side.value_or(first_sequence_after(pieces, p))));
      }
    }
    parts = std::move(result);
  }

 private:
  static std::uint32_t first_sequence_after(const std::vector<Piece>& pieces, std::size_t p) {
    for (; p < pieces.size(); ++p) {
      if (pieces[p].is_sequence) return static_cast<std::uint32_t>(pieces[p].sequence);
    }
    return 0;
  }

  std::vector<Piece> single_;
  std::vector<Piece> pair_;
  std::vector<SpecialTokens> specials_;
};

class SequenceProcessor final : public PartsProcessor {
 public:
  explicit SequenceProcessor(std::vector<std::unique_ptr<PartsProcessor>> processors)
      : processors_(std::move(processors)) {}
  std::size_t added_tokens(bool pair) const override {
    std::size_t count = 0;
    for (const auto& processor : processors_) count += processor->added_tokens(pair);
    return count;
  }
  void process_parts(std::vector<Encoding>& parts, bool add_special_tokens) const override {
    for (const auto& processor : processors_) processor->process_parts(parts, add_special_tokens);
  }

 private:
  std::vector<std::unique_ptr<PartsProcessor>> processors_;
};

// Every special token must be the vocabulary's, with the id the vocabulary gives it.
Status check_in_vocabulary(const SpecialTokens& special, std::string_view path, const Vocabulary& vocabulary) {
  for (std::size_t k = 0; k < special.ids.size(); ++k) {
    const std::optional<std::int32_t> id = vocabulary.find(special.tokens[k]);
    if (!id) {
      return json_fields::refused(path, json(special.tokens[k]), "the special token is not in the vocabulary");
    }
    if (*id != special.ids[k]) {
      return json_fields::refused(
          path, json(special.ids[k]),
          "the vocabulary gives " + json(special.tokens[k]).dump() + " the id " + std::to_string(*id));
    }
  }
  return Status();
}

// Bert's and RoBERTa's ["[SEP]", 102].
Result<SpecialTokens> token_and_id(const json& object, std::string_view path, std::string_view key,
                                   const Vocabulary& vocabulary) {
  ACCEL_ASSIGN_OR_RETURN(const json* value, json_fields::member(object, path, key));
  const std::string field = child(path, key);
  if (!value->is_array() || value->size() != 2 || !(*value)[0].is_string()) {
    return json_fields::refused(field, *value, "expected [token, id]");
  }
  ACCEL_ASSIGN_OR_RETURN(std::int32_t id, json_fields::token_id((*value)[1], indexed(field, 1)));
  SpecialTokens special{{id}, {(*value)[0].get<std::string>()}};
  ACCEL_RETURN_IF_ERROR(check_in_vocabulary(special, field, vocabulary));
  return special;
}

Result<std::vector<SpecialTokens>> template_special_tokens(const json& object, std::string_view path,
                                                           std::vector<std::string>& names,
                                                           const Vocabulary& vocabulary) {
  ACCEL_ASSIGN_OR_RETURN(const json* map, json_fields::member(object, path, "special_tokens"));
  const std::string map_path = child(path, "special_tokens");
  if (!map->is_object()) return json_fields::refused(map_path, *map, "expected an object");
  std::vector<SpecialTokens> specials;
  for (const auto& [name, entry] : map->items()) {
    const std::string entry_path = child(map_path, name);
    ACCEL_ASSIGN_OR_RETURN(const json* ids, json_fields::member(entry, entry_path, "ids"));
    ACCEL_ASSIGN_OR_RETURN(const json* tokens, json_fields::member(entry, entry_path, "tokens"));
    if (!ids->is_array()) return json_fields::refused(child(entry_path, "ids"), *ids, "expected a list of ids");
    if (!tokens->is_array() || tokens->size() != ids->size()) {
      return json_fields::refused(child(entry_path, "tokens"), *tokens, "expected as many tokens as ids");
    }
    SpecialTokens special;
    for (std::size_t k = 0; k < ids->size(); ++k) {
      ACCEL_ASSIGN_OR_RETURN(std::int32_t id, json_fields::token_id((*ids)[k], indexed(child(entry_path, "ids"), k)));
      if (!(*tokens)[k].is_string()) {
        return json_fields::refused(indexed(child(entry_path, "tokens"), k), (*tokens)[k], "expected a string");
      }
      special.ids.push_back(id);
      special.tokens.push_back((*tokens)[k].get<std::string>());
    }
    ACCEL_RETURN_IF_ERROR(check_in_vocabulary(special, entry_path, vocabulary));
    names.push_back(name);
    specials.push_back(std::move(special));
  }
  return specials;
}

// A template: [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, ...].
Result<std::vector<TemplateProcessor::Piece>> template_pieces(const json& object, std::string_view path,
                                                              std::string_view key,
                                                              const std::vector<std::string>& special_names) {
  ACCEL_ASSIGN_OR_RETURN(const json* list, json_fields::member(object, path, key));
  const std::string list_path = child(path, key);
  if (!list->is_array()) return json_fields::refused(list_path, *list, "expected a list of pieces");
  std::vector<TemplateProcessor::Piece> pieces;
  for (std::size_t p = 0; p < list->size(); ++p) {
    const json& item = (*list)[p];
    const std::string item_path = indexed(list_path, p);
    if (!item.is_object() || item.size() != 1) {
      return json_fields::refused(item_path, item, "expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    }
    const std::string& kind = item.begin().key();
    const json& body = item.begin().value();
    const std::string body_path = child(item_path, kind);
    ACCEL_ASSIGN_OR_RETURN(std::string id, json_fields::string_member(body, body_path, "id"));
    ACCEL_ASSIGN_OR_RETURN(std::uint64_t type_id, json_fields::count_member(body, body_path, "type_id",
                                                                            std::numeric_limits<std::int32_t>::max()));
    TemplateProcessor::Piece piece{.type_id = static_cast<std::int32_t>(type_id)};
    if (kind == "Sequence") {
      if (id != "A" && id != "B") return json_fields::refused(child(body_path, "id"), json(id), "expected A or B");
      piece.is_sequence = true;
      piece.sequence = id == "A" ? 0 : 1;
      if (key == "single" && piece.sequence == 1) {
        return json_fields::refused(child(body_path, "id"), json(id), "a single sequence has no B");
      }
    } else if (kind == "SpecialToken") {
      const auto name = std::find(special_names.begin(), special_names.end(), id);
      if (name == special_names.end()) {
        return json_fields::refused(child(body_path, "id"), json(id), "not one of the template's special_tokens");
      }
      piece.special = static_cast<std::size_t>(name - special_names.begin());
    } else {
      return json_fields::refused(item_path, item, "expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    }
    pieces.push_back(piece);
  }
  return pieces;
}

// Sequences nest; a file that nests them deeper than any real one is refused before it can exhaust the stack.
constexpr int kDeepestNesting = 16;

Result<std::unique_ptr<PartsProcessor>> make_parts_processor(const json& object, std::string_view path,
                                                             const Vocabulary& vocabulary, int depth) {
  ACCEL_ASSIGN_OR_RETURN(std::string type, json_fields::type_of(object, path));
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    ACCEL_ASSIGN_OR_RETURN(SpecialTokens sep, token_and_id(object, path, "sep", vocabulary));
    ACCEL_ASSIGN_OR_RETURN(SpecialTokens cls, token_and_id(object, path, "cls", vocabulary));
    ClsSepProcessor::Options options;
    if (type == "RobertaProcessing") {
      options.roberta = true;
      ACCEL_ASSIGN_OR_RETURN(options.trim_offsets, json_fields::bool_member(object, path, "trim_offsets"));
      ACCEL_ASSIGN_OR_RETURN(options.add_prefix_space, json_fields::bool_member(object, path, "add_prefix_space"));
    }
    return std::make_unique<ClsSepProcessor>(std::move(sep), std::move(cls), options);
  }
  if (type == "ByteLevel") {
    // use_regex only matters to the ByteLevel pre-tokenizer.
    ACCEL_ASSIGN_OR_RETURN(bool trim, json_fields::bool_member(object, path, "trim_offsets"));
    ACCEL_ASSIGN_OR_RETURN(bool add_prefix_space, json_fields::bool_member(object, path, "add_prefix_space"));
    return std::make_unique<ByteLevelProcessor>(trim, add_prefix_space);
  }
  if (type == "TemplateProcessing") {
    std::vector<std::string> names;
    ACCEL_ASSIGN_OR_RETURN(std::vector<SpecialTokens> specials,
                           template_special_tokens(object, path, names, vocabulary));
    ACCEL_ASSIGN_OR_RETURN(auto single, template_pieces(object, path, "single", names));
    ACCEL_ASSIGN_OR_RETURN(auto pair, template_pieces(object, path, "pair", names));
    return std::make_unique<TemplateProcessor>(std::move(single), std::move(pair), std::move(specials));
  }
  if (type == "Sequence") {
    ACCEL_ASSIGN_OR_RETURN(const json* list, json_fields::member(object, path, "processors"));
    const std::string list_path = child(path, "processors");
    if (!list->is_array()) return json_fields::refused(list_path, *list, "expected a list of post-processors");
    if (depth >= kDeepestNesting) return json_fields::refused(path, object, "Sequences nest too deeply");
    std::vector<std::unique_ptr<PartsProcessor>> processors;
    for (std::size_t i = 0; i < list->size(); ++i) {
      ACCEL_ASSIGN_OR_RETURN(auto processor,
                             make_parts_processor((*list)[i], indexed(list_path, i), vocabulary, depth + 1));
      processors.push_back(std::move(processor));
    }
    return std::make_unique<SequenceProcessor>(std::move(processors));
  }
  return json_fields::unsupported_type(path, type, "post-processor", kSupported);
}

}  // namespace

void append_encoding(Encoding& to, Encoding&& from) {
  const auto move_all = [](auto& destination, auto& source) {
    destination.insert(destination.end(), std::make_move_iterator(source.begin()),
                       std::make_move_iterator(source.end()));
  };
  move_all(to.ids, from.ids);
  move_all(to.type_ids, from.type_ids);
  move_all(to.tokens, from.tokens);
  move_all(to.offsets, from.offsets);
  move_all(to.special_tokens_mask, from.special_tokens_mask);
  move_all(to.sequence_ids, from.sequence_ids);
  to.truncated = to.truncated || from.truncated;
}

Result<std::unique_ptr<PostProcessor>> make_post_processor(const nlohmann::json& object, std::string_view path,
                                                           const Vocabulary& vocabulary) {
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<PartsProcessor> processor, make_parts_processor(object, path, vocabulary, 0));
  return std::unique_ptr<PostProcessor>(std::move(processor));
}

}  // namespace accel::text
