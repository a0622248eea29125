#!/usr/bin/env python3
"""Writes the seed corpora of the text fuzz targets into fuzz/corpus/ (scripts/fuzz-corpus runs it): small
tokenizer.json files, precompiled charsmaps, texts, model folder files, HTTP bodies, traceparent headers and device names. Each input of a target with
a leading selector byte starts with a printable one.

The tokenizer.json seeds are cut from real files so that the fuzzer mutates kilobytes, not the megabytes of the
originals, and each still loads and reaches deep into encoding: all-MiniLM-L6-v2's (WordPiece), the test
tokenizers qwen_bpe (byte-level BPE) and metaspace_unigram (Unigram with byte fallback), each vocabulary trimmed
to a few hundred entries that keep the pieces of tokenizer_json_fuzzer's fixed texts; and one document per
normalizer, pre-tokenizer and post-processor type src/text/tokenizer/components.hpp lists. The Precompiled one
carries a charsmap of a few rules, each giving what XLM-R's charsmap gives its key, laid out as darts-clone lays
out a double array. Only the standard library is used (CI runs this with the system Python)."""
import base64
import json
import pathlib
import re
import struct
import sys
import unicodedata

from precompiled_charsmap import charsmap_lookup, charsmap_of

root = pathlib.Path(sys.argv[1])
model = pathlib.Path(sys.argv[2])
repo = pathlib.Path(__file__).resolve().parent.parent
text_data = repo / "tests" / "text" / "data"

# tokenizer_json_fuzzer.cpp encodes these (kText, kPair); keep them equal.
FIXED_TEXT = (" Hello, world! He\u0301llo wörld 你好 naïve café \ufb01 \u2460 \uff76\uff9e x\u00b2 [CLS] <s> "
              "<|endoftext|> [MASK] unaffable 2024 \u00a0 \t\n\U0001f642 ")
FIXED_PAIR = "The tokenizer's second text: 12345 \u2581 añb"


def seed(target, name, content):
    (root / target).mkdir(parents=True, exist_ok=True)
    (root / target / name).write_bytes(content if isinstance(content, bytes) else content.encode())


def compact(document):
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def tokenizer_seed(name, document):
    seed("tokenizer_json", name + ".json", compact(document))


def substrings(text, longest=12):
    return {text[i:j] for i in range(len(text)) for j in range(i + 1, min(len(text), i + longest) + 1)}


# -- WordPiece: all-MiniLM-L6-v2 ----------------------------------------------------------------------------------

minilm = json.loads((model / "tokenizer.json").read_text())
vocab = minilm["model"]["vocab"]
keep = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", ",", "!", "un", "##aff", "##able", "the",
        "a", "token", "##izer", "你", "好", "e", "##s", "naive", "cafe", "fi", "1", "x", "##2", "20", "##24", "[", "]",
        "<", ">", "|", "s", "end", "##of", "##text", "mask", "second", "text", ":", "123", "##45", "'"}
small = dict(minilm, model=dict(minilm["model"], vocab={t: i for t, i in vocab.items() if t in keep}))
seed("tokenizer_json", "minilm-trimmed.json", json.dumps(small, ensure_ascii=False))
cased = dict(small, normalizer=dict(small["normalizer"], lowercase=False, strip_accents=False))
seed("tokenizer_json", "cased.json", json.dumps(cased, ensure_ascii=False, indent=1))

# The same pieces numbered from 0, as tokenizers numbers the added tokens after them (the documents below add some).
wordpiece_pieces = sorted((i, t) for t, i in vocab.items() if t in keep)
wordpiece_ids = {t: n for n, (_, t) in enumerate(wordpiece_pieces)}
wordpiece = dict(minilm, model=dict(minilm["model"], vocab=wordpiece_ids),
                 added_tokens=[dict(token, id=wordpiece_ids[token["content"]]) for token in minilm["added_tokens"]],
                 post_processor=json.loads(json.dumps(minilm["post_processor"])))
for special in wordpiece["post_processor"]["special_tokens"].values():
    special["ids"] = [wordpiece_ids[t] for t in special["tokens"]]

# -- BPE: qwen_bpe --------------------------------------------------------------------------------------------------


