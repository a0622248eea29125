#!/usr/bin/env python3
"""The PyTorch side of blas_bench (bench/libs/blas/blas_bench.cpp): what a user would call instead, on the same GPU,
with the same shapes, one JSON line per case with blas_bench's keys (variant "torch"). Each call writes into a tensor
made once (out=), as accel's requests write into their buffers:

  gemv          torch.mv(A, x, out=y), n x n A, f32
  gemvt         the same torch.mv: blas_bench's gemvt walks its column-major A as torch.mv walks a row-major one
  gemv_batched  torch.matmul(A, x, out=y), 1000 x (32 x 32) and 64 x (256 x 256) A, x of one column, f32
  trsm          torch.linalg.solve_triangular(L, B, upper=False, out=X), n x n L (the identity, as blas_bench's) and B,
                f32 and f64
  trsm_right    the same on the right: solve_triangular(L, B, upper=False, left=False, out=X), X L = B
  syrk          torch.mm(A, A.T, out=C), n x n, f32: PyTorch has no syrk, so this computes both triangles
  dot           torch.dot(x, y, out=r) over n² elements, f32 ("n" is the element count, as blas_bench prints it)

and the rest of BLAS (blas_bench_routines.cpp), f32, the nearest PyTorch op where PyTorch has no exact one; level 1
over n² elements ("n" printed is the element count), the others n x n:

  copy          y.copy_(x)
  swap          t.copy_(x); x.copy_(y); y.copy_(t): three copies through a temporary made once (PyTorch has no swap
                of contents)
  rot           x, y = c x + s y, c y - s x, c = cos 0.3, s = sin 0.3: torch.mul(x, c, out=x2).add_(y, alpha=s) and
                torch.mul(y, c, out=y2).sub_(x, alpha=s), then the pairs trade places for the next call (four
                elementwise kernels; BLAS's rot is one)
  iamin         torch.abs(x, out=ax); torch.argmin(ax, out=i): two kernels (0-based where BLAS counts from 1)
  ger           A.addr_(x, y): A = x yᵀ + A in place
  trsv          torch.linalg.solve_triangular(L, b, upper=False, out=x), b and x one column, L the identity (as
                blas_bench's)
  symv          torch.mv(A, x, out=y) on the full symmetric A (accel and cuBLAS read one triangle)
  symm          torch.mm(A, B, out=C) on the full symmetric A
  trmm          torch.mm(L, B, out=C), L = torch.tril of a random matrix, made once: into another tensor, where
                accel's and cuBLAS's trmm write B in place
  geam          torch.add(A, B.T, alpha=0.5, out=C): C = A + 0.5 Bᵀ in one kernel

and on 16-bit floats (blas_bench_narrow.cpp), each at float16 and bfloat16:

  axpy16        y.add_(x, alpha=-0.75) over n² elements
  dot16         torch.dot(x, y, out=r) over n² elements
  asum16        torch.linalg.vector_norm(x, 1, out=r) over n² elements (one reduction kernel)
  gemv16        torch.mv(A, x, out=y), n x n A
  gemv16t       the same torch.mv: blas_bench's gemv16t walks its column-major A as torch.mv walks a row-major one

latency_us: one call and torch.cuda.synchronize, the median of as many as fit in about a quarter of a second (20 to
3000); pipelined_us: per call, that many calls and one synchronisation, the median of five such runs.

  python3 bench/peers/torch_blas.py [routines, comma-separated, default all twenty-two above]
                                    [sizes, comma-separated n in [1, 46340], default 256,1024,4096]

gemv_batched has its two shapes of its own; every other routine runs at every size. An unknown routine or a bad size
is refused (exit 2) before anything runs, as blas_bench refuses them.
"""
import json
import math
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


def gemv(n, batch, routine="gemv"):
    if batch == 1:
        a, x, y = rand(n, n), rand(n), rand(n)
        measure(routine, "f32", n, 1, lambda: torch.mv(a, x, out=y))
    else:
        a, x, y = rand(batch, n, n), rand(batch, n, 1), rand(batch, n, 1)
        measure("gemv_batched", "f32", n, batch, lambda: torch.matmul(a, x, out=y))


def trsm(n, dtype, name, left=True):
    l, b, x = torch.eye(n, dtype=dtype, device="cuda"), rand(n, n, dtype=dtype), rand(n, n, dtype=dtype)
    measure("trsm" if left else "trsm_right", name, n, 1,
            lambda: torch.linalg.solve_triangular(l, b, upper=False, left=left, out=x))


def syrk(n):
    a, c = rand(n, n), rand(n, n)
    measure("syrk", "f32", n, 1, lambda: torch.mm(a, a.T, out=c))


def dot(n):
    x, y, r = rand(n * n), rand(n * n), rand(())
    measure("dot", "f32", n * n, 1, lambda: torch.dot(x, y, out=r))


