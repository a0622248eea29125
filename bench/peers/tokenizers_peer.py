#!/usr/bin/env python3
"""HuggingFace tokenizers' encode_batch on the same texts as bench/text/tokenizer_bench (one CSV line per thread
count, same columns, best of 5 runs). Truncation and padding off, special tokens added, as accel's default.

    tokenizers_peer.py TOKENIZER_JSON TEXTS_JSONL THREADS...

The thread count is set through RAYON_NUM_THREADS, which tokenizers reads once per process, so each count runs in a
process of its own (this script re-executes itself for each)."""
import json
import os
import subprocess
import sys
import time


def measure(tokenizer_json, texts_jsonl):
    import tokenizers

    tok = tokenizers.Tokenizer.from_file(tokenizer_json)
    tok.no_truncation()
    tok.no_padding()
    with open(texts_jsonl, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    texts = [row["text"] for row in rows if isinstance(row.get("text"), str)]  # as tokenizer_bench reads them
    best, tokens = float("inf"), 0
    for _ in range(5):
        start = time.perf_counter()
        encodings = tok.encode_batch(texts)
        seconds = time.perf_counter() - start
        tokens = sum(len(e.ids) for e in encodings)
        best = min(best, seconds)
    threads = os.environ["RAYON_NUM_THREADS"]
    print(f"tokenizers,{threads},{len(texts)},{tokens},{best:.4f},{len(texts) / best:.0f},{tokens / best:.0f}")


if __name__ == "__main__":
    if len(sys.argv) == 3:
        measure(sys.argv[1], sys.argv[2])
    else:
        for threads in sys.argv[3:]:
            env = dict(os.environ, RAYON_NUM_THREADS=threads, TOKENIZERS_PARALLELISM="true")
            subprocess.run([sys.executable, __file__, sys.argv[1], sys.argv[2]], env=env, check=True)
