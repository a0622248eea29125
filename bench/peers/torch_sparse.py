#!/usr/bin/env python3
"""The PyTorch side of bench/libs/sparse/sparse_bench.cpp: torch.sparse CSR matmul on the same matrices (same
generator: sorted columns spread over each row with a random offset; f32 values, i32 indices), printing the same CSV
columns (part,case,variant,metric,value) with variant "torch":

  spmv/<density>   y = A @ x, A of ROWS x COLS at each density
  spmm32/<density> C = A @ B, B dense with 32 columns
  spmv/powerlaw    row degrees 1 + 1000 / rank^0.8, ROWS x ROWS
  spmv/zipf        row degrees 1 + ROWS / 2 / rank, ROWS x ROWS (a graph's hubs)
  spgemm/powerlaw  C = A @ A (cuSPARSE's SpGEMM under torch), A the power-law matrix
  spgemm/uniform8  C = A @ A, A of ROWS x ROWS with 8 entries per row

  python3 bench/peers/torch_sparse.py [rows, default 1048576] [cols, default 131072] [densities, default 1e-4,1e-3,1e-2]
"""
import statistics
import sys
import time

import torch


def row(case, metric, value):
    print(f"sparse,{case},torch,{metric},{value:.3f}", flush=True)


def make(rows, cols, degrees, gen):
    degrees = torch.clamp(degrees, max=cols)
    offsets = torch.zeros(rows + 1, dtype=torch.int64)
    offsets[1:] = torch.cumsum(degrees, 0)
    nnz = int(offsets[-1])
    row_of = torch.repeat_interleave(torch.arange(rows), degrees)
    t = torch.arange(nnz) - offsets[:-1][row_of]
    step = torch.clamp(cols // torch.clamp(degrees, min=1), min=1)[row_of]
    start = (torch.randint(0, 2**62, (rows,), generator=gen) % torch.clamp(cols // torch.clamp(degrees, min=1), min=1))[row_of]
    columns = (start + t * step).to(torch.int32)
    values = torch.rand(4, generator=gen)[(row_of + t) & 3] * 2 - 1
    return torch.sparse_csr_tensor(offsets.to(torch.int32), columns, values, (rows, cols), device="cuda")


def measure(case, fn, warmup=3, latency=20, pipelined=100, batches=5):
    """latency_us: one call and its synchronisation, median; pipelined_us: `pipelined` calls and one synchronisation,
    per call, the median of `batches` such pipelines (as sparse_bench_matrix.hpp's measure)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(latency):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e6)
    row(case, "latency_us", statistics.median(times))
    times = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(pipelined):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e6 / pipelined)
    row(case, "pipelined_us", statistics.median(times))


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 20
    cols = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 17
    densities = (sys.argv[3] if len(sys.argv) > 3 else "1e-4,1e-3,1e-2").split(",")
    gen = torch.Generator().manual_seed(42)
    print("part,case,variant,metric,value")
    for i, d in enumerate(densities):
        per_row = round(float(d) * cols)
        a = make(rows, cols, torch.full((rows,), per_row, dtype=torch.int64), gen)
        x = torch.zeros(cols, 1, device="cuda")
        measure(f"spmv/{d}", lambda: a @ x[:, 0])
        if i + 1 < len(densities):
            b = torch.zeros(cols, 32, device="cuda")
            measure(f"spmm32/{d}", lambda: a @ b)
        del a
        torch.cuda.empty_cache()
    rank = torch.randperm(rows, generator=gen) + 1
    degrees = 1 + (1000.0 / rank.double() ** 0.8).to(torch.int64)
    a = make(rows, rows, degrees, gen)
    x = torch.zeros(rows, device="cuda")
    measure("spmv/powerlaw", lambda: a @ x)
    # As sparse_bench's accel_product: the product alone, few repeats (each is a full SpGEMM).
    measure("spgemm/powerlaw", lambda: a @ a, warmup=1, latency=5, pipelined=10)
    del a
    torch.cuda.empty_cache()
    a = make(rows, rows, 1 + (rows // 2) // rank, gen)
    measure("spmv/zipf", lambda: a @ x)
    del a
    torch.cuda.empty_cache()
    a = make(rows, rows, torch.full((rows,), 8, dtype=torch.int64), gen)
    measure("spgemm/uniform8", lambda: a @ a, warmup=1, latency=5, pipelined=10)


if __name__ == "__main__":
    main()
