#!/usr/bin/env python3
"""Writes the golden files that tests/text/tokenizer_golden_test.cpp holds accel::text::Tokenizer to: what
HuggingFace `tokenizers` encodes for a varied corpus with four tokenizer.json files, ids, type ids, special-token
mask and offsets (as UTF-8 byte offsets of the text; tokenizers' Python gives character offsets).

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install tokenizers==0.23.3
    scripts/setup      # fetches .deps/models/all-MiniLM-L6-v2 and .deps/tokenizers/multilingual-e5-small
    /tmp/venv/bin/python tests/text/make_tokenizer_golden.py             # the committed files
    /tmp/venv/bin/python tests/text/make_tokenizer_golden.py --full DIR  # all texts, to DIR (not committed)
    ACCEL_TOKENIZER_GOLDEN_DIR=DIR build/.../tests/text/text_tokenizer_golden_test

The tokenizers are
  minilm_wordpiece   .deps/models/all-MiniLM-L6-v2/tokenizer.json (BertNormalizer, BertPreTokenizer, WordPiece)
  xlmr_unigram       .deps/tokenizers/multilingual-e5-small/tokenizer.json (Precompiled, Metaspace, Unigram 250,002)
  qwen_bpe           tests/text/data/qwen_bpe/tokenizer.json, trained here: Qwen2's byte-level BPE pipeline
  metaspace_unigram  tests/text/data/metaspace_unigram/tokenizer.json, trained here: NFKC, Metaspace, Unigram with
                     byte fallback
The two trained ones are trained by tokenizers' own trainers on a slice of the corpus that no golden text comes
from. The default run trains and writes them; --full reuses the files already there, so that a full set always
describes the committed tokenizers (tokenizers' Unigram trainer walks a hash set, so a retrained vocabulary may order
equal-scored pieces differently).

Output, in tests/text/data/golden/ (or DIR): texts.jsonl, a header line then {"text", "category"} per text; and
<tokenizer>.jsonl, a header line then one case a line: {"text": index, optionally "pair": index of the second text,
"max_length" and "side" ("right"/"left") when truncated, "ids", "type_ids" and "special" (one digit a token),
"offsets" (flat [begin, end, begin, end, ...] byte offsets into the case's own text: the first text for tokens of
sequence 0, the second for sequence 1, [0, 0] for special tokens the post-processor added), "truncated" (whether
ids were dropped to fit)}. Every case is encoded as `tok.no_truncation(); tok.no_padding(); tok.encode(...)` with
add_special_tokens=True, truncation only where the case names max_length (longest first for a pair, stride 0).

The corpus is drawn from a fixed seed: running the script again with the same `tokenizers` writes the same texts
and golden files. Characters are drawn from code points that Unicode 8.0 had already assigned: for newer ones the
tables of `tokenizers` (its Rust crates, Oniguruma) and utf8proc 2.8 (Unicode 15) can differ (Note [Unicode
versions] in src/text/tokenizer/normalizer.cpp).
"""

import argparse
import collections
import json
import os
import pathlib
import random
import sys

os.environ["RAYON_NUM_THREADS"] = "1"  # fewer differences between runs of the trainers, which sum in parallel
import tokenizers  # noqa: E402 (after the thread count)
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors  # noqa: E402
from tokenizers import trainers  # noqa: E402

import golden_corpus  # noqa: E402

TOKENIZERS_VERSION = "0.23.3"
SEED = 20250917
GOLDEN_BUDGET_BYTES = 5_950_000  # every committed golden file together
PAIR_CASES, TRUNCATION_CASES, TRUNCATION_LENGTH = 200, 200, 32
FULL_PAIR_CASES, FULL_TRUNCATION_CASES = 2000, 2000

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests/text/data"
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                 r"\s*[\r\n]+|\s+(?!\S)|\s+")


def tokenizer_paths():
    return {
        "minilm_wordpiece": ROOT / ".deps/models/all-MiniLM-L6-v2/tokenizer.json",
        "xlmr_unigram": ROOT / ".deps/tokenizers/multilingual-e5-small/tokenizer.json",
        "qwen_bpe": DATA / "qwen_bpe/tokenizer.json",
        "metaspace_unigram": DATA / "metaspace_unigram/tokenizer.json",
    }


def train_qwen_bpe(training_texts):
    """Qwen2's pipeline (NFC, its split pattern then bytes, BPE over the byte alphabet), the special tokens added
    after the vocabulary as Qwen2's are, and the EOS appended as Qwen3-Embedding's post-processor does."""
    tokenizer = Tokenizer(models.BPE(ignore_merges=True))
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=4000, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(training_texts, trainer)
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False)
                                  for t in ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]])
    tokenizer.add_tokens([AddedToken("<tool_call>", special=False, normalized=False)])  # as Qwen2.5's
    eos = tokenizer.token_to_id("<|endoftext|>")
    tokenizer.post_processor = processors.Sequence([
        processors.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
        processors.TemplateProcessing(single="$A:0 <|endoftext|>:0", pair="$A:0 <|endoftext|>:0 $B:1 <|endoftext|>:1",
                                      special_tokens=[("<|endoftext|>", eos)]),
    ])
    return tokenizer