def level1(routine, n):
    count = n * n
    x, y = rand(count), rand(count)
    if routine == "copy":
        measure("copy", "f32", count, 1, lambda: y.copy_(x))
    elif routine == "swap":
        t = torch.empty_like(x)

        def swap():
            t.copy_(x)
            x.copy_(y)
            y.copy_(t)

        measure("swap", "f32", count, 1, swap)
    elif routine == "rot":
        c, s = math.cos(0.3), math.sin(0.3)
        pairs = [x, y, torch.empty_like(x), torch.empty_like(y)]

        def rot():
            x0, y0, x1, y1 = pairs
            torch.mul(x0, c, out=x1).add_(y0, alpha=s)
            torch.mul(y0, c, out=y1).sub_(x0, alpha=s)
            pairs[:] = [x1, y1, x0, y0]

        measure("rot", "f32", count, 1, rot)
    elif routine == "iamin":
        ax, i = torch.empty_like(x), torch.empty((), dtype=torch.int64, device="cuda")

        def iamin():
            torch.abs(x, out=ax)
            torch.argmin(ax, out=i)

        measure("iamin", "f32", count, 1, iamin)


def level2(routine, n):
    if routine == "ger":
        a, x, y = rand(n, n), rand(n), rand(n)
        measure("ger", "f32", n, 1, lambda: a.addr_(x, y))
    elif routine == "trsv":
        l, b, x = torch.eye(n, device="cuda"), rand(n, 1), rand(n, 1)
        measure("trsv", "f32", n, 1, lambda: torch.linalg.solve_triangular(l, b, upper=False, out=x))
    elif routine == "symv":
        a, x, y = rand(n, n), rand(n), rand(n)
        a = (a + a.T) / 2
        measure("symv", "f32", n, 1, lambda: torch.mv(a, x, out=y))


def level3(routine, n):
    a, b, c = rand(n, n), rand(n, n), rand(n, n)
    if routine == "symm":
        a = (a + a.T) / 2
        measure("symm", "f32", n, 1, lambda: torch.mm(a, b, out=c))
    elif routine == "trmm":
        l = torch.tril(a)
        measure("trmm", "f32", n, 1, lambda: torch.mm(l, b, out=c))
    elif routine == "geam":
        measure("geam", "f32", n, 1, lambda: torch.add(a, b.T, alpha=0.5, out=c))


def narrow(routine, n):
    for dtype, name in ((torch.float16, "f16"), (torch.bfloat16, "bf16")):
        if routine == "axpy16":
            x, y = rand(n * n, dtype=dtype), rand(n * n, dtype=dtype)
            measure("axpy16", name, n * n, 1, lambda: y.add_(x, alpha=-0.75))
        elif routine == "dot16":
            x, y, r = rand(n * n, dtype=dtype), rand(n * n, dtype=dtype), rand((), dtype=dtype)
            measure("dot16", name, n * n, 1, lambda: torch.dot(x, y, out=r))
        elif routine == "asum16":
            x, r = rand(n * n, dtype=dtype), rand((), dtype=dtype)
            measure("asum16", name, n * n, 1, lambda: torch.linalg.vector_norm(x, 1, out=r))
        elif routine in ("gemv16", "gemv16t"):
            a, x, y = rand(n, n, dtype=dtype), rand(n, dtype=dtype), rand(n, dtype=dtype)
            measure(routine, name, n, 1, lambda: torch.mv(a, x, out=y))


FIRST = "gemv,gemvt,gemv_batched,trsm,trsm_right,syrk,dot"
ADDED = {"copy": level1, "swap": level1, "rot": level1, "iamin": level1, "ger": level2, "trsv": level2,
         "symv": level2, "symm": level3, "trmm": level3, "geam": level3,
         "axpy16": narrow, "dot16": narrow, "asum16": narrow, "gemv16": narrow, "gemv16t": narrow}
ALL = FIRST + "," + ",".join(ADDED)


def parse(argv):
    """The routines and sizes of the command line, or a message saying what is wrong with it."""
    if len(argv) > 2 or (argv and argv[0] in ("-h", "--help")):
        return None, None, f"usage: torch_blas.py [routines, default {ALL}] [sizes, default 256,1024,4096]"
    routines = [r for r in (argv[0] if argv else ALL).split(",") if r]
    if not routines:
        return None, None, "torch_blas.py: no routines"
    for routine in routines:
        if routine not in ALL.split(","):
            return None, None, f'torch_blas.py: unknown routine "{routine}" (known: {ALL})'
    sizes = []
    for size in [s for s in (argv[1] if len(argv) > 1 else "256,1024,4096").split(",") if s]:
        if not (size.isascii() and size.isdigit()) or not 1 <= int(size) <= 46340:
            return None, None, f'torch_blas.py: size "{size}" is not an integer in [1, 46340]'
        sizes.append(int(size))
    if not sizes:
        return None, None, "torch_blas.py: no sizes"
    return routines, sizes, None


def main():
    routines, sizes, error = parse(sys.argv[1:])
    if error:
        print(error, file=sys.stderr)
        sys.exit(2)
    torch.backends.cuda.matmul.allow_tf32 = False  # accel's and cuBLAS's f32 are full f32
    for routine in routines:
        if routine == "gemv_batched":
            gemv(32, 1000)
            gemv(256, 64)
            continue
        for n in sizes:
            if routine in ("gemv", "gemvt"):
                gemv(n, 1, routine)
            elif routine in ("trsm", "trsm_right"):
                trsm(n, torch.float32, "f32", routine == "trsm")
                trsm(n, torch.float64, "f64", routine == "trsm")
            elif routine == "syrk":
                syrk(n)
            elif routine == "dot":
                dot(n)
            else:
                ADDED[routine](routine, n)


if __name__ == "__main__":
    main()
