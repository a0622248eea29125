"""The PyTorch peer of bench/libs/blas/cuda_gemm_bench.cpp: the same GEMMs through `a @ b` on the same GPU.

Prints CSV rows part,case,variant,metric,value with variant "pytorch". Timing as in the C++ benchmark: wall
clock around the host-visible work (one-at-a-time: op + synchronize; pipelined: N ops then one synchronize).
"""
import statistics
import sys
import time

import torch


def row(part, case, metric, value):
    print(f"{part},{case},pytorch,{metric},{value:.3f}", flush=True)


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def small():
    # f32 as PyTorch runs it by default: full f32, TF32 off for matmuls.
    cases = ((64, "bf16"), (256, "bf16"), (1024, "bf16"), (64, "f32"), (128, "f32"))
    for size, label in cases:
        dtype = torch.bfloat16 if label == "bf16" else torch.float32
        a = torch.rand(size, size, device="cuda", dtype=dtype) * 2 - 1
        b = torch.rand(size, size, device="cuda", dtype=dtype) * 2 - 1
        latencies = []
        for i in range(200 + 3000):
            t0 = time.perf_counter()
            a @ b
            torch.cuda.synchronize()
            if i >= 200:
                latencies.append((time.perf_counter() - t0) * 1e6)
        case = f"{size}^3 {label}"
        row("small", case, "latency_median_us", percentile(latencies, 0.5))
        row("small", case, "latency_p99_us", percentile(latencies, 0.99))
        per_gemm = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(3000):
                a @ b
            torch.cuda.synchronize()
            per_gemm.append((time.perf_counter() - t0) * 1e6 / 3000)
        row("small", case, "pipelined_us_per_gemm", statistics.median(per_gemm))


def large():
    torch.backends.cuda.matmul.allow_tf32 = True
    for size in (4096, 8192):
        reps = 100 if size == 4096 else 20
        for label in ("bf16", "f16", "tf32", "fp8_e4m3"):
            dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "tf32": torch.float32,
                     "fp8_e4m3": torch.bfloat16}[label]
            a = (torch.rand(size, size, device="cuda", dtype=dtype) * 2 - 1)
            b = (torch.rand(size, size, device="cuda", dtype=dtype) * 2 - 1)
            if label == "fp8_e4m3":
                a8 = a.to(torch.float8_e4m3fn)
                b8 = b.to(torch.float8_e4m3fn)  # stored n x k; b8.t() is the column-major k x n operand
                one = torch.tensor(1.0, device="cuda")
                op = lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            else:
                op = lambda: a @ b
            for _ in range(5):
                op()
            torch.cuda.synchronize()
            tflops = []
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(reps):
                    op()
                torch.cuda.synchronize()
                tflops.append(2 * size**3 * reps / (time.perf_counter() - t0) / 1e12)
            row("large", f"{size}^3 {label}", "tflops", statistics.median(tflops))


if __name__ == "__main__":
    parts = sys.argv[1] if len(sys.argv) > 1 else "small,large"
    print(f"# torch {torch.__version__} on {torch.cuda.get_device_name()}", file=sys.stderr)
    if "small" in parts:
        small()
    if "large" in parts:
        large()
