#!/usr/bin/env python3
"""The PyTorch side of the FFT, random-number and solver benchmarks (bench/libs/{fft,rand,solver}): what a user
would call instead, on the same GPU, one JSON line per case.

  fft     torch.fft.fft / rfft2 / fftn on the shapes of fft_bench: latency (one call, synchronised) and pipelined
          (as fft_bench: 50 to 3000 calls by size and one synchronisation, the median of five such pipelines) in
          microseconds; the f16 cases on torch.complex32 (chalf) tensors, which PyTorch's CUDA FFT takes for
          power-of-two sizes (cuFFT's half precision, as accel's)
  solver  torch.linalg.lu_factor / cholesky / eigh / qr / svd at n = 256, 1024, 4096 (svd to 1024), lu_factor,
          cholesky and qr batched 64 x (32 x 32) and 64 x (64 x 64) (small: these, with the three at 256, and
          nothing else), lu_factor of complex64 at n = 1024 and eigh of Hermitian complex64 at n = 256 and 1024
          (hermitian_eigen: only these): median microseconds per call (each call returns a new tensor, as accel's
          works on a copy);
          the peers of ormqr and gels at the same n (least_squares: only these): torch.ormqr (Qᵀ C, n x n C, from
          torch.geqrf of an n x n A made once) and torch.linalg.lstsq(driver="gels", the only driver on CUDA) of an
          n x n/2 A and one column B;
          the peers of gesvdj: torch.linalg.svd (full_matrices=False; default driver and driver="gesvdj") of
          uniform [-1, 1) matrices at n = 64, 128, 256, 512, 1024, 4096 and batched 4096 x (16 x 16),
          4096 x (32 x 32) and 64 x (32 x 32)
  rand    torch.rand / torch.randn into preallocated tensors (the Philox generator of CUDA tensors): GB/s written

  python3 bench/peers/torch_libs.py [fft,solver,rand] (or gesvdj, small, least_squares, hermitian_eigen: only
  those peers of the solver part)
"""
import json
import statistics
import sys
import time

import torch


def emit(row):
    row["device"] = torch.cuda.get_device_name()
    row["torch"] = torch.__version__
    print(json.dumps(row), flush=True)


def latency_us(fn, reps):
    for _ in range(3 if reps > 4 else 1):
        fn()
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def pipelined_us(fn, reps, trials=1):
    """Per call, `reps` calls and one synchronisation; the median of `trials` such pipelines."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(trials):
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e6 / reps)
    return statistics.median(times)


def fft_reps(points):
    """fft_bench's pipeline length for a transform of `points` elements (batch included)."""
    return 50 if points >= 1 << 24 else 300 if points >= 1 << 20 else 3000


def chalf(*shape):
    # torch.randn makes no complex32; the complex64 draw rounded to it is the same distribution at half precision.
    return torch.randn(*shape, dtype=torch.complex64, device="cuda").to(torch.complex32)


def fft():
    cases = [
        ("1d 4096 x1024 c2c f32", lambda: torch.randn(1024, 4096, dtype=torch.complex64, device="cuda"),
         lambda x: torch.fft.fft(x)),
        ("1d 4096 x1024 c2c f16", lambda: chalf(1024, 4096), lambda x: torch.fft.fft(x)),
        ("1d 2^16 x256 c2c f32", lambda: torch.randn(256, 1 << 16, dtype=torch.complex64, device="cuda"),
         lambda x: torch.fft.fft(x)),
        ("1d 2^16 x256 c2c f16", lambda: chalf(256, 1 << 16), lambda x: torch.fft.fft(x)),
        ("2d 1024^2 r2c f32", lambda: torch.randn(1024, 1024, dtype=torch.float32, device="cuda"),
         lambda x: torch.fft.rfft2(x)),
        ("3d 128^3 c2c f64", lambda: torch.randn(128, 128, 128, dtype=torch.complex128, device="cuda"),
         lambda x: torch.fft.fftn(x)),
        ("1d 2^20 x64 c2c f32", lambda: torch.randn(64, 1 << 20, dtype=torch.complex64, device="cuda"),
         lambda x: torch.fft.fft(x)),
        ("1d 256 x64 c2c f32", lambda: torch.randn(64, 256, dtype=torch.complex64, device="cuda"),
         lambda x: torch.fft.fft(x)),
    ]
    for name, make, run in cases:
        x = make()
        emit({"bench": "fft", "case": name, "peer": "torch.fft", "latency_median_us": latency_us(lambda: run(x), 50),
              "pipelined_us_per_fft": pipelined_us(lambda: run(x), fft_reps(x.numel()), trials=5)})


def spd(n, batch, dtype):
    a = torch.randn(*batch, n, n, dtype=dtype, device="cuda")
    return a @ a.mT + n * torch.eye(n, dtype=dtype, device="cuda")


def solver():
    routines = {
        "getrf": lambda a: torch.linalg.lu_factor(a),
        "potrf": lambda a: torch.linalg.cholesky(a),
        "syevd": lambda a: torch.linalg.eigh(a),
        "geqrf+orgqr": lambda a: torch.linalg.qr(a),
        "gesvd": lambda a: torch.linalg.svd(a, full_matrices=False),
    }
    for routine, fn in routines.items():
        for dtype, name in ((torch.float32, "f32"), (torch.float64, "f64")):
            for n in (256, 1024, 4096) if routine != "gesvd" else (256, 1024):
                if n == 256 and routine in ("getrf", "potrf", "geqrf+orgqr"):
                    continue  # small_factorisations() times them
                a = spd(n, (), dtype)
                reps = 200 if n == 256 else 40 if n == 1024 else 4
                emit({"bench": "solver", "routine": routine, "dtype": name, "n": n, "batch": 1,
                      "peer": "torch.linalg", "median_us": latency_us(lambda: fn(a), reps)})
    least_squares()
    small_factorisations()
    # solver_bench's getrf_c64: a complex64 matrix uniform in [-1, 1) in both parts, n = 1024.
    a = torch.complex(torch.rand(1024, 1024, device="cuda") * 2 - 1, torch.rand(1024, 1024, device="cuda") * 2 - 1)
    emit({"bench": "solver", "routine": "getrf", "dtype": "c64", "n": 1024, "batch": 1, "peer": "torch.linalg",
          "median_us": latency_us(lambda: torch.linalg.lu_factor(a), 40)})
    hermitian_eigen()
    gesvdj()


