#!/usr/bin/env python3
"""The PyTorch side of blas_bench (bench/libs/blas/blas_bench.cpp): what a user would call instead, on the same GPU,
with the same shapes, one JSON line per case with blas_bench's keys (variant "torch"). Each call writes into a tensor
made once (out=), as accel's requests write into their buffers:

  gemv          torch.mv(A, x, out=y), n x n A, f32
  gemv_batched  torch.matmul(A, x, out=y), 1000 x (32 x 32) and 64 x (256 x 256) A, x of one column, f32
  trsm          torch.linalg.solve_triangular(L, B, upper=False, out=X), n x n L (the identity, as blas_bench's) and B,
                f32 and f64
  syrk          torch.mm(A, A.T, out=C), n x n, f32: PyTorch has no syrk, so this computes both triangles
  dot           torch.dot(x, y, out=r) over n² elements, f32 ("n" is the element count, as blas_bench prints it)

latency_us: one call and torch.cuda.synchronize, the median of as many as fit in about a quarter of a second (20 to
3000); pipelined_us: per call, that many calls and one synchronisation, the median of five such runs.

  python3 bench/peers/torch_blas.py [routines, default gemv,gemv_batched,trsm,syrk,dot] [sizes, default 256,1024,4096]
"""
import json
import statistics
import sys
import time

import torch


def measure(routine, dtype_name, n, batch, fn):
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    one_us = max(1.0, (time.perf_counter() - start) * 1e6)
    reps = int(min(3000, max(20, 250000 / one_us)))
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e6)
    pipelined = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        pipelined.append((time.perf_counter() - start) * 1e6 / reps)
    print(json.dumps({"bench": "blas", "routine": routine, "dtype": dtype_name, "n": n, "batch": batch,
                      "variant": "torch", "latency_us": round(statistics.median(times), 2),
                      "pipelined_us": round(statistics.median(pipelined), 2), "reps": reps,
                      "device": torch.cuda.get_device_name(), "torch": torch.__version__}), flush=True)


def rand(*shape, dtype=torch.float32):
    return torch.rand(*shape, dtype=dtype, device="cuda") * 2 - 1


def gemv(n, batch):
    if batch == 1:
        a, x, y = rand(n, n), rand(n), rand(n)
        measure("gemv", "f32", n, 1, lambda: torch.mv(a, x, out=y))
    else:
        a, x, y = rand(batch, n, n), rand(batch, n, 1), rand(batch, n, 1)
        measure("gemv_batched", "f32", n, batch, lambda: torch.matmul(a, x, out=y))


def trsm(n, dtype, name):
    l, b, x = torch.eye(n, dtype=dtype, device="cuda"), rand(n, n, dtype=dtype), rand(n, n, dtype=dtype)
    measure("trsm", name, n, 1, lambda: torch.linalg.solve_triangular(l, b, upper=False, out=x))


def syrk(n):
    a, c = rand(n, n), rand(n, n)
    measure("syrk", "f32", n, 1, lambda: torch.mm(a, a.T, out=c))


def dot(n):
    x, y, r = rand(n * n), rand(n * n), rand(())
    measure("dot", "f32", n * n, 1, lambda: torch.dot(x, y, out=r))


def main():
    routines = (sys.argv[1] if len(sys.argv) > 1 else "gemv,gemv_batched,trsm,syrk,dot").split(",")
    sizes = [int(s) for s in (sys.argv[2] if len(sys.argv) > 2 else "256,1024,4096").split(",")]
    torch.backends.cuda.matmul.allow_tf32 = False  # accel's and cuBLAS's f32 are full f32
    for routine in routines:
        if routine == "gemv_batched":
            gemv(32, 1000)
            gemv(256, 64)
            continue
        for n in sizes:
            if routine == "gemv":
                gemv(n, 1)
            elif routine == "trsm":
                trsm(n, torch.float32, "f32")
                trsm(n, torch.float64, "f64")
            elif routine == "syrk":
                syrk(n)
            elif routine == "dot":
                dot(n)


if __name__ == "__main__":
    main()
