"""accel.collective.init_from_mpi on the CPU device, each case a program started by mpiexec (Debian's Open MPI, through
mpi4py): a world of one rank per MPI communicator works; ranks of several processes on CPU devices are refused on
every rank, none left waiting. The GPU cases (a CUDA device per rank; ranks of mixed kinds) are
python/gpu_tests/test_collective_mpi_cuda.py's."""

import os
import shutil
import subprocess
import sys

import pytest

PROGRAM = r"""
import pathlib
import sys
import numpy as np
from mpi4py import MPI
import accel

world = MPI.COMM_WORLD
device = accel.Device.open("cpu")
case = sys.argv[1]
# mpiexec forwards the ranks' standard outputs through one stream, where two lines may interleave mid-line; each rank's
# line goes to a file of its own instead.
report = pathlib.Path(sys.argv[2]) / f"rank{world.Get_rank()}"
if case == "closed":
    device.close()
try:
    if case in ("world", "closed"):
        comm = accel.collective.init_from_mpi(device, timeout_ms=20_000)
    else:       # each rank a sub-communicator of its own, given as comm
        comm = accel.collective.init_from_mpi(device, world.Split(color=world.Get_rank()), timeout_ms=20_000)
    x = device.upload(np.arange(5, dtype=np.float32) + world.Get_rank())
    comm.all_reduce(x).result()
    report.write_text(f"rank {world.Get_rank()}: joined as {comm.rank} of {comm.ranks}, sum {x.numpy().tolist()}")
    comm.destroy().result()
except accel.Error as error:
    report.write_text(f"rank {world.Get_rank()}: {type(error).__name__}: {error}")
if case != "closed":
    device.close()
"""


def run(ranks, case, reports):
    mpiexec = shutil.which("mpiexec")
    if mpiexec is None:
        pytest.skip("no mpiexec (scripts/setup installs Debian's openmpi-bin)")
    # Open MPI refuses to start as root (CI's containers) or more ranks than cores without these.
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    # mpi4py's runner aborts the job on an exception a rank does not catch, rather than leave the others waiting.
    command = [mpiexec, "-n", str(ranks), sys.executable, "-m", "mpi4py", "-c", PROGRAM, case, str(reports)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return [(reports / f"rank{rank}").read_text() for rank in range(ranks)]


def test_one_process_joins_a_world_of_one(tmp_path):
    assert run(1, "world", tmp_path) == ["rank 0: joined as 0 of 1, sum [0.0, 1.0, 2.0, 3.0, 4.0]"]


def test_a_communicator_given_is_the_world(tmp_path):
    assert run(2, "split", tmp_path) == ["rank 0: joined as 0 of 1, sum [0.0, 1.0, 2.0, 3.0, 4.0]",
                               "rank 1: joined as 0 of 1, sum [1.0, 2.0, 3.0, 4.0, 5.0]"]


def test_cpu_devices_of_two_processes_are_refused_on_every_rank(tmp_path):
    lines = run(2, "world", tmp_path)
    assert len(lines) == 2
    for rank, line in enumerate(lines):
        assert line.startswith(f"rank {rank}: FailedPrecondition: failed_precondition: collective.init_from_mpi "
                               f"(rank {rank} of 2): a CPU world's ranks are CPU devices of one process"), line


def test_a_closed_device_is_refused_after_the_exchange(tmp_path):
    [line] = run(1, "closed", tmp_path)
    assert line.startswith("rank 0: StaleHandle: stale_handle: init_rank's device belongs to device cpu")
    assert line.endswith("which was closed")