def train_metaspace_unigram(training_texts):
    """A SentencePiece-style Unigram: NFKC with space runs folded, Metaspace, <0xXX> pieces for byte fallback.
    Only the 1,500 most frequent characters of the training texts are trained on (the trainer keeps every character
    it sees), so that the vocabulary stays small and golden texts reach the byte fallback."""
    normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
    counts = collections.Counter(c for text in training_texts for c in normalizer.normalize_str(text))
    kept = {c for c, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:1500]}
    common = ["".join(c for c in normalizer.normalize_str(t) if c in kept) for t in training_texts]

    tokenizer = Tokenizer(models.Unigram())
    tokenizer.normalizer = normalizer
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    tokenizer.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Metaspace()])
    special = ["<unk>", "<s>", "</s>", "<pad>"]
    trainer = trainers.UnigramTrainer(vocab_size=3000 - 256, special_tokens=special, unk_token="<unk>",
                                      show_progress=False, max_piece_length=12)
    tokenizer.train_from_iterator(common, trainer)

    # The trainer walks a hash set to add the characters its EM dropped, at the lowest score plus 1e-4 per character
    # in that order, and its sums differ in the last bits from run to run: those characters all get the lowest
    # score, every score is rounded to 1e-6, and equal scores are ordered by piece. Pieces spelling a special
    # token (the training texts hold "<pad>") are dropped: a vocabulary has each piece once. The byte pieces go
    # below all.
    spec = json.loads(tokenizer.to_str())
    vocab = spec["model"]["vocab"]
    head = vocab[:len(special)]
    pieces = [p for p in vocab[len(special):] if p[0] not in special]
    lowest = min(score for _, score in pieces)
    added_span = 1e-4 * sum(1 for piece, _ in pieces if len(piece) == 1)
    pieces = sorted(([piece, round(lowest if len(piece) == 1 and score < lowest + added_span else score, 6)]
                     for piece, score in pieces), key=lambda p: (-p[1], p[0]))
    bytes_ = [[f"<0x{b:02X}>", round(lowest - 1.0, 6)] for b in range(256)]
    spec["model"].update(vocab=head + pieces + bytes_, unk_id=0, byte_fallback=True)
    tokenizer = Tokenizer.from_str(json.dumps(spec))
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B:1 </s>:1",
        special_tokens=[("<s>", tokenizer.token_to_id("<s>")), ("</s>", tokenizer.token_to_id("</s>"))])
    return tokenizer


def save_tokenizer(tokenizer, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tokenizer.to_str(pretty=True) + "\n", encoding="utf-8")
    return Tokenizer.from_file(str(path))


def byte_prefix(text):
    prefix = [0]
    for c in text:
        prefix.append(prefix[-1] + len(c.encode("utf-8")))
    return prefix


def encode_case(tokenizer, texts, case):
    """The golden line of one case: {"text", maybe "pair", "max_length", "side"} plus what tokenizers gives."""
    first = texts[case["text"]]
    second = texts[case["pair"]] if "pair" in case else None
    tokenizer.no_truncation()
    tokenizer.no_padding()
    full = tokenizer.encode(first, second)
    encoding = full
    if "max_length" in case:
        tokenizer.enable_truncation(case["max_length"], stride=0, strategy="longest_first", direction=case["side"])
        encoding = tokenizer.encode(first, second)
        tokenizer.no_truncation()
    prefixes = [byte_prefix(first), byte_prefix(second) if second is not None else None]
    offsets = []
    for index, (begin, end) in enumerate(encoding.offsets):
        sequence = encoding.token_to_sequence(index)
        prefix = prefixes[sequence] if sequence is not None else [0]
        offsets += [prefix[begin], prefix[end]]
    assert all(t in (0, 1) for t in encoding.type_ids)
    return dict(case, ids=encoding.ids, type_ids="".join(map(str, encoding.type_ids)),
                special="".join(map(str, encoding.special_tokens_mask)), offsets=offsets,
                truncated=len(encoding.ids) < len(full.ids))


