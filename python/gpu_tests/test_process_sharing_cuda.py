"""A CUDA buffer shared between processes from Python: exported here, imported by another process that reads it
through PyTorch (torch.from_dlpack of the imported buffer, no copy) and writes it; freed here, the other's next use
raises StaleHandle. Run on the GPU machine by scripts/gpu-python-check."""

import subprocess
import sys

import numpy as np
import pytest

import accel

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU for torch", allow_module_level=True)

PEER = """
import sys
import torch
import accel
device = accel.Device.open("cuda")
buffer = accel.import_buffer(sys.stdin.readline().strip(), device)
tensor = torch.from_dlpack(buffer)
print("sum", float(tensor.double().sum()), flush=True)
tensor.mul_(2)
torch.cuda.synchronize()
print("written", flush=True)
for line in sys.stdin:
    try:
        print("sum", float(buffer.numpy().sum()), flush=True)
    except accel.Error as error:
        print(type(error).__name__, flush=True)
"""


@pytest.mark.parametrize("size", [1, 4097, 3 << 20])
def test_another_process_reads_and_writes_an_exported_cuda_buffer_until_it_is_freed(cuda, rng, size):
    x = rng.standard_normal(size).astype(np.float32)
    buffer = cuda.upload(x)
    text = buffer.export_to_processes()
    peer = subprocess.Popen([sys.executable, "-c", PEER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        peer.stdin.write(text + "\n")
        peer.stdin.flush()
        label, total = peer.stdout.readline().split()
        assert label == "sum" and float(total) == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-6, abs=1e-6)
        assert peer.stdout.readline().strip() == "written"
        np.testing.assert_array_equal(buffer.numpy(), x * 2)
        buffer.free()
        peer.stdin.write("again\n")
        peer.stdin.flush()
        assert peer.stdout.readline().strip() == "StaleHandle"
    finally:
        peer.stdin.close()
        assert peer.wait(timeout=120) == 0
