#!/usr/bin/env python3
"""The PyTorch side of the tensor benchmark (bench/libs/tensor/tensor_bench.cpp): torch.einsum on the same cases,
printing the same CSV rows (part,case,variant,metric,value) with variant "torch": one-at-a-time latency (median,
synchronised), pipelined time per call (many calls, one synchronisation) and the TFLOP/s that makes. Each call
returns a new tensor (torch.einsum takes no out=; the caching allocator makes that cheap).

  python3 bench/peers/torch_tensor.py
"""
import statistics
import sys
import time

import torch

ATTENTION = dict(b=8, h=16, q=1024, k=1024, d=64)
NETWORK = dict(a=24, b=24, c=24, d=24, e=24, f=24)
# Keep in step with cases() in bench/libs/tensor/tensor_bench.cpp.
CASES = [
    ("scores bhqd,bhkd->bhqk f16", "bhqd,bhkd->bhqk", ATTENTION, torch.float16),
    ("scores bhqd,bhkd->bhqk f32", "bhqd,bhkd->bhqk", ATTENTION, torch.float32),
    ("context bhqk,bhkd->bhqd f16", "bhqk,bhkd->bhqd", ATTENTION, torch.float16),
    ("projection bqhd,hde->bqhe bf16", "bqhd,hde->bqhe", dict(b=8, q=1024, h=16, d=64, e=64), torch.bfloat16),
    ("matmul ik,kj->ij 4096 f32", "ik,kj->ij", dict(i=4096, j=4096, k=4096), torch.float32),
    ("network abcd,cdef->abef f32", "abcd,cdef->abef", NETWORK, torch.float32),
    ("network abcd,cdef->faeb f64", "abcd,cdef->faeb", NETWORK, torch.float64),
    ("network aib,bjc->aijc f32", "aib,bjc->aijc", dict(a=64, i=16, b=64, j=16, c=64), torch.float32),
    ("small ij,jk->ik 64 f32", "ij,jk->ik", dict(i=64, j=64, k=64), torch.float32),
]


def row(case, metric, value):
    print(f"tensor,{case},torch,{metric},{value:.3f}", flush=True)


def main():
    torch.backends.cuda.matmul.allow_tf32 = False  # accel's f32 contractions compute in f32
    print(f"# torch {torch.__version__} on {torch.cuda.get_device_name()}", file=sys.stderr)
    for name, equation, sizes, dtype in CASES:
        inputs = equation.split("->")[0]
        operands = [torch.empty([sizes[m] for m in modes], device="cuda", dtype=dtype).uniform_(-1, 1)
                    for modes in inputs.split(",")]
        flops = 2.0
        for extent in sizes.values():
            flops *= extent

        def call():
            return torch.einsum(equation, *operands)

        call()
        torch.cuda.synchronize()
        times = []
        for _ in range(30):
            torch.cuda.synchronize()
            start = time.perf_counter()
            call()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e6)
        reps = 50
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(reps):
            call()
        torch.cuda.synchronize()
        per_call = (time.perf_counter() - start) * 1e6 / reps
        row(name, "latency_median_us", statistics.median(times))
        row(name, "pipelined_us", per_call)
        row(name, "tflops", flops / per_call / 1e6)


if __name__ == "__main__":
    main()
