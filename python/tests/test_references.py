"""No leaks: many calls leave no Python memory and no device buffer behind."""

import gc
import tracemalloc

import numpy as np

import accel


def test_many_requests_leak_no_python_memory(device):
    a = device.upload(np.ones((2, 2), np.float32))
    c = device.allocate((2, 2), "float32")

    def calls(n):
        for _ in range(n):
            device.gemm(a=a, b=a, c=c).result()
            c.numpy()

    calls(2_000)  # warm: caches, interned strings, free lists
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    calls(20_000)
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    assert grown < 64 * 1024, f"{grown} bytes more after 20,000 calls"


def test_dropped_buffers_are_freed_on_the_device():
    device = accel.Device.open("cpu", memory_limit_bytes=1 << 20)  # 1 MiB: 16 live buffers of 64 KiB at most
    for _ in range(1_000):
        device.upload(np.zeros(16_384, np.float32))  # dropped at once: freed, or the limit would refuse the 17th
    buffers = [device.allocate((16_384,), "float32") for _ in range(16)]
    try:
        device.allocate((16_384,), "float32")
        raise AssertionError("the memory limit let a 17th 64 KiB buffer through")
    except accel.ResourceExhausted:
        pass
    del buffers
    device.allocate((16_384,), "float32")
    device.close()
