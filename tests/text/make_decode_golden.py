#!/usr/bin/env python3
"""Writes tests/text/data/decode_golden.jsonl, what tests/text/decode_golden_test.cpp holds
accel::text::Tokenizer::decode to: HuggingFace `tokenizers`' decode of id lists with the four tokenizer.json files of
make_tokenizer_golden.py (WordPiece; Metaspace over Unigram; byte-level BPE; ByteFallback and Metaspace over Unigram).

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install tokenizers==0.23.3
    /tmp/venv/bin/python tests/text/make_decode_golden.py

The id lists: the ids the committed golden files hold for texts of the corpus (special tokens included), every
CASES_PER_TOKENIZER-th case of them; and random lists of ids drawn from a fixed seed over the whole vocabulary, with
ids past its end mixed in (decode leaves those out). Each list is decoded with skip_special_tokens true and false.
Output: a header line, then {"tokenizer", "ids", "skip_special_tokens", "text"} a line.
"""

import json
import pathlib
import random

import tokenizers
from tokenizers import Tokenizer

TOKENIZERS_VERSION = "0.23.3"
SEED = 20261129
CASES_PER_TOKENIZER = 80
RANDOM_LISTS = 40

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests/text/data"
FILES = {
    "minilm_wordpiece": ROOT / ".deps/models/all-MiniLM-L6-v2/tokenizer.json",
    "xlmr_unigram": ROOT / ".deps/tokenizers/multilingual-e5-small/tokenizer.json",
    "qwen_bpe": DATA / "qwen_bpe/tokenizer.json",
    "metaspace_unigram": DATA / "metaspace_unigram/tokenizer.json",
}


def golden_id_lists(name):
    lines = (DATA / "golden" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()[1:]
    step = max(1, len(lines) // CASES_PER_TOKENIZER)
    return [json.loads(line)["ids"] for line in lines[::step]][:CASES_PER_TOKENIZER]


def random_id_lists(rng, vocabulary):
    lists = []
    for _ in range(RANDOM_LISTS):
        length = rng.randint(1, 24)
        ids = [rng.randrange(vocabulary) for _ in range(length)]
        if rng.random() < 0.2:
            ids.insert(rng.randrange(len(ids) + 1), vocabulary + rng.randrange(1000))
        lists.append(ids)
    return lists


def main():
    if tokenizers.__version__ != TOKENIZERS_VERSION:
        raise SystemExit(f"expected tokenizers {TOKENIZERS_VERSION}, found {tokenizers.__version__}")
    rng = random.Random(SEED)
    out = [json.dumps({"generator": "tests/text/make_decode_golden.py", "tokenizers": TOKENIZERS_VERSION,
                       "seed": SEED}, separators=(",", ":"))]
    for name, path in FILES.items():
        tokenizer = Tokenizer.from_file(str(path))
        vocabulary = tokenizer.get_vocab_size(with_added_tokens=True)
        for ids in golden_id_lists(name) + random_id_lists(rng, vocabulary):
            for skip in (True, False):
                text = tokenizer.decode(ids, skip_special_tokens=skip)
                out.append(json.dumps({"tokenizer": name, "ids": ids, "skip_special_tokens": skip, "text": text},
                                      ensure_ascii=False, separators=(",", ":")))
    (DATA / "decode_golden.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