def byte_level_alphabet():
    """GPT-2's printable stand-in of each byte."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    stand_in, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            stand_in[byte] = chr(byte)
        else:
            stand_in[byte] = chr(256 + extra)
            extra += 1
    return stand_in


def bpe_merges_used(word, ranks):
    """The merges byte-level BPE applies to one pre-tokenized word."""
    symbols, used = list(word), []
    while len(symbols) > 1:
        pairs = [(ranks.get((a, b)), k) for k, (a, b) in enumerate(zip(symbols, symbols[1:]))]
        best = min((p for p in pairs if p[0] is not None), default=None)
        if best is None:
            break
        k = best[1]
        used.append(best[0])
        symbols[k:k + 2] = [symbols[k] + symbols[k + 1]]
    return used


def trimmed_bpe(document, texts, first_merges=200):
    stand_in = byte_level_alphabet()
    bpe = document["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in bpe["merges"]]
    ranks = {pair: rank for rank, pair in enumerate(merges)}
    producer = {}
    for rank, (a, b) in enumerate(merges):
        producer.setdefault(a + b, rank)
    kept = set(range(min(first_merges, len(merges))))
    for text in texts:
        # Close enough to the file's Split regex: only which merges to keep depends on it.
        for word in re.findall(r"'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d| ?[^\s\w]+|\s+", text):
            kept.update(bpe_merges_used("".join(stand_in[b] for b in word.encode()), ranks))
    pending = list(kept)
    while pending:  # a kept merge's pieces must be in the vocabulary: keep the merges that make them
        a, b = merges[pending.pop()]
        for part in (a, b):
            rank = producer.get(part)
            if rank is not None and rank not in kept:
                kept.add(rank)
                pending.append(rank)
    pieces = set(stand_in.values()) | {a + b for a, b in (merges[r] for r in kept)}
    old_ids = sorted((i, t) for t, i in bpe["vocab"].items() if t in pieces)
    ids = {t: n for n, (_, t) in enumerate(old_ids)}
    renumber = {token["id"]: len(ids) + k for k, token in enumerate(document["added_tokens"])}
    trimmed = json.loads(json.dumps(document))
    trimmed["model"]["vocab"] = ids
    trimmed["model"]["merges"] = [list(merges[r]) for r in sorted(kept)]
    for token in trimmed["added_tokens"]:
        token["id"] = renumber[token["id"]]
    for processor in trimmed["post_processor"]["processors"]:
        for special in processor.get("special_tokens", {}).values():
            special["ids"] = [renumber[i] for i in special["ids"]]
    return trimmed


qwen = trimmed_bpe(json.loads((text_data / "qwen_bpe" / "tokenizer.json").read_text()), [FIXED_TEXT, FIXED_PAIR])
tokenizer_seed("qwen-bpe-trimmed", qwen)


def added_id(document, content):
    return next(token["id"] for token in document["added_tokens"] if token["content"] == content)


# -- Unigram: metaspace_unigram -----------------------------------------------------------------------------------


def metaspace_texts(texts):
    return ["\u2581" + unicodedata.normalize("NFKC", t).replace(" ", "\u2581") for t in texts] + list(texts)


def trimmed_unigram(document, texts, first_pieces, byte_fallback):
    """Keeps the special pieces (the added tokens' ids stay theirs), the first pieces by score, those in `texts`,
    and with byte fallback the byte pieces."""
    unigram = document["model"]
    specials = {token["id"] for token in document["added_tokens"]}
    wanted = set().union(*(substrings(t) for t in metaspace_texts(texts)))
    kept = [entry for i, entry in enumerate(unigram["vocab"])
            if i in specials or i < first_pieces or entry[0] in wanted
            or (byte_fallback and re.fullmatch(r"<0x[0-9A-F]{2}>", entry[0]))]
    assert all(kept[i] == unigram["vocab"][i] for i in specials), "special pieces must keep their ids"
    return dict(document, model=dict(unigram, vocab=kept, byte_fallback=byte_fallback))


metaspace = json.loads((text_data / "metaspace_unigram" / "tokenizer.json").read_text())
tokenizer_seed("metaspace-unigram-trimmed",
               trimmed_unigram(metaspace, [FIXED_TEXT, FIXED_PAIR], first_pieces=120, byte_fallback=True))
# The base of the one-type documents below: no byte pieces, so a few KB.
unigram = trimmed_unigram(metaspace, [FIXED_TEXT, FIXED_PAIR], first_pieces=40, byte_fallback=False)

# -- Precompiled: a few rules cut from XLM-R's charsmap (precompiled_charsmap.py) ---------------------------------

xlmr_charsmap = base64.b64decode((text_data / "xlmr_precompiled_charsmap.txt").read_text().strip())
charsmap_keys = ["\ufb01", "\u2460", "\uff76", "\uff9e", "\uff76\uff9e", "\u00b2", "\u00a0", "\u200b", "\x7f",
                 "\u2122", "\uff21", "\u3000", "\u2026", "\u00bd"]
charsmap_rules = {}
for key in charsmap_keys:
    replacement = charsmap_lookup(xlmr_charsmap, key.encode())
    assert replacement is not None, "XLM-R's charsmap has no rule for %r" % key
    charsmap_rules[key.encode()] = replacement
tiny_charsmap = charsmap_of(charsmap_rules)
for key, replacement in charsmap_rules.items():
    assert charsmap_lookup(tiny_charsmap, key) == replacement, key
seed("precompiled_charsmap", "xlmr-cut", tiny_charsmap)
seed("precompiled_charsmap", "one-rule", charsmap_of({"\u2460".encode(): b"1"}))
precompiled = {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(tiny_charsmap).decode()}

# -- one document per component type --------------------------------------------------------------------------

normalizers = {
    "BertNormalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": True, "lowercase": False},
    "NFC": {"type": "NFC"}, "NFD": {"type": "NFD"}, "NFKC": {"type": "NFKC"}, "NFKD": {"type": "NFKD"},
    "Lowercase": {"type": "Lowercase"}, "StripAccents": {"type": "StripAccents"},
    "Strip": {"type": "Strip", "strip_left": True, "strip_right": True},
    "Replace": {"type": "Replace", "pattern": {"String": "l"}, "content": "LL"},
    "Prepend": {"type": "Prepend", "prepend": "\u2581"},
    "Precompiled": {"type": "Sequence", "normalizers": [
        precompiled, {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
    "Sequence": {"type": "Sequence", "normalizers": [
        {"type": "NFKD"}, {"type": "StripAccents"}, {"type": "Lowercase"},
        {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "},
        {"type": "Strip", "strip_left": False, "strip_right": True}, {"type": "Prepend", "prepend": "\u2581"}]},
}
for name, normalizer in normalizers.items():
    tokenizer_seed("normalizer-" + name, dict(unigram, normalizer=normalizer))

pre_tokenizers = {
    "BertPreTokenizer": {"type": "BertPreTokenizer"},
    "Whitespace": {"type": "Whitespace"},
    "WhitespaceSplit": {"type": "WhitespaceSplit"},
    "Metaspace": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False},
    "Split": {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithNext", "invert": False},
    "Split-regex-inverted": {"type": "Split", "pattern": {"Regex": "\\p{L}+|\\d"}, "behavior": "Contiguous",
                             "invert": True},
    "Punctuation": {"type": "Punctuation", "behavior": "Isolated"},
    "Digits": {"type": "Digits", "individual_digits": True},
    "Sequence": {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"}, {"type": "Punctuation", "behavior": "Contiguous"},
        {"type": "Digits", "individual_digits": False}]},
}
for name, pre_tokenizer in pre_tokenizers.items():
    tokenizer_seed("pre_tokenizer-" + name, dict(unigram, pre_tokenizer=pre_tokenizer))
tokenizer_seed("pre_tokenizer-ByteLevel", dict(qwen, pre_tokenizer={
    "type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}))

template = {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 1}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 1}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 2}}],
            "pair": [{"Sequence": {"id": "B", "type_id": 1}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[CLS]", "type_id": 1}}],
            "special_tokens": {t: {"id": t, "ids": [wordpiece_ids[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")}}
post_processors = {
    "BertProcessing": (wordpiece, {"type": "BertProcessing", "sep": ["[SEP]", wordpiece_ids["[SEP]"]],
                                   "cls": ["[CLS]", wordpiece_ids["[CLS]"]]}),
    "RobertaProcessing": (qwen, {"type": "RobertaProcessing", "sep": ["<|im_end|>", added_id(qwen, "<|im_end|>")],
                                 "cls": ["<|im_start|>", added_id(qwen, "<|im_start|>")], "trim_offsets": True,
                                 "add_prefix_space": False}),
    "ByteLevel": (qwen, {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}),
    "TemplateProcessing": (wordpiece, template),
    "Sequence": (qwen, {"type": "Sequence", "processors": [
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
        {"type": "RobertaProcessing", "sep": ["<|im_end|>", added_id(qwen, "<|im_end|>")],
         "cls": ["<|im_start|>", added_id(qwen, "<|im_start|>")], "trim_offsets": False,
         "add_prefix_space": True}]}),
}
for name, (base, post_processor) in post_processors.items():
    tokenizer_seed("post_processor-" + name, dict(base, post_processor=post_processor))

# BPE with every option: pieces inside a word carry "##", its last one "</w>"; a piece that is not in the vocabulary
# falls back to its bytes (prefix and suffix included, as tokenizers does), or to one fused <unk>.
letters = "helowrdnaiv"
bpe_vocab = ["<unk>", *("<0x%02X>" % b for b in range(256)),
             *(piece % c for c in letters for piece in ("%s", "##%s", "%s</w>", "##%s</w>"))]
bpe_merges = [["h", "##e"], ["##l", "##l"], ["he", "##ll"], ["hell", "##o</w>"], ["w", "##o"], ["##r", "##l"],
              ["wo", "##rl"], ["worl", "##d</w>"], ["n", "##a"], ["##i", "##v"]]
for a, b in bpe_merges:
    bpe_vocab.append(a + b[2:])
tokenizer_seed("model-BPE-options", {
    "version": "1.0", "added_tokens": [{"id": 0, "content": "<unk>", "single_word": False, "lstrip": False,
                                        "rstrip": False, "normalized": False, "special": True}],
    "normalizer": {"type": "Lowercase"}, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None,
    "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": "##",
              "end_of_word_suffix": "</w>", "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
              "vocab": {piece: i for i, piece in enumerate(dict.fromkeys(bpe_vocab))}, "merges": bpe_merges}})

# Added tokens with every option, numbered after the model's vocabulary as tokenizers numbers them.
added_options = [("wörld", dict(single_word=True, normalized=True, special=False)),
                 ("<mask>", dict(lstrip=True, rstrip=True, special=True)),
                 ("好", dict(rstrip=True, normalized=False, special=False)),
                 ("naïve café", dict(normalized=True, special=False))]
added_tokens = list(wordpiece["added_tokens"])
for k, (content, options) in enumerate(added_options):
    added_tokens.append(dict({"id": len(wordpiece_ids) + k, "content": content, "single_word": False,
                              "lstrip": False, "rstrip": False, "normalized": False, "special": False}, **options))
tokenizer_seed("added-tokens-options", dict(wordpiece, added_tokens=added_tokens))

# Every decoder type, in one Sequence, so that Tokenizer::decode runs each of them from the first input.
tokenizer_seed("decoder-every-type", dict(wordpiece, decoder={"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "##"}, "content": "#"},
    {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "},
    {"type": "ByteFallback"},
    {"type": "Strip", "content": " ", "start": 1, "stop": 2},
    {"type": "CTC", "pad_token": "[PAD]", "word_delimiter_token": "|", "cleanup": True},
    {"type": "BPEDecoder", "suffix": "</w>"},
    {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True},
    {"type": "WordPiece", "prefix": "#", "cleanup": False},
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    {"type": "Fuse"}]}))

# -- tokenizer_encode: the real tokenizers ------------------------------------------------------------------------
# First byte: bits 0-1 the tokenizer (0 all-MiniLM-L6-v2, 1 qwen_bpe, 2 metaspace_unigram, 3 XLM-R), bit 2
# truncate on the left, bit 3 no special tokens, bit 6 a pair (the text cut in two); second byte max_length
# (0: none). '0'..'3' are the plain single texts.
encode_texts = {
    "ascii": "Hello, world! The tokenizer splits unaffable words.",
    "accents-cjk": "Héllo wörld 你好 naïve café e\u0301\u0301 日本語のテキスト",
    "controls": "tab\there\u200bzero\u0000nul\r\n\x7f\u00ad  \u3000 end ",
    "long-word": "x" * 120 + " " + "ab" * 60,
    "scripts": "ภาษาไทย العربية हिन्दी 한국어 Ελληνικά \uff76\uff9e \ufb01 \u2460 x\u00b2",
    "emoji": "\U0001f469\u200d\U0001f467 \U0001f1ef\U0001f1f5 \U0001f44d\U0001f3fd 🙂🙂",
    "added-tokens": "[CLS] a [MASK] b [SEP] [UNK] <s> </s> <mask> <|endoftext|><|im_start|>user<|im_end|>",
}
for index in range(4):
    for name, text in encode_texts.items():
        seed("tokenizer_encode", "%d-%s" % (index, name), bytes([ord("0") + index, 0]) + text.encode())
    seed("tokenizer_encode", "%d-truncated-left" % index, bytes([ord("4") + index, 6]) + encode_texts["ascii"].encode())
    seed("tokenizer_encode", "%d-no-special-tokens" % index, bytes([ord("8") + index, 3]) + FIXED_TEXT.encode())
    seed("tokenizer_encode", "%d-pair" % index, bytes([ord("p") + index, 12]) + (FIXED_TEXT + FIXED_PAIR).encode())

# First byte: which file of the committed tiny model the input replaces (fuzz/model_folder_fuzzer.cpp's kFiles);
# the Transformer's sentence_bert_config.json comes from all-MiniLM-L6-v2 (sentence-transformers 6 writes none).
tiny = pathlib.Path(__file__).resolve().parent.parent / "tests/embed/data/families/bert_mean_dense_norm"
model_folder_files = ["modules.json", "config.json", "1_Pooling/config.json", "2_Dense/config.json",
                      "config_sentence_transformers.json", "tokenizer_config.json", "sentence_bert_config.json",
                      "model.safetensors", "2_Dense/model.safetensors"]
for index, name in enumerate(model_folder_files):
    source = model / name if name == "sentence_bert_config.json" else tiny / name
    seed("model_folder", name.replace("/", "-"), str(index).encode() + source.read_bytes())

# First byte: the route ('0' OpenAI /v1/embeddings, '1' TEI /embed, '2' /embed_sparse, '3' /rerank, '4' /predict,
# '5' /tokenize, '6' /similarity, '7' Cohere's /v1/rerank, '8' /decode, '9' /embed_all), then the body, in the shapes of OpenAI's and TEI's published examples.
bodies = {
    "openai-string": ("0", {"input": "The food was delicious.", "model": "all-MiniLM-L6-v2"}),
    "openai-array": ("0", {"input": ["first", "second text"], "encoding_format": "float", "user": "u"}),
    "openai-tokens": ("0", {"input": [[101, 7592, 102], [101, 2088, 102]], "encoding_format": "base64"}),
    "openai-one-token-array": ("0", {"input": [7592, 2088], "dimensions": 384}),
    "openai-dimensions-truncate": ("0", {"input": ["a " * 300, "b"], "dimensions": 64, "truncate": True,
                                         "truncation_direction": "left", "prompt_name": "query"}),
    "openai-int8": ("0", {"input": ["a", "b c"], "encoding_format": "int8", "dimensions": 13}),
    "openai-ubinary": ("0", {"input": "bits", "encoding_format": "ubinary"}),
    "tei-string": ("1", {"inputs": "What is deep learning?"}),
    "tei-array": ("1", {"inputs": ["a", "b " * 300], "truncate": True, "normalize": True}),
    "tei-embed-every-field": ("1", {"inputs": ["What is Deep Learning?", "c " * 300], "normalize": True,
                                    "truncate": True, "truncation_direction": "Left", "prompt_name": None,
                                    "dimensions": 128}),
    "tei-embed-sparse": ("2", {"inputs": ["What is Deep Learning?", "d " * 300], "truncate": True,
                               "truncation_direction": "Right", "prompt_name": None}),
    "tei-rerank": ("3", {"query": "What is Deep Learning?", "texts": ["Deep Learning is not...", "Deep learning is..."],
                         "raw_scores": False, "return_text": True, "truncate": False,
                         "truncation_direction": "Right"}),
    "tei-rerank-long": ("3", {"query": "q " * 200, "texts": ["e " * 200, ""], "raw_scores": True, "truncate": True,
                              "truncation_direction": "left"}),
    "tei-predict-one": ("4", {"inputs": "I like you. I love you", "raw_scores": False, "truncate": False}),
    "tei-predict-pair": ("4", {"inputs": ["What is Deep Learning?", "Deep learning is..."]}),
    "tei-predict-batch": ("4", {"inputs": [["I like you."], ["first", "second"], "bare"], "raw_scores": True,
                                "truncate": True, "truncation_direction": "Left"}),
    "tei-tokenize": ("5", {"inputs": ["test", "Héllo wörld 你好 e\u0301"], "add_special_tokens": True,
                           "prompt_name": None}),
    "tei-tokenize-plain": ("5", {"inputs": "no specials", "add_special_tokens": False}),
    "tei-similarity": ("6", {"inputs": {"source_sentence": "What is Deep Learning?",
                                        "sentences": ["What is Machine Learning?"]}}),
    "tei-similarity-parameters": ("6", {"inputs": {"source_sentence": "f " * 300, "sentences": ["g", ""]},
                                        "parameters": {"truncate": True, "truncation_direction": "Left",
                                                       "prompt_name": None}}),
    "cohere-rerank": ("7", {"model": "rerank-v3.5", "query": "What is the capital of the United States?",
                            "documents": ["Carson City is the capital city of Nevada.",
                                          {"text": "Washington, D.C. is the capital of the United States."}],
                            "top_n": 1, "return_documents": True}),
    "cohere-rerank-long": ("7", {"query": "h " * 200, "documents": ["i " * 200, ""], "truncate": True,
                                 "truncation_direction": "left"}),
    "tei-decode-one": ("8", {"ids": [101, 7592, 2088, 102], "skip_special_tokens": True}),
    "tei-decode-batch": ("8", {"ids": [[101, 7592, 1010, 1045, 1005, 1049, 102], [], [4294967295, 0]],
                               "skip_special_tokens": False}),
    "tei-embed-all": ("9", {"inputs": "What is Deep Learning?"}),
    "tei-embed-all-every-field": ("9", {"inputs": ["j " * 300, "k"], "truncate": True, "truncation_direction": "Left",
                                        "prompt_name": None}),
}
for name, (api, body) in bodies.items():
    seed("serve_request", name, api + json.dumps(body))

# -- traceparent headers (W3C Trace Context): the spec's examples, a later version, and malformed ones -------------
traceparents = {
    "version-00-sampled": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "version-00-unsampled": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
    "later-version-extended": "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09-future-fields",
    "uppercase": "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
    "zero-trace-id": "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
    "version-ff": "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
}
for name, header in traceparents.items():
    seed("traceparent", name, header)

# -- device names and lists (accel/device/pool.hpp): the first byte is the host's GPU count (a digit) ---------------
device_names = {
    "cpu": b"0cpu",
    "auto-no-gpu": b"0auto",
    "auto-two-gpus": b"2auto",
    "cuda-isolated-1": b"2cuda-isolated:1",
    "ordinal-past-the-host": b"1cuda:1",
    "bare-ordinal": b"21",
    "list-every-kind": b"2cpu, cpu-isolated,cuda,cuda:1,cuda-isolated:1,0",
    "list-all": b"3all,cpu",
    "empty-entry": b"1cpu,,cpu",
    "bad-ordinal": b"1cuda:x",
}
for name, content in device_names.items():
    seed("device_names", name, content)

# -- exported buffers' text (accel/device/process_sharing.hpp): a CPU and a CUDA export, and damaged ones ----------


def exported_buffer(kind=0, dtype=0, count=1024, process=4242, slot=3, generation=17, table=None, memory=None):
    table = table if table is not None else f"/accel-exports-{process}".encode()
    memory = memory if memory is not None else (f"/accel-buffer-{process}-{generation}".encode() if kind == 0
                                                else bytes(range(64)))
    fields = struct.pack("<BBQiIQ", kind, dtype, count, process, slot, generation)
    return "accel-buffer-v1:" + (fields + table.ljust(48, b"\0") + memory.ljust(64, b"\0")).hex()


exported_buffers = {
    "cpu-f32": exported_buffer(),
    "cuda-bf16": exported_buffer(kind=1, dtype=3, count=1 << 20),
    "no-table-nul": exported_buffer(table=b"/accel-exports-" + b"9" * 33),
    "another-process-table": exported_buffer(table=b"/accel-exports-1"),
    "zero-generation": exported_buffer(generation=0),
    "count-overflows": exported_buffer(dtype=1, count=(1 << 64) - 1),
    "upper-case-hex": exported_buffer().upper(),
}
for name, text in exported_buffers.items():
    seed("exported_buffer", name, text)
