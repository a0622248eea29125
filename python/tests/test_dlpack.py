"""Zero-copy interop on the CPU device: DLPack both ways with NumPy (versioned and legacy capsules), lifetimes, refusals,
and StaleHandle once the device is closed. The CUDA side (torch) is python/gpu_tests/test_dlpack_cuda.py, run on the GPU machine (scripts/gpu-python-check)."""

import gc
import sys
import time
import tracemalloc
import weakref

import numpy as np
import pytest

import accel


def address(array):
    return array.__array_interface__["data"][0]


def test_numpy_shares_an_exported_buffer_both_ways(device):
    buffer = device.upload(np.arange(12, dtype=np.float32).reshape(3, 4))
    view = np.from_dlpack(buffer)
    assert view.shape == (3, 4) and view.dtype == np.float32
    np.testing.assert_array_equal(view, np.arange(12).reshape(3, 4))
    assert address(np.from_dlpack(buffer)) == address(view)  # the same memory every time
    view[1, 2] = -5.0  # NumPy writes, accel reads
    assert buffer.numpy()[1, 2] == -5.0
    buffer.copy_from(np.full((3, 4), 7, np.float32)).result()  # accel writes, NumPy reads
    assert (view == 7).all()


def test_dlpack_device_is_the_cpu(device):
    assert device.allocate((2,)).__dlpack_device__() == (1, 0)


def test_versioned_capsule_when_the_consumer_asks_for_dlpack_1(device):
    buffer = device.allocate((4,), "int64")
    assert "dltensor_versioned" in repr(buffer.__dlpack__(max_version=(1, 0)))
    assert "dltensor_versioned" not in repr(buffer.__dlpack__(max_version=(0, 8)))
    assert '"dltensor"' in repr(buffer.__dlpack__())


@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_capsules_of_either_kind_round_trip_through_accel(device, max_version):
    buffer = device.upload(np.arange(6, dtype=np.int32))
    again = accel.from_dlpack(buffer.__dlpack__(max_version=max_version), device=device)
    assert again.shape == (6,) and again.dtype == "int32"
    again.copy_from(np.full(6, 3, np.int32)).result()
    np.testing.assert_array_equal(buffer.numpy(), np.full(6, 3))  # one memory under both buffers


def test_a_capsule_is_consumed_once(device):
    capsule = device.allocate((3,)).__dlpack__(max_version=(1, 0))
    accel.from_dlpack(capsule, device=device)
    with pytest.raises(accel.InvalidArgument, match="consumed already"):
        accel.from_dlpack(capsule, device=device)


def test_copies_and_other_devices_are_refused_by_export(device):
    buffer = device.allocate((3,))
    with pytest.raises(BufferError, match="does not copy"):
        buffer.__dlpack__(copy=True)
    with pytest.raises(BufferError, match=r"not \(2, 0\)"):
        buffer.__dlpack__(dl_device=(2, 0))
    with pytest.raises(ValueError, match="stream=None"):
        buffer.__dlpack__(stream=5)


def test_cuda_array_interface_is_absent_on_the_cpu(device):
    buffer = device.allocate((3,))
    assert not hasattr(buffer, "__cuda_array_interface__")
    with pytest.raises(AttributeError, match="CUDA device"):
        buffer.__cuda_array_interface__


def test_accel_adopts_a_numpy_array_without_a_copy(device, rng):
    array = rng.standard_normal((5, 8)).astype(np.float64)
    buffer = accel.from_dlpack(array, device=device)
    assert buffer.shape == (5, 8) and buffer.dtype == "float64"
    assert address(np.from_dlpack(buffer)) == address(array)
    expected = array * 0.5
    device.scal(buffer, 0.5).result()  # an accel request writes NumPy's memory
    np.testing.assert_array_equal(array, expected)
    array[0, 0] = 42.0  # and NumPy's writes are the buffer's
    assert buffer.numpy()[0, 0] == 42.0


def released(reference):
    """Whether the object `reference` names is gone, once the device answered the Frees sent before."""
    for _ in range(50):
        gc.collect()
        if reference() is None:
            return True
        time.sleep(0.01)
    return False


