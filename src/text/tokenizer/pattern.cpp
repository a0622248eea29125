#include "text/tokenizer/pattern.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <optional>

#include "text/tokenizer/json_fields.hpp"
#include "text/tokenizer/utf8.hpp"

namespace accel::text {

struct Pattern::Compiled {
  pcre2_code* code = nullptr;
  explicit Compiled(pcre2_code* compiled) : code(compiled) {}
  Compiled(const Compiled&) = delete;
  Compiled& operator=(const Compiled&) = delete;
  ~Compiled() { pcre2_code_free(code); }
};

namespace {

// Oniguruma, which tokenizers compiles every expression with, and PCRE2 with PCRE2_UCP disagree on some classes
// (found by matching every code point with both); each is rewritten into one that means what Oniguruma means:
//   \s, [:space:]  Oniguruma: U+0009..U+000D, U+0085 and Z (White_Space); PCRE2 adds U+180E.
//   \w, [:word:]   Oniguruma: Alphabetic, M, Nd, Pc, and for \w alone also ²³¹¼½¾; PCRE2 10.42: L, N and "_".
//   \b, \B         follow \w.
//   [:alpha:], [:alnum:], [:upper:], [:lower:]  Oniguruma: the Alphabetic, Uppercase, Lowercase properties;
//                  PCRE2: general categories.
//   [:punct:]      Oniguruma: P and S; PCRE2: P and S below U+0100.
//   \p{Script}     Oniguruma: the Script property; PCRE2: Script_Extensions (so \p{Han} would take "、").
//   \h             Oniguruma: a hexadecimal digit; PCRE2: horizontal white space.
//   \uHHHH         Oniguruma's code point escape, which PCRE2 spells \x{HHHH}.
// Left as they are: Unicode versions (each engine knows code points the other does not), and case-insensitive
// matching, where Oniguruma also folds one code point to several ("ß" matches "ss") and PCRE2 does not.
constexpr std::string_view kSpaceSet = "\\t-\\r\\x{85}\\p{Z}";
constexpr std::string_view kWordSet = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}";
constexpr std::string_view kWordEscapeSet = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}";
constexpr std::string_view kHexSet = "0-9a-fA-F";
constexpr std::string_view kWordBoundary =
    "(?:(?<=[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}])"
    "(?![\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}])|"
    "(?<![\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}])"
    "(?=[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}]))";
constexpr std::string_view kNotWordBoundary =
    "(?:(?<=[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}])"
    "(?=[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}])|"
    "(?<![\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}])"
    "(?![\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}]))";

struct PosixClass {
  std::string_view name;
  std::string_view members;  // empty: PCRE2's own class means the same
};
constexpr std::array<PosixClass, 11> kPosixClasses = {{{"alpha", "\\p{Alphabetic}"},
                                                       {"alnum", "\\p{Alphabetic}\\p{Nd}"},
                                                       {"word", kWordSet},
                                                       {"upper", "\\p{Uppercase}"},
                                                       {"lower", "\\p{Lowercase}"},
                                                       {"punct", "\\p{P}\\p{S}"},
                                                       {"space", kSpaceSet},
                                                       {"blank", "\\t\\p{Zs}"},
                                                       {"digit", "\\p{Nd}"},
                                                       {"xdigit", kHexSet},
                                                       {"ascii", "\\x{0}-\\x{7F}"}}};

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

Status refused_expression(std::string_view expression, std::string_view path, std::string_view why) {
  return json_fields::refused(path, nlohmann::json(std::string(expression)), why);
}

// Whether PCRE2 knows `name` as a script (so that \p{sc:name} compiles).
bool is_script_name(std::string_view name) {
  const std::string probe = "\\p{sc:" + std::string(name) + "}";
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(probe.data()), probe.size(), PCRE2_UTF, &error, &offset, nullptr);
  pcre2_code_free(code);
  return code != nullptr;
}

// Rewrites the escapes and classes listed above; everything else is copied as it is.
class Translator {
 public:
  Translator(std::string_view expression, std::string_view path) : expression_(expression), path_(path) {}

  Result<std::string> run() {
    out_.reserve(expression_.size() + 16);
    while (i_ < expression_.size()) {
      const char c = expression_[i_];
      if (c == '\\' && i_ + 1 < expression_.size()) {
        ACCEL_RETURN_IF_ERROR(escape());
      } else if (in_class_) {
        ACCEL_RETURN_IF_ERROR(class_member());
      } else if (c == '[') {
        in_class_ = true;
        class_start_ = i_ + 1;
        if (class_start_ < expression_.size() && expression_[class_start_] == '^') ++class_start_;
        out_.append(expression_.substr(i_, class_start_ - i_));
        i_ = class_start_;
      } else {
        out_.push_back(c);
        ++i_;
      }
    }
    return std::move(out_);
  }

 private:
  Status refuse(std::string_view why) const { return refused_expression(expression_, path_, why); }

