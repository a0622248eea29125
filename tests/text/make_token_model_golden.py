#!/usr/bin/env python3
"""Expected tokens for tests/text/token_model_test.cpp, from HuggingFace tokenizers (0.23.3 wrote the committed
values).

  make_token_model_golden.py cases                 # C++ initialisers for the hand-made models, to paste
  make_token_model_golden.py xlmr TOKENIZER_JSON   # tests/text/data/xlmr_unigram_golden.jsonl

Each model is loaded from the same JSON the C++ test loads, then model.tokenize(word) gives ids, values and
offsets (bytes of the word's UTF-8).
"""
import json
import sys
import unicodedata

import tokenizers

CASES = {
    "kWordPieceModel": (
        {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
         "max_input_chars_per_word": 8,
         "vocab": {"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "a": 4, "##b": 5, "é": 6, "##é": 7, "日本": 8,
                   "##語": 9, "😀": 10, "##😀": 11, "e": 12, "##\u0301": 13, "##": 14, "#": 15, "##a": 16}},
        ["unaffable", "unaff", "ab", "abé", "aé", "日本語", "😀😀", "e\u0301", "zzz", "a", "é", "##", "###", "b",
         "aaaaaaaa", "aaaaaaaaa", "ab😀x"]),
    "kWordPieceNoPrefixModel": (
        {"unk_token": "<unk>", "continuing_subword_prefix": "", "max_input_chars_per_word": 100,
         "vocab": {"<unk>": 0, "ab": 1, "a": 2, "b": 3, "c": 4, "abc": 5, "ñ": 6}},
        ["abcab", "cba", "abd", "ñañ", "ñ"]),
    "kBpeModel": (
        {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
         "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
         "vocab": {"<unk>": 0, "a": 1, "b": 2, "c": 3, "ab": 4, "bc": 5, "abc": 6, "aa": 7, "aaaa": 8, "é": 9,
                   "aab": 10, "éé": 11},
         "merges": ["#version: 0.2", "a b", "b c", "ab c", "a a", "aa aa", "aa b", "é é"]},
        ["abc", "aaaaa", "aaab", "cab", "xx", "axxb", "ééé", "a", "bcbc", "aabc", "x\u0301a", "日本"]),
    "kBpeFuseUnkModel": (
        {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True,
         "vocab": {"<unk>": 0, "a": 1, "b": 2, "ab": 3},
         "merges": [["a", "b"]]},
        ["axxb", "xéx", "xxx", "abx😀ab"]),
    "kBpeByteFallbackModel": (
        {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True, "byte_fallback": True,
         "vocab": {"<unk>": 0, "<0xC3>": 1, "<0xA9>": 2, "a": 3, "<0xF0>": 4, "<0x9F>": 5, "<0x98>": 6, "b": 7,
                   "ab": 8, "<0x61>": 9},
         "merges": [["a", "b"]]},
        ["é", "aéb", "😀", "😀é", "😀😀é", "ab", "a😀b"]),
    "kBpeAffixModel": (
        {"type": "BPE", "unk_token": "<unk>", "continuing_subword_prefix": "##", "end_of_word_suffix": "</w>",
         "vocab": {"<unk>": 0, "a": 1, "##b": 2, "##c": 3, "c</w>": 4, "##c</w>": 5, "ab": 6, "abc</w>": 7,
                   "##b</w>": 8, "b</w>": 9, "a</w>": 10, "ab</w>": 11},
         "merges": [["a", "##b"], ["ab", "##c</w>"], ["a", "##b</w>"]]},
        ["abc", "ab", "a", "c", "b", "abb", "x", "abx"]),
    "kBpeIgnoreMergesModel": (
        {"type": "BPE", "ignore_merges": True,
         "vocab": {"a": 0, "b": 1, "ab": 2, "ba": 3, "aba": 4},
         "merges": ["a b"]},
        ["aba", "abab", "ba", "bab"]),
    "kBpeNoUnkModel": (
        {"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]},
        ["abxab", "xx", "x😀ab"]),
    "kBpeSharedResultModel": (
        # Two rules give "abc"; a queued merge whose pair changed fires only while its rule gives the same piece.
        {"type": "BPE",
         "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "d": 6, "cd": 7, "abcd": 8},
         "merges": ["b c", "a b", "c d", "a bc", "ab c", "ab cd", "abc d"]},
        ["abc", "abcd", "abcabcd", "bcd"]),
    "kUnigramModel": (
        {"type": "Unigram", "unk_id": 0,
         "vocab": [["<unk>", 0.0], ["a", -1.0], ["b", -2.0], ["ab", -2.5], ["c", -3.0], ["abc", -6.0],
                   ["▁", -1.0], ["▁a", -1.5], ["é", -2.0], ["d", -1.0], ["e", -1.0], ["de", -2.0]]},
        ["abc", "ab", "abcab", "x", "xxab", "axxé", "<unk>", "▁abc", "a<unk>b", "de", "dede", "▁", "日本語",
         "e\u0301"]),
    "kUnigramByteFallbackModel": (
        {"type": "Unigram", "unk_id": 0, "byte_fallback": True,
         "vocab": [["<unk>", 0.0], ["<0xC3>", -5.0], ["<0xA9>", -5.0], ["a", -1.0], ["<0xF0>", -5.0],
                   ["<0x9F>", -5.0], ["<0x98>", -5.0]]},
        ["é", "aéa", "😀", "éé", "é😀"]),
    "kUnigramDuplicateModel": (
        {"unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0], ["a", -5.0], ["aa", -1.5]]},
        ["a", "aaa"]),
    "kUnigramUnkPieceModel": (
        {"type": "Unigram", "unk_id": 0, "vocab": [["x", 0.0], ["a", -1.0]]},
        ["xa", "yx", "yya", "ay"]),
}


def tokenizer_for(model):
    document = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
                "pre_tokenizer": None, "post_processor": None, "decoder": None, "model": model}
    return tokenizers.Tokenizer.from_str(json.dumps(document))


def cpp_string(value):
    """`value` as JSON, which is also a C++ string literal for a string; marks and format characters escaped (the
    same escape in both languages), so that the source shows them."""
    return "".join(f"\\u{ord(c):04X}" if unicodedata.category(c)[0] == "M" or unicodedata.category(c) == "Cf"
                   else c for c in json.dumps(value, ensure_ascii=False))


def wrapped(model, first_width=50, width=110):
    """The model's JSON, broken between elements only (never inside a string), lines at most `width` long."""
    parts = []  # pieces of text that may not be broken
    for k, (key, value) in enumerate(model.items()):
        opening, closing = f"{cpp_string(key)}: ", (", " if k + 1 < len(model) else "}")
        if isinstance(value, (dict, list)) and value:
            items = [f"{cpp_string(a)}: {cpp_string(b)}" for a, b in value.items()] if isinstance(value, dict) \
                else [cpp_string(item) for item in value]
            brackets = "{}" if isinstance(value, dict) else "[]"
            items[0] = opening + brackets[0] + items[0]
            items[-1] += brackets[1] + closing
            parts += [item + ", " for item in items[:-1]] + [items[-1]]
        else:
            parts.append(opening + cpp_string(value) + closing)
    lines, line, limit = [], "{", first_width
    for part in parts:
        if len(line) + len(part.rstrip()) > limit and line.strip():
            lines.append(line.rstrip())
            line, limit = "    ", width
        line += part
    return "\n".join(lines + [line])


def print_cases():
    print(f"// Expected tokens: tokenizers {tokenizers.__version__} (tests/text/make_token_model_golden.py cases).")
    for name, (model, words) in CASES.items():
        tokenizer = tokenizer_for(model)
        print(f'constexpr std::string_view {name} = R"json({wrapped(model)})json";')
        print(f"const std::vector<Case> {name[1:].replace('Model', '')}Cases = {{")
        for word in words:
            tokens = tokenizer.model.tokenize(word)
            rendered = ", ".join(f"{{{t.id}, {cpp_string(t.value)}, {t.offsets[0]}, {t.offsets[1]}}}" for t in tokens)
            print(f"    {{{cpp_string(word)}, {{{rendered}}}}},")
        print("};")


def print_long_word():
    model = {"type": "BPE", "vocab": {"a": 0, "aa": 1, "aaaa": 2, "aaaaaaaa": 3},
             "merges": ["a a", "aa aa", "aaaa aaaa"]}
    tokens = tokenizer_for(model).model.tokenize("a" * 100001)
    print("// long word:", len(tokens), sum(t.id for t in tokens), tokens[-1].id, tokens[-1].offsets)


def write_xlmr(path):
    tokenizer = tokenizers.Tokenizer.from_file(path)
    words = [line.rstrip("\n") for line in open(__file__.replace("make_token_model_golden.py", "data/xlmr_words.txt"),
                                                 encoding="utf-8") if line.strip()]
    with open(__file__.replace("make_token_model_golden.py", "data/xlmr_unigram_golden.jsonl"), "w",
              encoding="utf-8") as out:
        for word in words:
            # As the Metaspace pre-tokenizer hands words over: "▁" for the space before each.
            piece = "▁" + word
            tokens = tokenizer.model.tokenize(piece)
            out.write(json.dumps({"word": piece, "ids": [t.id for t in tokens], "values": [t.value for t in tokens],
                                  "offsets": [list(t.offsets) for t in tokens]}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "cases":
        print_cases()
        print_long_word()
    else:
        write_xlmr(sys.argv[2])