def cases_for(indexes, texts, pair_count, truncation_count, rng):
    """Every text alone; then pairs and truncated encodes of texts drawn from `indexes` (short ones for the pairs
    that are not truncated, so that the cases stay small)."""
    cases = [{"text": i} for i in indexes]
    short = [i for i in indexes if len(texts[i]) <= 100]
    for _ in range(pair_count):
        cases.append({"text": rng.choice(short), "pair": rng.choice(short)})
    for side in ("right", "left"):
        for _ in range(truncation_count):
            cases.append({"text": rng.choice(indexes), "max_length": TRUNCATION_LENGTH, "side": side})
        for _ in range(pair_count // 2):
            cases.append({"text": rng.choice(indexes), "pair": rng.choice(indexes), "max_length": TRUNCATION_LENGTH,
                          "side": side})
    return cases


def line(entry):
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"


def single_line_sizes(loaded, texts):
    """Bytes each text takes in texts.jsonl plus its single case in every tokenizer's file."""
    sizes = [len(line({"text": t, "category": "x" * 12}).encode()) for t in texts]
    for tokenizer in loaded.values():
        for i in range(len(texts)):
            sizes[i] += len(line(encode_case(tokenizer, texts, {"text": i})).encode())
    return sizes


def committed_subset(categories, sizes, budget):
    """Every hard case, and the same share of every other category (at least 15 of each, 4 of the costly long
    texts), as large as fits in `budget` bytes."""
    by_category = collections.defaultdict(list)
    for index, category in enumerate(categories):
        by_category[category].append(index)

    def pick(share):
        chosen = []
        for category, members in by_category.items():
            least = {"hard": len(members), "long_text": 4}.get(category, 15)
            keep = max(least, int(len(members) * share))
            chosen += members[:keep]
        return sorted(chosen)

    low, high = 0.0, 1.0
    for _ in range(30):
        middle = (low + high) / 2
        low, high = (middle, high) if sum(sizes[i] for i in pick(middle)) <= budget else (low, middle)
    return pick(low)


def write_golden(directory, loaded, texts, categories, indexes, cases):
    """texts.jsonl holds the texts of `indexes` renumbered from 0; the cases' indexes are renumbered alike."""
    directory.mkdir(parents=True, exist_ok=True)
    renumber = {old: new for new, old in enumerate(indexes)}
    subset = [texts[i] for i in indexes]
    header = {"generator": "tests/text/make_tokenizer_golden.py", "tokenizers": tokenizers.__version__,
              "seed": SEED, "texts": len(subset)}
    with (directory / "texts.jsonl").open("w", encoding="utf-8", newline="\n") as out:
        out.write(line(header))
        for i in indexes:
            out.write(line({"text": texts[i], "category": categories[i]}))
    renumbered = [{k: renumber[v] if k in ("text", "pair") else v for k, v in case.items()} for case in cases]
    sizes = {"texts.jsonl": (directory / "texts.jsonl").stat().st_size}
    for name, tokenizer in loaded.items():
        path = directory / f"{name}.jsonl"
        with path.open("w", encoding="utf-8", newline="\n") as out:
            out.write(line(dict(header, tokenizer=name, cases=len(renumbered))))
            for case in renumbered:
                out.write(line(encode_case(tokenizer, subset, case)))
        sizes[path.name] = path.stat().st_size
    return sizes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--full", type=pathlib.Path, help="write every golden text's cases to this folder")
    args = parser.parse_args()
    if tokenizers.__version__ != TOKENIZERS_VERSION:
        sys.exit(f"tokenizers {tokenizers.__version__} is installed; the golden files pin {TOKENIZERS_VERSION}")

    corpus = golden_corpus.build(random.Random(SEED))
    texts, categories = corpus.golden_texts, corpus.golden_categories
    paths = tokenizer_paths()
    if args.full is None:
        save_tokenizer(train_qwen_bpe(corpus.training_texts), paths["qwen_bpe"])
        save_tokenizer(train_metaspace_unigram(corpus.training_texts), paths["metaspace_unigram"])
    for name, path in paths.items():
        if not path.exists():
            sys.exit(f"{path} is missing: scripts/setup fetches the .deps files; a run without --full trains the rest")
    loaded = {name: Tokenizer.from_file(str(path)) for name, path in paths.items()}

    if args.full is not None:
        indexes = list(range(len(texts)))
        cases = cases_for(indexes, texts, FULL_PAIR_CASES, FULL_TRUNCATION_CASES, random.Random(SEED + 1))
        directory = args.full
    else:
        # The singles get what the other cases leave of the budget: measured, as those are drawn from the singles.
        sizes, budget = single_line_sizes(loaded, texts), GOLDEN_BUDGET_BYTES
        for _ in range(4):
            indexes = committed_subset(categories, sizes, budget)
            cases = cases_for(indexes, texts, PAIR_CASES, TRUNCATION_CASES, random.Random(SEED + 1))
            total = sum(sizes[i] for i in indexes) + sum(
                len(line(encode_case(tokenizer, texts, case)).encode())
                for case in cases[len(indexes):] for tokenizer in loaded.values())
            if total <= GOLDEN_BUDGET_BYTES:
                break
            budget -= total - GOLDEN_BUDGET_BYTES + 20_000
        directory = DATA / "golden"
    sizes = write_golden(directory, loaded, texts, categories, indexes, cases)
    print(f"{len(indexes)} of {len(texts)} texts, {len(cases)} cases a tokenizer, in {directory}:")
    for name, size in sizes.items():
        print(f"  {name}: {size} bytes")
    print(f"  together: {sum(sizes.values())} bytes")


if __name__ == "__main__":
    main()
