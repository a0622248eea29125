#!/usr/bin/env python3
"""The PyTorch side of bench/embed/embed_bench.cpp: the same trace (its --trace file) through what a user would
run instead, on the same GPU, one JSON line per figure:

  throughput_tokens_ready  transformers AutoModel f16 eager, and torch.compile(dynamic=True), over length-sorted
                           batches of each --batch size (default 128 sequences; tokens made beforehand, mean pooling
                           and L2 normalisation included). Larger batches run short passages much faster (MiniLM's
                           shape on an H200: 4.5 M tokens/s in batches of 128, 7.3 M in 512: PERFORMANCE §63).
  end_to_end               SentenceTransformer.encode in f16, text in, in batches of the first --batch size
  single_query             one short query at a time: torch.compile(mode="reduce-overhead"), eager, and
                           SentenceTransformer.encode; p50/p99 in microseconds
  cold_start               the first torch.compile call (compile included)
  accuracy                 with --accel-embeddings (embed_bench --embeddings): cosine of each of accel's embeddings
                           of the trace to sentence-transformers' in f32 (min, mean, how many below 0.999)

  python3 bench/peers/embed_peer.py --model .deps/models/all-MiniLM-L6-v2 --trace out/trace.jsonl [--batch 128 512]
      [--queries-only]
"""
import argparse
import json
import pathlib
import time

import numpy as np
import torch
import torch.nn.functional as F
from sentence_transformers import SentenceTransformer
from gpu_figures import emit, timed
from transformers import AutoModel, AutoTokenizer


POOLING = "mean"  # or "lasttoken" (decoders), from --pooling


