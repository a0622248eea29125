#!/usr/bin/env python3
"""The PyTorch side of `embed_bench --rerank`: the same (query, passage) pairs of its trace (query q with passages
[P q, P (q + 1)), P = --pairs-per-query; one short pair = query q with query q + 1) through what a user would run
instead, on the same GPU, one JSON line per figure:

  rerank_tokens_ready  AutoModelForSequenceClassification f16 eager, and torch.compile(dynamic=True), over
                       length-sorted batches of 128 pairs (tokens made beforehand)
  rerank_end_to_end    transformers f16 eager with the tokenizer in the loop, text in, batch 128
  rerank_single_pair   one short pair at a time: torch.compile(mode="reduce-overhead") and eager; p50/p99 in µs
  rerank_accuracy      with --accel-scores (embed_bench --scores): accel's logits against transformers' in f32

  python3 bench/peers/rerank_peer.py --model DIR --trace out/trace.jsonl --accel-scores out/scores.f32
"""
import argparse
import json
import time

import numpy as np
import torch
from gpu_figures import emit, timed
from transformers import AutoModelForSequenceClassification, AutoTokenizer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--trace", required=True)
    parser.add_argument("--pairs-per-query", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--single", type=int, default=500)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--accel-scores", help="embed_bench --scores output: checked against f32")
    args = parser.parse_args()

    rows = [json.loads(line) for line in open(args.trace)]
    passages = [r["text"] for r in rows if r["kind"] == "passage"]
    queries = [r["text"] for r in rows if r["kind"] == "query"]
    per = args.pairs_per_query
    count = min(len(queries), len(passages) // per)
    pairs = [(queries[q], passages[q * per + i]) for q in range(count) for i in range(per)]
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    limit = min(tokenizer.model_max_length, 512)
    model = AutoModelForSequenceClassification.from_pretrained(args.model, dtype=torch.float16).cuda().eval()

    def encode(batch_pairs):
        return tokenizer([a for a, _ in batch_pairs], [b for _, b in batch_pairs], padding=True, truncation=True,
                         max_length=limit, return_tensors="pt").to("cuda")

    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    batches = [encode([pairs[i] for i in order[first:first + args.batch]]) for first in range(0, len(order), args.batch)]
    tokens = sum(int(b["attention_mask"].sum()) for b in batches)

    with torch.inference_mode():
        def run_all(m):
            for b in batches:
                m(**b).logits

        run_all(model)
        seconds = timed(lambda: run_all(model), args.repeats)
        emit({"figure": "rerank_tokens_ready", "peer": "transformers f16 eager", "pairs": len(pairs), "tokens": tokens,
              "tokens_per_s": tokens / seconds, "pairs_per_s": len(pairs) / seconds})
        compiled = torch.compile(model, dynamic=True)
        run_all(compiled)
        run_all(compiled)
        seconds = timed(lambda: run_all(compiled), args.repeats)
        emit({"figure": "rerank_tokens_ready", "peer": "torch.compile(dynamic=True)", "pairs": len(pairs),
              "tokens": tokens, "tokens_per_s": tokens / seconds, "pairs_per_s": len(pairs) / seconds})

        def text_in():
            for first in range(0, len(pairs), args.batch):
                model(**encode(pairs[first:first + args.batch])).logits.float().cpu()

        text_in()
        seconds = timed(text_in, args.repeats)
        emit({"figure": "rerank_end_to_end", "peer": "transformers f16 eager, tokenizer included, batch 128",
              "pairs_per_s": len(pairs) / seconds})

        reduce_overhead = torch.compile(model, mode="reduce-overhead")
        for name, m in (("torch.compile(mode=reduce-overhead)", reduce_overhead), ("transformers f16 eager", model)):
            def one(i, m=m):
                q = i % (len(queries) - 1)
                return m(**encode([(queries[q], queries[q + 1])])).logits.float().cpu()
            for i in range(50):
                one(i)
            times = []
            for i in range(args.single):
                start = time.perf_counter()
                one(i)
                times.append((time.perf_counter() - start) * 1e6)
            times.sort()
            emit({"figure": "rerank_single_pair", "peer": name, "p50_us": times[len(times) // 2],
                  "p99_us": times[int(0.99 * (len(times) - 1))]})

        if args.accel_scores:
            reference = AutoModelForSequenceClassification.from_pretrained(args.model, dtype=torch.float32).cuda().eval()
            expected = np.concatenate([reference(**encode(pairs[f:f + args.batch])).logits.float().cpu().numpy()
                                       for f in range(0, len(pairs), args.batch)]).reshape(-1)
            ours = np.fromfile(args.accel_scores, dtype="<f4")
            emit({"figure": "rerank_accuracy", "reference": "transformers f32", "pairs": len(pairs),
                  "max_abs_error": float(np.abs(ours - expected).max()),
                  "mean_abs_error": float(np.abs(ours - expected).mean()),
                  "score_range": [float(expected.min()), float(expected.max())]})


if __name__ == "__main__":
    main()
