"""Raw cuBLAS trsm (through CuPy's bindings) on each of its left-side paths, beside PyTorch's solve_triangular.

PERFORMANCE.md §88 asks where PyTorch's f64 Trsm of order 4,096 gains its 13 % over cuBLAS's (side left, lower, no
transpose), the path accel takes for a column-major lower L: PyTorch hands cuBLAS its row-major L as column-major Lᵀ,
upper and transposed. This times cuBLAS's trsm on all four (fill, transpose) paths of the same n x n problem (L the
identity, which is both triangles, so that every path solves the same system; cuBLAS's time does not depend on the
values), and `torch.linalg.solve_triangular` on it. Prints one JSON line per case: µs a call, the median of 5 runs of
20 calls, each run timed by CUDA events.

    python3 bench/peers/cublas_trsm_paths.py [sizes, default 2048,4096]
"""
import json
import statistics
import sys

import cupy
import numpy
import torch
from cupy_backends.cuda.libs import cublas

SIDE_LEFT = 0
FILLS = {"lower": 0, "upper": 1}
OPS = {"none": 0, "transpose": 1}
DIAG_NON_UNIT = 0
RUNS, CALLS = 5, 20


def timed(call):
    call()
    cupy.cuda.runtime.deviceSynchronize()
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    each = []
    for _ in range(RUNS):
        start.record()
        for _ in range(CALLS):
            call()
        stop.record()
        stop.synchronize()
        each.append(cupy.cuda.get_elapsed_time(start, stop) * 1000.0 / CALLS)
    return statistics.median(each)


def main():
    sizes = [int(s) for s in (sys.argv[1] if len(sys.argv) > 1 else "2048,4096").split(",") if s]
    handle = cupy.cuda.device.get_cublas_handle()
    for n in sizes:
        for name, dtype, routine in (("f32", numpy.float32, cublas.strsm), ("f64", numpy.float64, cublas.dtrsm)):
            a = cupy.asfortranarray(cupy.eye(n, dtype=dtype))
            b = cupy.asfortranarray(cupy.random.rand(n, n).astype(dtype))
            one = numpy.ones(1, dtype=dtype)
            for fill, fill_mode in FILLS.items():
                for op, op_mode in OPS.items():
                    def call():
                        routine(handle, SIDE_LEFT, fill_mode, op_mode, DIAG_NON_UNIT, n, n, one.ctypes.data,
                                a.data.ptr, n, b.data.ptr, n)
                    print(json.dumps({"bench": "cublas_trsm_paths", "dtype": name, "n": n, "variant": "cublas",
                                      "fill": fill, "transpose": op, "us": round(timed(call), 1)}), flush=True)
            tdtype = torch.float32 if name == "f32" else torch.float64
            l, tb = torch.eye(n, dtype=tdtype, device="cuda"), torch.rand(n, n, dtype=tdtype, device="cuda")
            x = torch.empty_like(tb)
            torch_us = timed(lambda: torch.linalg.solve_triangular(l, tb, upper=False, out=x))
            print(json.dumps({"bench": "cublas_trsm_paths", "dtype": name, "n": n, "variant": "torch",
                              "us": round(torch_us, 1)}), flush=True)


if __name__ == "__main__":
    main()
