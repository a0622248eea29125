#!/usr/bin/env python3
"""The CPU peers of bench/embed/embed_bench.cpp --device cpu: the same trace (its --trace file) through what a CPU
user runs instead, on the same cores, one JSON line per figure (no GPU is touched):

  throughput_tokens_ready  transformers AutoModel f32 (torch, all threads) and ONNX Runtime's CPU provider on the
                           same model exported to ONNX, over length-sorted batches (tokens made beforehand, mean
                           pooling and L2 normalisation included)
  end_to_end               SentenceTransformer(device="cpu").encode, text in
  single_query             one short query at a time, text in: SentenceTransformer.encode and ONNX Runtime
                           (tokenizer + session + pooling); p50/p99 in microseconds
  accuracy                 with --accel-embeddings (embed_bench --embeddings): cosine of each of accel's embeddings
                           to sentence-transformers' f32 ones (min, mean, how many below 0.99999)
  texts_file               with --texts FILE (JSONL {"text"}) instead of --trace: SentenceTransformer loaded and
                           the file encoded, as a user's script would (encode timed alone), with the cosine to
                           accel's embeddings of the file (--accel-texts-embeddings, `accel embed -o X.npy`)

  python3 bench/peers/cpu_embed_peer.py --model .deps/models/all-MiniLM-L6-v2 --trace out/trace.jsonl \
      --onnx out/minilm.onnx --accel-embeddings out/cpu_embeddings.f32
  python3 bench/peers/cpu_embed_peer.py --model .deps/models/all-MiniLM-L6-v2 --texts out/texts.jsonl \
      --accel-texts-embeddings out/accel_texts.npy
"""
import argparse
import json
import os
import platform
import statistics
import time

import numpy as np
import onnxruntime
import torch
import torch.nn.functional as F
from sentence_transformers import SentenceTransformer
from transformers import AutoModel, AutoTokenizer


def cpu_name():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def emit(row):
    row.update(device=cpu_name(), threads=torch.get_num_threads(), torch=torch.__version__,
               onnxruntime=onnxruntime.__version__)
    print(json.dumps(row), flush=True)