  void set(std::string_view members, bool negated) {
    if (in_class_) {
      out_.append(members);
    } else {
      out_.append(negated ? "[^" : "[").append(members).push_back(']');
    }
  }

  Status escape() {
    const char escaped = expression_[i_ + 1];
    if (escaped == 'Q') {  // quoted text runs to \E and is copied as it is
      const std::size_t end = expression_.find("\\E", i_ + 2);
      const std::size_t stop = end == std::string_view::npos ? expression_.size() : end + 2;
      out_.append(expression_.substr(i_, stop - i_));
      i_ = stop;
      return {};
    }
    i_ += 2;
    switch (escaped) {
      case 's': set(kSpaceSet, false); break;
      case 'S':
        // PCRE2's \S lacks U+180E, which Oniguruma's \S has.
        if (in_class_) {
          out_.append("\\S\\x{180E}");
        } else {
          set(kSpaceSet, true);
        }
        break;
      case 'w': set(in_class_ ? kWordSet : kWordEscapeSet, false); break;
      case 'h': set(kHexSet, false); break;
      case 'W':
      case 'H':
        if (in_class_) return refuse("\\W and \\H inside a character class are not supported");
        set(escaped == 'W' ? kWordEscapeSet : kHexSet, true);
        break;
      case 'b':
      case 'B':
        if (in_class_) {
          out_.append(expression_.substr(i_ - 2, 2));  // a backspace
        } else {
          out_.append(escaped == 'b' ? kWordBoundary : kNotWordBoundary);
        }
        break;
      case 'u':
        if (i_ + 4 <= expression_.size() && is_hex(expression_[i_]) && is_hex(expression_[i_ + 1]) &&
            is_hex(expression_[i_ + 2]) && is_hex(expression_[i_ + 3])) {
          out_.append("\\x{").append(expression_.substr(i_, 4)).push_back('}');
          i_ += 4;
        } else {
          out_.append("\\u");
        }
        break;
      case 'p':
      case 'P': property(escaped); break;
      default: out_.push_back('\\'); out_.push_back(escaped);
    }
    return {};
  }

  // \p{Name}, \P{Name}, \p{^Name}: a script name becomes sc:Name.
  void property(char escaped) {
    out_.push_back('\\');
    out_.push_back(escaped);
    if (i_ >= expression_.size() || expression_[i_] != '{') return;
    const std::size_t close = expression_.find('}', i_);
    if (close == std::string_view::npos) return;
    std::string_view name = expression_.substr(i_ + 1, close - i_ - 1);
    out_.push_back('{');
    if (!name.empty() && name.front() == '^') {
      out_.push_back('^');
      name.remove_prefix(1);
    }
    if (is_script_name(name)) out_.append("sc:");
    out_.append(name).push_back('}');
    i_ = close + 1;
  }

  Status class_member() {
    const char c = expression_[i_];
    if (c == ']' && i_ != class_start_) {
      in_class_ = false;
    } else if (c == '[' && i_ + 1 < expression_.size() && expression_[i_ + 1] == ':') {
      const std::size_t end = expression_.find(":]", i_ + 2);
      if (end == std::string_view::npos) return refuse("an unterminated POSIX class");
      const std::string_view name = expression_.substr(i_ + 2, end - i_ - 2);
      const auto* found = std::find_if(kPosixClasses.begin(), kPosixClasses.end(),
                                       [&](const PosixClass& posix) { return posix.name == name; });
      if (found == kPosixClasses.end()) {
        return refuse("the POSIX class [:" + std::string(name) + ":] is not supported");
      }
      out_.append(found->members);
      i_ = end + 2;
      return {};
    } else if (c == '[') {
      return refuse("nested character classes are not supported");
    } else if (c == '&' && i_ + 1 < expression_.size() && expression_[i_ + 1] == '&') {
      return refuse("character class intersection (&&) is not supported");
    }
    out_.push_back(c);
    ++i_;
    return {};
  }

  std::string_view expression_;
  std::string_view path_;
  std::string out_;
  std::size_t i_ = 0;
  bool in_class_ = false;
  std::size_t class_start_ = 0;  // the first member of the class being read (a "]" there is a member)
};

// Match data, a match context and a JIT stack for each thread, shared by every pattern: one ovector pair is
// enough, as only the whole match is read.
struct MatchResources {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* jit_stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
  MatchResources() {
    if (context != nullptr && jit_stack != nullptr) pcre2_jit_stack_assign(context, nullptr, jit_stack);
  }
  MatchResources(const MatchResources&) = delete;
  MatchResources& operator=(const MatchResources&) = delete;
  ~MatchResources() {
    pcre2_jit_stack_free(jit_stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
};

// The next match at or after `start`, or nothing (no match, or PCRE2 gave up, e.g. at its match limit).
std::optional<Range> next_match(const pcre2_code* code, std::string_view text, std::size_t start) {
  thread_local MatchResources resources;
  if (resources.data == nullptr) return std::nullopt;
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  int rc = pcre2_match(code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, resources.data, resources.context);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
    rc = pcre2_match(code, subject, text.size(), start, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, resources.data,
                     resources.context);
  }
  if (rc < 0) return std::nullopt;
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(resources.data);
  if (ovector[0] > ovector[1] || ovector[1] > text.size()) return std::nullopt;  // \K in a lookahead
  return Range{ovector[0], ovector[1]};
}

}  // namespace

