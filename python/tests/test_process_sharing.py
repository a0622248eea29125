"""Buffers shared between processes: one exported here (Buffer.export_to_processes), imported by another Python
process (accel.import_buffer) that reads it and writes it; freed here, the other's next use raises StaleHandle.
python/gpu_tests/test_process_sharing_cuda.py runs the same with CUDA devices."""

import subprocess
import sys

import numpy as np
import pytest

import accel

# The other process: imports the text it is given, prints the sum, doubles the buffer in place, then on each line
# "again" prints the sum or the error's name.
PEER = """
import sys
import numpy as np
import accel
device = accel.Device.open(sys.argv[1])
buffer = accel.import_buffer(sys.stdin.readline().strip(), device, shape=(4, {columns}))
print("sum", float(buffer.numpy().sum()), flush=True)
buffer.copy_from(buffer.numpy() * 2).result()
print("written", flush=True)
for line in sys.stdin:
    try:
        print("sum", float(buffer.numpy().sum()), flush=True)
    except accel.Error as error:
        print(type(error).__name__, flush=True)
"""


def share_with_another_process(device, kind, rng):
    columns = 1000
    x = rng.standard_normal((4, columns)).astype(np.float32)
    buffer = device.upload(x)
    text = buffer.export_to_processes()
    assert text.startswith("accel-buffer-v1:") and buffer.export_to_processes() == text
    peer = subprocess.Popen([sys.executable, "-c", PEER.format(columns=columns), kind], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        peer.stdin.write(text + "\n")
        peer.stdin.flush()
        label, total = peer.stdout.readline().split()
        assert label == "sum" and float(total) == pytest.approx(float(x.sum()), rel=1e-5, abs=1e-3)
        assert peer.stdout.readline().strip() == "written"
        np.testing.assert_array_equal(buffer.numpy(), x * 2)  # the other process wrote this very memory
        buffer.free()
        peer.stdin.write("again\n")
        peer.stdin.flush()
        assert peer.stdout.readline().strip() == "StaleHandle"
    finally:
        peer.stdin.close()
        assert peer.wait(timeout=60) == 0


def test_another_process_reads_and_writes_an_exported_buffer_until_it_is_freed(device, rng):
    share_with_another_process(device, "cpu", rng)


def test_bad_text_and_shapes_are_refused(device):
    buffer = device.upload(np.arange(6, dtype=np.int32))
    text = buffer.export_to_processes()
    with pytest.raises(accel.InvalidArgument, match="begins"):
        accel.import_buffer("not an export", device)
    with pytest.raises(accel.InvalidArgument, match="shape"):
        accel.import_buffer(text, device, shape=(4, 2))
    imported = accel.import_buffer(text, device, shape=(2, 3))  # the CPU device imports from its own process too
    np.testing.assert_array_equal(imported.numpy(), np.arange(6, dtype=np.int32).reshape(2, 3))
