"""The examples in python/examples run as users run them (a script, in a fresh interpreter) on the CPU device, so
that they cannot rot."""

import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def run_example(name, *arguments, tmp_path):
    # From an empty folder, so that `import accel` is the installed package (as for a user), not python/accel.
    return subprocess.run([sys.executable, str(EXAMPLES / name), *arguments], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.parametrize("name, arguments, printed", [
    ("asyncio_many_requests.py", ["--device", "cpu"], "1000 GEMMs and 1000 FFTs awaited concurrently"),
    ("gemm_fft_numpy.py", ["--device", "cpu"], "2-D FFT match NumPy"),
    ("every_device.py", ["--devices", "cpu,cpu"], "2 devices: row shards copied"),
])
def test_example_runs_and_checks_itself(name, arguments, printed, tmp_path):
    finished = run_example(name, *arguments, tmp_path=tmp_path)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert printed in finished.stdout


def test_the_ray_example_embeds_and_checks_itself(model_folder, tmp_path):
    finished = run_example("ray_embed.py", "--model", model_folder, "--device", "cpu", tmp_path=tmp_path)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "400 texts embedded" in finished.stdout


def test_every_example_is_run_here():
    tested = {"asyncio_many_requests.py", "gemm_fft_numpy.py", "every_device.py", "ray_embed.py"}
    assert {path.name for path in EXAMPLES.glob("*.py")} == tested
