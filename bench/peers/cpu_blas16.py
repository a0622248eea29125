#!/usr/bin/env python3
"""BLAS on 16-bit floats on the CPU device, beside what a user would call instead on the same cores: NumPy's float16
(its ops on float16 arrays) and, where it is installed, PyTorch's CPU float16 and bfloat16; accel's f32 (OpenBLAS)
beside them as the floor. One JSON line per case: routine, dtype, n, variant, ms (median of the repetitions).

  axpy    y += alpha x over n elements            (NumPy: y += alpha * x; PyTorch: y.add_(x, alpha=alpha))
  dot     xᵀ y                                    (np.dot; torch.dot)
  asum    Σ |x_i|                                 (np.abs(x).sum(); torch.linalg.vector_norm(x, 1))
  nrm2    ‖x‖₂                                    (np.linalg.norm; torch.linalg.vector_norm(x))
  gemv    y = A x, A m x m column-major            (a @ x on A's row-major transpose; torch.mv)
  gemvt   y = Aᵀ x, the walk a row-major a @ x makes (the same)

  build/python-venv/bin/python bench/peers/cpu_blas16.py [vector length, default 4194304] [matrix order, default 4096]
"""
import json
import statistics
import sys
import time

import numpy as np

import accel

try:
    import torch
except ImportError:
    torch = None


def median_ms(fn, reps=7):
    fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def emit(routine, dtype, n, variant, ms):
    print(json.dumps({"bench": "cpu_blas16", "routine": routine, "dtype": dtype, "n": n, "variant": variant,
                      "ms": round(ms, 3)}), flush=True)


def accel_cases(device, rng, dtype, n, order):
    x = device.upload(rng.standard_normal(n).astype(dtype))
    y = device.upload(rng.standard_normal(n).astype(dtype))
    r = device.upload(np.zeros(1, dtype))
    a = device.upload(rng.standard_normal((order, order)).astype(dtype))
    u = device.upload(rng.standard_normal(order).astype(dtype))
    v = device.upload(np.zeros(order, dtype))
    return {
        "axpy": (n, lambda: device.axpy(x, y, alpha=0.5).result()),
        "dot": (n, lambda: device.dot(x, y, r).result()),
        "asum": (n, lambda: device.asum(x, r).result()),
        "nrm2": (n, lambda: device.nrm2(x, r).result()),
        "gemv": (order, lambda: device.gemv(a, u, v).result()),
        "gemvt": (order, lambda: device.gemv(a, u, v, transpose="transpose").result()),
    }


def numpy_cases(rng, n, order):
    x, y = rng.standard_normal(n).astype(np.float16), rng.standard_normal(n).astype(np.float16)
    a, u = rng.standard_normal((order, order)).astype(np.float16), rng.standard_normal(order).astype(np.float16)
    alpha = np.float16(0.5)

    def axpy():
        y[:] += alpha * x

    return {
        "axpy": (n, axpy),
        "dot": (n, lambda: np.dot(x, y)),
        "asum": (n, lambda: np.abs(x).sum()),
        "nrm2": (n, lambda: np.linalg.norm(x)),
        "gemv": (order, lambda: a.T @ u),
        "gemvt": (order, lambda: a @ u),
    }


def torch_cases(dtype, n, order):
    x, y = torch.randn(n, dtype=dtype), torch.randn(n, dtype=dtype)
    a, u, v = torch.randn(order, order, dtype=dtype), torch.randn(order, dtype=dtype), torch.empty(order, dtype=dtype)
    r = torch.empty((), dtype=dtype)
    return {
        "axpy": (n, lambda: y.add_(x, alpha=0.5)),
        "dot": (n, lambda: torch.dot(x, y, out=r)),
        "asum": (n, lambda: torch.linalg.vector_norm(x, 1, out=r)),
        "nrm2": (n, lambda: torch.linalg.vector_norm(x, out=r)),
        "gemv": (order, lambda: torch.mv(a.T, u, out=v)),
        "gemvt": (order, lambda: torch.mv(a, u, out=v)),
    }


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 22
    order = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    rng = np.random.default_rng(0)
    np.seterr(all="ignore")  # NumPy sums float16 in float16: its dot and norm overflow at these lengths
    device = accel.Device.open("cpu")
    try:
        for dtype, name in ((np.float16, "f16"), (np.float32, "f32")):
            for routine, (size, fn) in accel_cases(device, rng, dtype, n, order).items():
                emit(routine, name, size, "accel", median_ms(fn))
    finally:
        device.close()
    for routine, (size, fn) in numpy_cases(rng, n, order).items():
        emit(routine, "f16", size, "numpy", median_ms(fn))
    if torch is not None:
        for dtype, name in ((torch.float16, "f16"), (torch.bfloat16, "bf16")):
            for routine, (size, fn) in torch_cases(dtype, n, order).items():
                emit(routine, name, size, "torch", median_ms(fn))


if __name__ == "__main__":
    main()