Result<Pattern> Pattern::regex(std::string_view expression, std::string_view path) {
  ACCEL_ASSIGN_OR_RETURN(std::string translated, Translator(expression, path).run());
  pcre2_compile_context* context = pcre2_compile_context_create(nullptr);
  if (context == nullptr) return refused_expression(expression, path, "out of memory compiling it");
  // Oniguruma's defaults: ^ and $ match at every line, and only \n ends a line.
  pcre2_set_newline(context, PCRE2_NEWLINE_LF);
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                    PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE | PCRE2_NEVER_BACKSLASH_C, &error, &error_offset, context);
  pcre2_compile_context_free(context);
  if (code == nullptr) {
    std::array<PCRE2_UCHAR, 256> message{};
    pcre2_get_error_message(error, message.data(), message.size());
    return refused_expression(
        expression, path,
        "not a regular expression we can run: " + std::string(reinterpret_cast<const char*>(message.data())) +
            " (at offset " + std::to_string(error_offset) + " of " + translated + ")");
  }
  // Without JIT (unsupported platform) PCRE2 interprets the code, which gives the same matches.
  static_cast<void>(pcre2_jit_compile(code, PCRE2_JIT_COMPLETE));
  return Pattern(std::string(expression), std::make_shared<const Compiled>(code));
}

Pattern Pattern::literal(std::string text) { return Pattern(std::move(text), nullptr); }

Result<Pattern> Pattern::from_json(const nlohmann::json& object, std::string_view path) {
  if (!object.is_object() || object.size() != 1) {
    return json_fields::refused(path, object, R"(expected {"String": "..."} or {"Regex": "..."})");
  }
  const std::string& kind = object.begin().key();
  const nlohmann::json& value = object.begin().value();
  const std::string value_path = json_fields::child(path, kind);
  if (kind != "String" && kind != "Regex") {
    return json_fields::refused(path, object, R"(expected {"String": "..."} or {"Regex": "..."})");
  }
  if (!value.is_string()) return json_fields::refused(value_path, value, "expected a string");
  if (kind == "String") return literal(value.get<std::string>());
  return regex(value.get<std::string>(), value_path);
}

namespace {

// Calls `on_match` with each match as tokenizers' Oniguruma iterator yields them: leftmost first, an empty match
// moving the search on by one code point, and an empty match right where the previous match ended skipped.
template <typename OnMatch>
void for_each_match(const pcre2_code* code, const std::string& literal, std::string_view text, OnMatch&& on_match) {
  std::size_t search_from = 0;
  std::optional<std::size_t> previous_end;
  while (search_from <= text.size()) {
    std::optional<Range> match;
    if (code != nullptr) {
      match = next_match(code, text, search_from);
    } else if (literal.empty()) {
      match = Range{search_from, search_from};  // an empty literal is an empty expression: it matches anywhere
    } else if (const std::size_t at = text.find(literal, search_from); at != std::string_view::npos) {
      match = Range{at, at + literal.size()};
    }
    if (!match) return;
    if (match->begin == match->end) {
      search_from = match->end < text.size()
                        ? match->end + utf8::sequence_length(static_cast<unsigned char>(text[match->end]))
                        : match->end + 1;
      if (previous_end == match->end) continue;
    } else {
      search_from = match->end;
    }
    previous_end = match->end;
    on_match(*match);
  }
}

}  // namespace

void Pattern::find_all(std::string_view utf8, std::vector<Range>& out) const {
  out.clear();
  for_each_match(compiled_ ? compiled_->code : nullptr, source_, utf8, [&](Range match) {
    if (match.begin < match.end) out.push_back(match);
  });
}

void Pattern::find_pieces(std::string_view utf8, bool invert, std::vector<SplitPiece>& out) const {
  out.clear();
  if (utf8.empty()) {
    out.push_back({Range{0, 0}, invert});
    return;
  }
  std::size_t previous_end = 0;
  for_each_match(compiled_ ? compiled_->code : nullptr, source_, utf8, [&](Range match) {
    if (match.begin > previous_end) out.push_back({Range{previous_end, match.begin}, invert});
    out.push_back({match, !invert});
    previous_end = match.end;
  });
  if (previous_end < utf8.size()) out.push_back({Range{previous_end, utf8.size()}, invert});
}

}  // namespace accel::text
