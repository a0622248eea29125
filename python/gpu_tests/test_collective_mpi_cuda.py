"""accel.collective.init_from_mpi with a CUDA device per rank: two processes started by mpiexec (mpi4py), each on the
GPU of its rank, all-reduce and all-gather in several dtypes and sizes against NumPy, exactly; ranks of mixed kinds
refused alike on every rank. Run by scripts/gpu-python-check; the two-rank worlds need two GPUs (NCCL takes one rank
per GPU) and skip with fewer; all skip without mpiexec or mpi4py."""

import os
import shutil
import subprocess
import sys

import pytest

import accel

pytest.importorskip("mpi4py")

PROGRAM = r"""
import pathlib
import sys
import numpy as np
from mpi4py import MPI
import accel

world = MPI.COMM_WORLD
rank, case = world.Get_rank(), sys.argv[1]
# mpiexec forwards the ranks' standard outputs through one stream, where two lines may interleave mid-line; each rank's
# line goes to a file of its own instead.
report = pathlib.Path(sys.argv[2]) / f"rank{rank}"
if case == "mixed" and rank == 1:
    device = accel.Device.open("cpu")
else:
    isolation = "worker_process" if case == "worker_process" else "in_process"
    device = accel.Device.open("cuda", ordinal=rank, isolation=isolation)
try:
    comm = accel.collective.init_from_mpi(device, timeout_ms=60_000)
    checked = 0
    for dtype in ("float32", "float64", "float16", "int32"):
        for n in (1, 4097, 1 << 20):
            def part(r):
                rng = np.random.default_rng(1000 * n + r)
                if dtype == "int32":
                    return rng.integers(-1000, 1000, n).astype(np.int32)
                return rng.standard_normal(n).astype(dtype)
            mine = device.upload(part(rank))
            comm.all_reduce(mine).result()
            assert np.array_equal(mine.numpy(), part(0) + part(1)), (dtype, n, "all_reduce")
            gathered = device.allocate((2 * n,), dtype)
            comm.all_gather(device.upload(part(rank)), gathered).result()
            assert np.array_equal(gathered.numpy(), np.concatenate([part(0), part(1)])), (dtype, n, "all_gather")
            checked += 1
    comm.destroy().result()
    report.write_text(f"rank {rank}: rank {comm.rank} of {comm.ranks} on {device.name}, {checked} cases exact")
except accel.Error as error:
    report.write_text(f"rank {rank}: {type(error).__name__}: {error}")
device.close()
"""


def has_cuda_device(ordinal):
    try:
        accel.Device.open("cuda", ordinal=ordinal).close()
        return True
    except accel.Error:
        return False


def run(case, reports):
    mpiexec = shutil.which("mpiexec") or shutil.which("mpirun")
    if mpiexec is None:
        pytest.skip("no mpiexec")
    needed = 1 if case == "mixed" else 2
    if not has_cuda_device(needed - 1):
        pytest.skip(f"fewer than {needed} CUDA devices")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    forwarded = [flag for name in ("PYTHONPATH", "LD_LIBRARY_PATH", "NCCL_NVLS_ENABLE") if name in env
                 for flag in ("-x", name)]
    # mpi4py's runner aborts the job on an exception a rank does not catch, rather than leave the others waiting.
    done = subprocess.run([mpiexec, "-n", "2", *forwarded, sys.executable, "-m", "mpi4py", "-c", PROGRAM, case,
                           str(reports)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return [(reports / f"rank{rank}").read_text() for rank in range(2)]


@pytest.mark.parametrize("case", ["in_process", "worker_process"])
def test_two_processes_one_gpu_each_reduce_and_gather_exactly(case, tmp_path):
    lines = run(case, tmp_path)
    assert [line.split(":")[0] for line in lines] == ["rank 0", "rank 1"]
    for rank, line in enumerate(lines):
        assert line.startswith(f"rank {rank}: rank {rank} of 2 on cuda") and "12 cases exact" in line, line


def test_ranks_of_mixed_kinds_are_refused_on_every_rank(tmp_path):
    lines = run("mixed", tmp_path)
    assert len(lines) == 2
    for rank, line in enumerate(lines):
        assert line == (f"rank {rank}: FailedPrecondition: failed_precondition: collective.init_from_mpi (rank {rank} "
                        "of 2): a world's devices are of one kind, and these are not (rank 0 cuda, rank 1 cpu)"), line
