#!/usr/bin/env python3
"""accel from Python against PyTorch on the same GPU (issue 44's proofs), one JSON line per figure:

  call_overhead  per-call host time of a small GEMM (64x64x64 f32) and a small FFT (c2c, 4096 complex64) on the same
                 torch tensors: torch.matmul(out=) / torch.fft.fft(out=) against Device.gemm / Device.fft on buffers
                 that wrap the tensors (accel.from_dlpack, no copies). `host_us`: the time to issue one call, `calls`
                 of them back to back without waiting (the GPU work drains after the clock stops); `sync_us`: one
                 call and its completion (torch.cuda.synchronize / Future.result) at a time.
  embed          accel.embed.Model.encode against SentenceTransformer.encode (f16, and f32 for accuracy) on the same
                 texts, batch 128: sentences per second each, and the cosine of each accel row to f32
                 sentence-transformers' (min, mean, how many below 0.999). Needs --model (or ACCEL_MODEL_DIR) and
                 sentence-transformers; without them a line says what was skipped.

  PYTHONPATH=<gpu-python bundle> python3 bench/peers/python_overhead.py [--model DIR] [--calls N] [--texts N]
"""
import argparse
import os
import random
import time

import numpy as np
import torch

import accel
from gpu_figures import emit, timed


def per_call(issue, finish, calls):
    """Microseconds per call: issuing `calls` back to back (then finishing them, unclocked), and call+finish each."""
    for _ in range(10):
        finish(issue())
    start = time.perf_counter()
    pending = [issue() for _ in range(calls)]
    host = (time.perf_counter() - start) / calls
    for item in pending:
        finish(item)
    start = time.perf_counter()
    for _ in range(calls // 4):
        finish(issue())
    sync = (time.perf_counter() - start) / (calls // 4)
    return host * 1e6, sync * 1e6


def call_overhead(device, calls):
    def cuda_sync(_):
        torch.cuda.synchronize()

    def wait(future):
        future.result()

    size = 64
    a, b, c = (torch.randn(size, size, device="cuda") for _ in range(3))
    ba, bb, bc = (accel.from_dlpack(t, device=device) for t in (a, b, c))
    torch.cuda.synchronize()
    rows = [("torch.matmul", lambda: torch.matmul(a, b, out=c), cuda_sync),
            ("accel gemm", lambda: device.gemm(ba, bb, bc), wait)]
    device.gemm(ba, bb, bc).result()
    # Row-major buffers: C = A @ B, the same product torch computes.
    np.testing.assert_allclose(bc.numpy(), (a @ b).cpu().numpy(), rtol=1e-3, atol=1e-3)
    for peer, issue, finish in rows:
        host, sync = per_call(issue, finish, calls)
        emit({"figure": "call_overhead", "op": f"gemm {size}x{size}x{size} f32", "peer": peer, "calls": calls,
              "host_us": host, "sync_us": sync})

    length = 4096
    x = torch.randn(length, dtype=torch.complex64, device="cuda")
    y = torch.empty_like(x)
    bx, by = accel.from_dlpack(x, device=device), accel.from_dlpack(y, device=device)
    torch.cuda.synchronize()
    device.fft(bx, by).result()
    np.testing.assert_allclose(by.numpy(), torch.fft.fft(x).cpu().numpy(), rtol=1e-3, atol=1e-2)
    rows = [("torch.fft.fft", lambda: torch.fft.fft(x, out=y), cuda_sync), ("accel fft", lambda: device.fft(bx, by), wait)]
    for peer, issue, finish in rows:
        host, sync = per_call(issue, finish, calls)
        emit({"figure": "call_overhead", "op": f"fft c2c {length} complex64", "peer": peer, "calls": calls,
              "host_us": host, "sync_us": sync})


def texts(count):
    words = ("the a quick slow brown market cat report engine river model query data results shows fell rose "
             "under over across into after before green old new network city policy water light signal").split()
    rng = random.Random(44)
    return [" ".join(rng.choice(words) for _ in range(rng.randint(4, 60))) for _ in range(count)]


def embed(device, folder, count, batch, repeats):
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as error:
        emit({"figure": "embed", "skipped": f"no sentence-transformers: {error}"})
        return
    sentences = texts(count)
    model = accel.embed.Model(folder, device=device)
    model.encode(sentences[:batch], batch_size=batch)
    seconds = timed(lambda: model.encode(sentences, batch_size=batch), repeats)
    ours = model.encode(sentences, batch_size=batch, normalize_embeddings=True)
    emit({"figure": "embed", "peer": "accel.embed.Model.encode", "sentences": count, "batch": batch,
          "sentences_per_s": count / seconds})
    peer = SentenceTransformer(folder, device="cuda")
    reference = peer.encode(sentences, batch_size=batch, normalize_embeddings=True)  # f32
    peer.half()
    peer.encode(sentences[:batch], batch_size=batch)
    seconds = timed(lambda: peer.encode(sentences, batch_size=batch), repeats)
    emit({"figure": "embed", "peer": "SentenceTransformer.encode f16", "sentences": count, "batch": batch,
          "sentences_per_s": count / seconds})
    cosine = np.sum(ours * reference, axis=1) / np.linalg.norm(reference, axis=1)
    emit({"figure": "embed_accuracy", "against": "SentenceTransformer.encode f32", "sentences": count,
          "cosine_min": float(cosine.min()), "cosine_mean": float(cosine.mean()),
          "below_0.999": int((cosine < 0.999).sum())})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=os.environ.get("ACCEL_MODEL_DIR"))
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--texts", type=int, default=2048)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with accel.Device.open("cuda") as device:
        call_overhead(device, args.calls)
        if args.model:
            embed(device, args.model, args.texts, args.batch, args.repeats)
        else:
            emit({"figure": "embed", "skipped": "no --model and no ACCEL_MODEL_DIR"})


if __name__ == "__main__":
    main()