def pooled(model, batch):
    out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
    if POOLING == "lasttoken":  # right padding: the last token of a row is at its length - 1
        last = batch["attention_mask"].sum(1) - 1
        return F.normalize(out[torch.arange(out.shape[0], device=out.device), last], dim=-1)
    mask = batch["attention_mask"].unsqueeze(-1).to(out.dtype)
    return F.normalize((out * mask).sum(1) / mask.sum(1).clamp(min=1), dim=-1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--trace", required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--batch", type=int, nargs="+", default=[128], help="sequences a batch; several: each in turn")
    parser.add_argument("--accel-embeddings", help="embed_bench --embeddings output: checked against f32")
    parser.add_argument("--accuracy-only", action="store_true", help="only the --accel-embeddings check")
    parser.add_argument("--queries-only", action="store_true", help="only the single_query figures")
    parser.add_argument("--pooling", choices=["mean", "lasttoken"], default="mean",
                        help="of the tokens-ready passes: the model folder's pooling (lasttoken for decoders)")
    args = parser.parse_args()
    global POOLING
    POOLING = args.pooling

    rows = [json.loads(line) for line in open(args.trace)]
    passages = [r["text"] for r in rows if r["kind"] == "passage"]
    queries = [r["text"] for r in rows if r["kind"] == "query"]
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    tokenizer.padding_side = "right"  # what pooled() assumes for lasttoken
    model = AutoModel.from_pretrained(args.model, torch_dtype=torch.float16).cuda().eval()

    max_length = longest_input(args.model, tokenizer)

    if args.accuracy_only:
        with torch.inference_mode():
            accuracy(args, passages + queries, len(queries))
        return
    with torch.inference_mode():
        st = SentenceTransformer(args.model, device="cuda").half()
        if not args.queries_only:
            throughput(args, model, st, passages, tokenizer, max_length)

        def latencies(embed_one):
            for q in queries[:50]:
                embed_one(q)
            out = []
            for i in range(args.queries):
                torch.cuda.synchronize()
                start = time.perf_counter()
                embed_one(queries[i % len(queries)])
                torch.cuda.synchronize()
                out.append((time.perf_counter() - start) * 1e6)
            out.sort()
            return out[len(out) // 2], out[int(0.99 * (len(out) - 1))]

        # One query: tokenized on the host, then the model; reduce-overhead replays CUDA graphs per shape.
        # --queries 0 leaves these figures out.
        if args.queries > 0:
            reduce_overhead = torch.compile(model, mode="reduce-overhead")
            for name, m in (("torch.compile(mode=reduce-overhead)", reduce_overhead),
                            ("transformers f16 eager", model)):
                def one(q, m=m):
                    batch = tokenizer([q], truncation=True, max_length=max_length, return_tensors="pt").to("cuda")
                    return pooled(m, batch)
                p50, p99 = latencies(one)
                emit({"figure": "single_query", "peer": name, "p50_us": p50, "p99_us": p99})
            p50, p99 = latencies(lambda q: st.encode([q]))
            emit({"figure": "single_query", "peer": "SentenceTransformer.encode f16", "p50_us": p50, "p99_us": p99})

        if args.accel_embeddings:
            accuracy(args, passages + queries, len(queries))


def longest_input(folder, tokenizer):
    """The longest input sentence-transformers gives the model: sentence_bert_config.json's max_seq_length, else the
    tokenizer's model_max_length (256 for the bench models, 32,768 for a Qwen3-Embedding folder)."""
    config = pathlib.Path(folder) / "sentence_bert_config.json"
    length = json.loads(config.read_text()).get("max_seq_length") if config.exists() else None
    return length or tokenizer.model_max_length


def sorted_batches(passages, tokenizer, max_length, size):
    """Tokens made beforehand: length-sorted batches of `size`, truncated where sentence-transformers cuts them; and
    the tokens they hold."""
    order = sorted(range(len(passages)), key=lambda i: len(passages[i]))
    batches = []
    tokens = 0
    for first in range(0, len(order), size):
        texts = [passages[i] for i in order[first:first + size]]
        batch = tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt").to("cuda")
        tokens += int(batch["attention_mask"].sum())
        batches.append(batch)
    return batches, tokens


def throughput(args, model, st, passages, tokenizer, max_length):
    """The tokens-ready passes (eager, then torch.compile(dynamic=True)) at each batch size, and
    SentenceTransformer.encode."""
    compiled = None
    for size in args.batch:
        batches, tokens = sorted_batches(passages, tokenizer, max_length, size)

        def run_all(m):
            for b in batches:
                pooled(m, b)

        run_all(model)
        seconds = timed(lambda: run_all(model), args.repeats)
        emit({"figure": "throughput_tokens_ready", "peer": "transformers f16 eager", "batch": size, "tokens": tokens,
              "tokens_per_s": tokens / seconds})
        if compiled is None:
            compiled = torch.compile(model, dynamic=True)
            torch.cuda.synchronize()
            start = time.perf_counter()
            pooled(compiled, batches[0])
            torch.cuda.synchronize()
            emit({"figure": "cold_start", "peer": "torch.compile(dynamic=True) first call",
                  "first_call_ms": (time.perf_counter() - start) * 1e3})
        run_all(compiled)
        seconds = timed(lambda: run_all(compiled), args.repeats)
        emit({"figure": "throughput_tokens_ready", "peer": "torch.compile(dynamic=True)", "batch": size,
              "tokens": tokens, "tokens_per_s": tokens / seconds})

    st.encode(passages[:256], batch_size=args.batch[0])
    seconds = timed(lambda: st.encode(passages, batch_size=args.batch[0]), args.repeats)
    emit({"figure": "end_to_end", "peer": "SentenceTransformer.encode f16", "batch": args.batch[0],
          "sentences_per_s": len(passages) / seconds, "tokens_per_s": tokens / seconds})


def accuracy(args, texts, queries):
    """The whole trace, then its last `queries` texts apart: embed_bench embeds those one at a time."""
    ours = np.fromfile(args.accel_embeddings, dtype="<f4").reshape(len(texts), -1)
    reference = SentenceTransformer(args.model, device="cuda").float().encode(
        texts, batch_size=args.batch[0], normalize_embeddings=True, convert_to_numpy=True)
    cosine = (ours * reference).sum(1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(reference, axis=1))
    emit({"figure": "accuracy", "reference": "SentenceTransformer f32", "texts": len(texts),
          "min_cosine": float(cosine.min()), "mean_cosine": float(cosine.mean()),
          "below_0_999": int((cosine < 0.999).sum()),
          "queries": queries, "queries_min_cosine": float(cosine[len(texts) - queries:].min()) if queries else None})


if __name__ == "__main__":
    main()
