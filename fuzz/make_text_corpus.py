#!/usr/bin/env python3
"""Writes the seed corpora of the text fuzz targets into fuzz/corpus/ (scripts/fuzz-corpus runs it): small
tokenizer.json files cut from all-MiniLM-L6-v2's (its vocabulary trimmed to the ids a few sentences use, so that
the fuzzer mutates kilobytes, not the 700 KB original), texts, model folder files and HTTP bodies. Each input of
a target with a leading selector byte starts with a printable one."""
import json
import pathlib
import sys

root = pathlib.Path(sys.argv[1])
model = pathlib.Path(sys.argv[2])


def seed(target, name, text):
    (root / target).mkdir(parents=True, exist_ok=True)
    (root / target / name).write_bytes(text if isinstance(text, bytes) else text.encode())


tokenizer = json.loads((model / "tokenizer.json").read_text())
vocab = tokenizer["model"]["vocab"]
keep = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", ",", "!", "un", "##aff", "##able", "the",
        "a", "token", "##izer", "你", "好", "e", "##s"}
small = dict(tokenizer, model=dict(tokenizer["model"], vocab={t: i for t, i in vocab.items() if t in keep}))
seed("tokenizer_json", "minilm-trimmed.json", json.dumps(small, ensure_ascii=False))
cased = dict(small, normalizer=dict(small["normalizer"], lowercase=False, strip_accents=False))
seed("tokenizer_json", "cased.json", json.dumps(cased, ensure_ascii=False, indent=1))

# First byte: max_length - 2.
for name, text in {"ascii": "Hello, world! The tokenizer splits unaffable words.",
                   "accents-cjk": "Héllo wörld 你好 naïve café",
                   "added-tokens": "[CLS] a [MASK] b [SEP] [UNK]",
                   "controls": "tab\there\u200bzero\u0000nul\r\n",
                   "long-word": "x" * 120 + " " + "ab" * 60}.items():
    seed("tokenizer_encode", name, b"~" + text.encode())

# First byte: which file (0 modules.json, 1 config.json, 2 sentence_bert_config.json, 3 1_Pooling/config.json).
for index, name in enumerate(["modules.json", "config.json", "sentence_bert_config.json", "1_Pooling/config.json"]):
    seed("model_folder", name.replace("/", "-"), str(index) + (model / name).read_text())

# First byte: '0' OpenAI, '1' TEI.
bodies = {
    "openai-string": ("0", {"input": "The food was delicious.", "model": "all-MiniLM-L6-v2"}),
    "openai-array": ("0", {"input": ["first", "second text"], "encoding_format": "float", "user": "u"}),
    "openai-tokens": ("0", {"input": [[101, 7592, 102], [101, 2088, 102]], "encoding_format": "base64"}),
    "openai-one-token-array": ("0", {"input": [7592, 2088], "dimensions": 384}),
    "tei-string": ("1", {"inputs": "What is deep learning?"}),
    "tei-array": ("1", {"inputs": ["a", "b " * 300], "truncate": True, "normalize": True}),
}
for name, (api, body) in bodies.items():
    seed("serve_request", name, api + json.dumps(body))