def hermitian_eigen():
    """solver_bench's syevd_c64: torch.linalg.eigh of a Hermitian complex64 matrix (uniform [-1, 1) in both parts,
    the lower triangle mirrored), n = 256 and 1024."""
    for n in (256, 1024):
        a = torch.complex(torch.rand(n, n, device="cuda") * 2 - 1, torch.rand(n, n, device="cuda") * 2 - 1)
        h = torch.tril(a, -1) + torch.tril(a, -1).mH + torch.diag(a.diagonal().real).to(torch.complex64)
        emit({"bench": "solver", "routine": "syevd", "dtype": "c64", "n": n, "batch": 1, "peer": "torch.linalg",
              "median_us": latency_us(lambda: torch.linalg.eigh(h), 40 if n == 1024 else 200)})


def least_squares():
    # The inputs of solver_bench's ormqr and gels: uniform [-1, 1), A factored once for ormqr.
    for dtype, name in ((torch.float32, "f32"), (torch.float64, "f64")):
        for n in (256, 1024, 4096):
            reps = 200 if n == 256 else 40 if n == 1024 else 10
            a = torch.rand(n, n, dtype=dtype, device="cuda") * 2 - 1
            qr, tau = torch.geqrf(a)
            c = torch.rand(n, n, dtype=dtype, device="cuda") * 2 - 1
            emit({"bench": "solver", "routine": "ormqr", "dtype": name, "n": n, "batch": 1, "peer": "torch.ormqr",
                  "median_us": latency_us(lambda: torch.ormqr(qr, tau, c, left=True, transpose=True), reps)})
            tall, b = a[:, : n // 2].contiguous(), a[:, n // 2 :].contiguous()[:, :1]
            emit({"bench": "solver", "routine": "gels", "dtype": name, "n": n, "batch": 1,
                  "peer": "torch.linalg.lstsq (driver=gels)",
                  "median_us": latency_us(lambda: torch.linalg.lstsq(tall, b, driver="gels"), reps)})


def gesvdj():
    cases = [(n, 1) for n in (64, 128, 256, 512, 1024, 4096)] + [(16, 4096), (32, 4096), (32, 64)]
    for dtype, name in ((torch.float32, "f32"), (torch.float64, "f64")):
        for n, batch in cases:
            shape = (batch, n, n) if batch > 1 else (n, n)
            a = torch.rand(*shape, dtype=dtype, device="cuda") * 2 - 1
            reps = 40 if n <= 256 else 10 if n <= 1024 else 3
            for peer, driver in (("torch.linalg", None), ("torch.linalg (driver=gesvdj)", "gesvdj")):
                emit({"bench": "solver", "routine": "gesvdj", "dtype": name, "n": n, "batch": batch, "peer": peer,
                      "median_us": latency_us(lambda: torch.linalg.svd(a, full_matrices=False, driver=driver), reps)})


def small_factorisations():
    """solver_bench's getrf, potrf and qr at 256, getrf_batched, potrf_batched and qr_batched: torch.linalg.lu_factor
    and torch.linalg.qr of uniform [-1, 1) matrices and torch.linalg.cholesky of spd() ones."""
    for dtype, name in ((torch.float32, "f32"), (torch.float64, "f64")):
        for n, batch in ((256, 1), (32, 64), (64, 64)):
            shape = ((batch,) if batch > 1 else ()) + (n, n)
            a = torch.rand(*shape, dtype=dtype, device="cuda") * 2 - 1
            emit({"bench": "solver", "routine": "getrf", "dtype": name, "n": n, "batch": batch,
                  "peer": "torch.linalg", "median_us": latency_us(lambda: torch.linalg.lu_factor(a), 200)})
            emit({"bench": "solver", "routine": "geqrf+orgqr", "dtype": name, "n": n, "batch": batch,
                  "peer": "torch.linalg", "median_us": latency_us(lambda: torch.linalg.qr(a), 200)})
            s = spd(n, (batch,) if batch > 1 else (), dtype)
            emit({"bench": "solver", "routine": "potrf", "dtype": name, "n": n, "batch": batch,
                  "peer": "torch.linalg", "median_us": latency_us(lambda: torch.linalg.cholesky(s), 200)})


def rand():
    for name, elements, fill in (("uniform 64M f32", 64 << 20, torch.Tensor.uniform_),
                                 ("normal 64M f32", 64 << 20, torch.Tensor.normal_),
                                 ("normal 256M f32", 256 << 20, torch.Tensor.normal_)):
        x = torch.empty(elements, dtype=torch.float32, device="cuda")
        us = pipelined_us(lambda: fill(x), 20)
        emit({"bench": "rand", "case": name, "peer": "torch (Philox)", "gb_per_s": elements * 4 / us / 1e3})


def main():
    parts = sys.argv[1].split(",") if len(sys.argv) > 1 else ["fft", "solver", "rand"]
    for part in parts:
        {"fft": fft, "solver": solver, "gesvdj": gesvdj, "small": small_factorisations,
         "least_squares": least_squares, "hermitian_eigen": hermitian_eigen, "rand": rand}[part]()


if __name__ == "__main__":
    main()
