#!/usr/bin/env python3
"""The PyTorch side of recording_bench (bench/device/recording_bench.cpp): the same two workloads on the same GPU, sent
one by one in eager mode and replayed as a torch.cuda.CUDAGraph.
  chain     twenty GEMMs X_{i+1} = (1/n) W X_i over n x n f32 matrices (W and every X_i filled as recording_bench
            fills them), then a batched r2c FFT of the rows of X_20;
  pipeline  X (n x n) copied from pinned host memory, r2c FFT of its rows, the unnormalised c2r back (n X, as cuFFT's
            c2r), C = Y W, C scaled by 1/n, C copied into pinned host memory (non_blocking copies).
Every call writes into a tensor made once (addmm_ with beta 0, rfft/irfft/mm with out=), as accel's requests write
into their buffers; TF32 is off (accel's f32 GEMM is full f32).

Variants, as recording_bench's (the chain timed `iterations` times after 20 warm-ups; end-to-end µs per chain, p50
and p90, and host_p50_us, the host µs spent sending it):
  torch_eager         the 21 calls back to back, then torch.cuda.synchronize (the stream pipelines them);
  torch_eager_waited  torch.cuda.synchronize after each call;
  torch_graph         one CUDAGraph.replay() of the 21 calls captured once, then torch.cuda.synchronize.

One JSON line per variant and metric with the keys of recording_bench's CSV rows (part, case, variant, metric,
value), plus n, the GPU's name and torch's version. The graph's replay is checked against eager execution first.

  python3 bench/peers/torch_recording.py [--size N] [--iterations N] [--workloads chain,pipeline]
  (defaults: 64, 200 and both, as recording_bench)
"""
import argparse
import json
import time

import torch

GEMMS = 20
WARMUPS = 20


def fill(n):
    # recording_bench's values: ((i * 7919) % 1000) / 1000 - 0.5, row-major.
    i = torch.arange(n * n, dtype=torch.int64)
    return (((i * 7919) % 1000).to(torch.float32) / 1000.0 - 0.5).reshape(n, n).cuda()


class Chain:
    def __init__(self, n):
        self.n = n
        self.w = fill(n)
        self.x = [fill(n) for _ in range(GEMMS + 1)]
        self.spectrum = torch.empty(n, n // 2 + 1, dtype=torch.complex64, device="cuda")

    def gemm(self, i):
        self.x[i + 1].addmm_(self.w, self.x[i], beta=0.0, alpha=1.0 / self.n)

    def fft(self):
        torch.fft.rfft(self.x[GEMMS], dim=1, out=self.spectrum)

    def send(self, wait_each=False):
        for i in range(GEMMS):
            self.gemm(i)
            if wait_each:
                torch.cuda.synchronize()
        self.fft()


class Pipeline:
    def __init__(self, chain):
        n = chain.n
        self.n = n
        self.w = chain.w
        self.host_in = fill(n).cpu().pin_memory()
        self.host_out = torch.empty(n, n, dtype=torch.float32).pin_memory()
        self.x = torch.empty(n, n, dtype=torch.float32, device="cuda")
        self.e = torch.empty(n, n // 2 + 1, dtype=torch.complex64, device="cuda")
        self.y = torch.empty(n, n, dtype=torch.float32, device="cuda")
        self.c = torch.empty(n, n, dtype=torch.float32, device="cuda")

    def send(self, wait_each=False):
        steps = (lambda: self.x.copy_(self.host_in, non_blocking=True),
                 lambda: torch.fft.rfft(self.x, dim=1, out=self.e),
                 lambda: torch.fft.irfft(self.e, n=self.n, dim=1, norm="forward", out=self.y),
                 lambda: torch.mm(self.y, self.w, out=self.c),
                 lambda: self.c.mul_(1.0 / self.n),
                 lambda: self.host_out.copy_(self.c, non_blocking=True))
        for step in steps:
            step()
            if wait_each:
                torch.cuda.synchronize()


def captured(work, result):
    """Runs `work` eagerly for the reference, captures it (on a side stream, after warm-up runs, as PyTorch asks)
    and checks one replay against the reference."""
    work.send()
    torch.cuda.synchronize()
    eager = result().clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            work.send()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        work.send()
    graph.replay()
    torch.cuda.synchronize()
    if not torch.allclose(result(), eager, rtol=1e-4, atol=1e-6):
        raise SystemExit("torch_recording: the graph's replay differs from eager execution")
    return graph


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(case, variant, iterations, send, n):
    total, host = [], []
    for i in range(WARMUPS + iterations):
        start = time.perf_counter()
        send()
        sent = time.perf_counter()
        torch.cuda.synchronize()
        if i < WARMUPS:
            continue
        total.append((time.perf_counter() - start) * 1e6)
        host.append((sent - start) * 1e6)
    for metric, value in (("p50_us", percentile(total, 0.5)), ("p90_us", percentile(total, 0.9)),
                          ("host_p50_us", percentile(host, 0.5))):
        print(json.dumps({"part": "recording", "case": case, "variant": variant, "metric": metric,
                          "value": round(value, 3), "n": n, "device": torch.cuda.get_device_name(),
                          "torch": torch.__version__}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--workloads", default="chain,pipeline", help="chain, pipeline or both (comma-separated)")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    n = args.size
    workloads = args.workloads.split(",")
    chain = Chain(n)
    device = torch.cuda.get_device_name()
    if "chain" in workloads:
        case = f"torch {device} 20 gemm {n}x{n} + fft"
        graph = captured(chain, lambda: chain.spectrum)
        measure(case, "torch_eager", args.iterations, chain.send, n)
        measure(case, "torch_eager_waited", args.iterations, lambda: chain.send(wait_each=True), n)
        measure(case, "torch_graph", args.iterations, graph.replay, n)
    if "pipeline" in workloads:
        pipeline = Pipeline(chain)
        case = f"torch {device} upload + fft + ifft + gemm + scal + download {n}x{n}"
        graph = captured(pipeline, lambda: pipeline.host_out)
        measure(case, "torch_eager", args.iterations, pipeline.send, n)
        measure(case, "torch_eager_waited", args.iterations, lambda: pipeline.send(wait_each=True), n)
        measure(case, "torch_graph", args.iterations, graph.replay, n)


if __name__ == "__main__":
    main()