def timed(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def latencies(embed_one, queries, count):
    for q in queries[:20]:
        embed_one(q)
    out = []
    for i in range(count):
        start = time.perf_counter()
        embed_one(queries[i % len(queries)])
        out.append((time.perf_counter() - start) * 1e6)
    out.sort()
    return out[len(out) // 2], out[int(0.99 * (len(out) - 1))]


def mean_pooled(hidden, mask):
    mask = mask[..., None].astype(hidden.dtype)
    pooled = (hidden * mask).sum(1) / np.clip(mask.sum(1), 1, None)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def export_onnx(model, tokenizer, path):
    """The legacy TorchScript exporter: it handles transformers' BERT on every torch the GPU machine has had."""
    sample = tokenizer(["an example to trace", "and another"], padding=True, return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]
    dynamic = {n: {0: "batch", 1: "sequence"} for n in names}
    dynamic["last_hidden_state"] = {0: "batch", 1: "sequence"}

    class Hidden(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *inputs):
            return self.inner(**dict(zip(names, inputs))).last_hidden_state

    torch.onnx.export(Hidden(model), tuple(sample[n] for n in names), path, input_names=names,
                      output_names=["last_hidden_state"], dynamic_axes=dynamic, opset_version=17, dynamo=False)
    return names


def cosines(ours, reference):
    return (ours * reference).sum(1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(reference, axis=1))


def texts_file(args):
    texts = [json.loads(line)["text"] for line in open(args.texts)]
    st = SentenceTransformer(args.model, device="cpu").float()
    start = time.perf_counter()
    reference = st.encode(texts, batch_size=args.batch, normalize_embeddings=True, convert_to_numpy=True)
    seconds = time.perf_counter() - start
    row = {"figure": "texts_file", "peer": "SentenceTransformer.encode f32 (cpu)", "texts": len(texts),
           "encode_s": seconds, "sentences_per_s": len(texts) / seconds}
    if args.accel_texts_embeddings:
        cosine = cosines(np.load(args.accel_texts_embeddings), reference)
        row.update(min_cosine=float(cosine.min()), below_0_99999=int((cosine < 0.99999).sum()))
    emit(row)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--trace")
    parser.add_argument("--texts", help="a JSONL file of texts: the texts_file figure only")
    parser.add_argument("--accel-texts-embeddings", help="accel embed -o X.npy of --texts")
    parser.add_argument("--onnx", help="where to write the exported model (with --trace)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--batch", type=int, default=32, help="sentence-transformers' default")
    parser.add_argument("--accel-embeddings", help="embed_bench --embeddings output: checked against f32")
    args = parser.parse_args()
    if args.texts:
        return texts_file(args)
    if not args.trace or not args.onnx:
        parser.error("--trace and --onnx, or --texts")

    rows = [json.loads(line) for line in open(args.trace)]
    passages = [r["text"] for r in rows if r["kind"] == "passage"]
    queries = [r["text"] for r in rows if r["kind"] == "query"]
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModel.from_pretrained(args.model, torch_dtype=torch.float32).eval()

    order = sorted(range(len(passages)), key=lambda i: len(passages[i]))
    batches, tokens = [], 0
    for first in range(0, len(order), args.batch):
        texts = [passages[i] for i in order[first:first + args.batch]]
        batch = tokenizer(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
        tokens += int(batch["attention_mask"].sum())
        batches.append(batch)

    with torch.inference_mode():
        def run_torch():
            for b in batches:
                out = model(**b).last_hidden_state
                mask = b["attention_mask"].unsqueeze(-1).to(out.dtype)
                F.normalize((out * mask).sum(1) / mask.sum(1).clamp(min=1), dim=-1)

        run_torch()
        seconds = timed(run_torch, args.repeats)
        emit({"figure": "throughput_tokens_ready", "peer": "transformers f32 eager (cpu)", "tokens": tokens,
              "tokens_per_s": tokens / seconds})
        names = export_onnx(model, tokenizer, args.onnx)

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = os.cpu_count()
    session = onnxruntime.InferenceSession(args.onnx, options, providers=["CPUExecutionProvider"])
    feeds = [{n: b[n].numpy() for n in names} for b in batches]

    def run_onnx():
        for feed in feeds:
            mean_pooled(session.run(None, feed)[0], feed["attention_mask"])

    run_onnx()
    seconds = timed(run_onnx, args.repeats)
    emit({"figure": "throughput_tokens_ready", "peer": "onnxruntime f32 (cpu)", "tokens": tokens,
          "tokens_per_s": tokens / seconds})

    st = SentenceTransformer(args.model, device="cpu").float()
    st.encode(passages[:64], batch_size=args.batch)
    seconds = timed(lambda: st.encode(passages, batch_size=args.batch), args.repeats)
    emit({"figure": "end_to_end", "peer": "SentenceTransformer.encode f32 (cpu)",
          "sentences_per_s": len(passages) / seconds, "tokens_per_s": tokens / seconds})

    def onnx_one(q):
        feed = {n: v for n, v in tokenizer([q], truncation=True, max_length=256, return_tensors="np").items()
                if n in names}
        return mean_pooled(session.run(None, feed)[0], feed["attention_mask"])

    for name, one in (("SentenceTransformer.encode f32 (cpu)", lambda q: st.encode([q])),
                      ("onnxruntime f32 (cpu)", onnx_one)):
        p50, p99 = latencies(one, queries, args.queries)
        emit({"figure": "single_query", "peer": name, "p50_us": p50, "p99_us": p99})

    if args.accel_embeddings:
        texts = passages + queries
        ours = np.fromfile(args.accel_embeddings, dtype="<f4").reshape(len(texts), -1)
        reference = st.encode(texts, batch_size=args.batch, normalize_embeddings=True, convert_to_numpy=True)
        cosine = cosines(ours, reference)
        emit({"figure": "accuracy", "reference": "SentenceTransformer f32 (cpu)", "texts": len(texts),
              "min_cosine": float(cosine.min()), "mean_cosine": float(cosine.mean()),
              "below_0_99999": int((cosine < 0.99999).sum())})


if __name__ == "__main__":
    main()
