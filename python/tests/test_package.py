"""The installed package: the module, libaccel.so and accel-worker beside it, type stubs for editors."""

import os
import pathlib

import accel


def test_the_package_holds_its_library_worker_and_stubs():
    folder = pathlib.Path(accel.__file__).parent
    names = {path.name for path in folder.iterdir()}
    assert "libaccel.so.0.1" in names and "libaccel.so.0.1.0" not in names  # once, under its soname
    assert os.access(folder / "accel-worker", os.X_OK)
    assert "py.typed" in names
    stub = (folder / "_accel.pyi").read_text()
    assert "class Device" in stub and "class Future" in stub and "def result(" in stub


def test_an_isolated_cpu_device_finds_the_packaged_worker(rng):
    with accel.Device.open("cpu", isolation="worker_process") as device:
        x = rng.standard_normal((3, 4)).astype("float32")
        buffer = device.upload(x)
        c = device.allocate((3, 3), "float32")
        device.gemm(a=buffer, b=buffer, c=c, transpose_b="transpose", m=3, n=3, k=4).result(timeout=60)
        assert abs(c.numpy() - x @ x.T).max() < 1e-4