def test_the_buffer_holds_an_adopted_array_until_it_goes(device):
    array = np.arange(1000, dtype=np.float32)
    reference = weakref.ref(array)
    buffer = accel.from_dlpack(array, device=device)
    del array
    gc.collect()
    assert reference() is not None
    np.testing.assert_array_equal(buffer.numpy(), np.arange(1000))
    del buffer
    device.allocate((1,)).numpy()  # the Free sent when the buffer went is answered before this
    assert released(reference)


def test_an_export_outlives_the_buffer_object(device):
    buffer = device.upload(np.arange(8, dtype=np.float64))
    view = np.from_dlpack(buffer)
    del buffer
    gc.collect()
    device.allocate((8,), "float64").copy_from(np.zeros(8)).result()  # other allocations do not take its memory
    np.testing.assert_array_equal(view, np.arange(8))


def test_refusals_name_their_reason(device):
    with pytest.raises(accel.InvalidArgument, match="not C-contiguous"):
        accel.from_dlpack(np.ones((4, 6), np.float32)[:, ::2], device=device)
    with pytest.raises(accel.InvalidArgument, match="not C-contiguous"):
        accel.from_dlpack(np.ones((4, 6), np.float32).T, device=device)
    with pytest.raises(accel.InvalidArgument, match="has no accel dtype"):
        accel.from_dlpack(np.ones(3, np.bool_), device=device)
    readonly = np.ones(3, np.float32)
    readonly.flags.writeable = False
    with pytest.raises(accel.InvalidArgument, match="read-only"):
        accel.from_dlpack(readonly, device=device)
    with pytest.raises(accel.InvalidArgument, match="no __dlpack__"):
        accel.from_dlpack([1.0, 2.0], device=device)
    with pytest.raises(accel.InvalidArgument, match="no elements"):
        accel.from_dlpack(np.ones(0, np.float32), device=device)


def test_a_tensor_of_another_device_is_refused(device):
    class OnCuda:
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, **kwargs):
            raise AssertionError("not asked for a capsule")

    with pytest.raises(accel.InvalidArgument, match=r"DLPack device \(2, 0\), not on cpu:0"):
        accel.from_dlpack(OnCuda(), device=device)


def test_no_leak_over_ten_thousand_exports(device):
    buffer = device.upload(np.arange(16, dtype=np.float32))
    base = sys.getrefcount(buffer)

    def exchange():
        view = np.from_dlpack(device.allocate((16,)))  # the export alone holds this buffer
        assert view.shape == (16,)
        assert np.from_dlpack(buffer)[3] == 3.0
        accel.from_dlpack(buffer.__dlpack__(max_version=(1, 0)), device=device)
        accel.from_dlpack(np.ones(4, np.float32), device=device)
        buffer.__dlpack__()  # a capsule nobody consumes frees what it holds

    for _ in range(200):
        exchange()
    gc.collect()
    live = device.live_buffers
    tracemalloc.start()
    first, _ = tracemalloc.get_traced_memory()
    for _ in range(10_000):
        exchange()
    gc.collect()
    assert device.live_buffers == live  # every exported and adopted buffer was freed
    last, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert last - first < 64 * 1024, f"{last - first} bytes more after 10,000 exports"
    assert sys.getrefcount(buffer) == base


def test_export_after_close_raises_stale_handle():
    device = accel.Device.open("cpu")
    buffer = device.upload(np.ones(4, np.float32))
    device.close()
    with pytest.raises(accel.StaleHandle):
        buffer.__dlpack__()
    with pytest.raises(accel.StaleHandle):
        np.from_dlpack(buffer)
    with pytest.raises(accel.StaleHandle):
        accel.from_dlpack(np.ones(2, np.float32), device=device)


def test_export_of_a_freed_buffer_raises_stale_handle(device):
    buffer = device.upload(np.ones(4, np.float32))
    buffer.free()
    with pytest.raises(accel.StaleHandle):
        buffer.__dlpack__(max_version=(1, 0))


def test_an_isolated_device_refuses_to_share_memory():
    device = accel.Device.open("cpu", isolation="worker_process")
    try:
        with pytest.raises(accel.NotSupported, match="worker process"):
            device.upload(np.ones(2, np.float32)).__dlpack__()
    finally:
        device.close()
