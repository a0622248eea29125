"""Buffers: NumPy in and out, shapes and dtypes, and what happens after a free or a close."""

import numpy as np
import pytest

import accel

DTYPES = ["float32", "float64", "float16", "complex64", "complex128", "int8", "uint8", "int32", "uint32", "int64",
          "uint64"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_keeps_values_shape_and_dtype(device, rng, dtype):
    x = (np.abs(rng.standard_normal((4, 3, 5))) * 50).astype(dtype)
    buffer = device.upload(x)
    assert buffer.shape == (4, 3, 5) and buffer.dtype == dtype and buffer.size == 60
    assert buffer.nbytes == x.nbytes
    out = buffer.numpy()
    assert out.dtype == x.dtype and out.shape == x.shape
    np.testing.assert_array_equal(out, x)


def test_upload_takes_lists_and_converts_dtype(device):
    buffer = device.upload([[1, 2], [3, 4]], dtype="float32")
    assert buffer.dtype == "float32"
    np.testing.assert_array_equal(buffer.numpy(), [[1, 2], [3, 4]])


def test_non_contiguous_arrays_are_copied_in_order(device, rng):
    x = rng.standard_normal((6, 4)).astype(np.float32).T  # Fortran order
    np.testing.assert_array_equal(device.upload(x).numpy(), x)


def test_copy_from_fills_an_allocated_buffer(device):
    buffer = device.allocate((3,), "int32")
    assert buffer.copy_from(np.array([7, 8, 9])).result() is None
    np.testing.assert_array_equal(buffer.numpy(), [7, 8, 9])
    with pytest.raises(accel.InvalidArgument, match="copy into a buffer of 3"):
        buffer.copy_from(np.arange(4))


def test_numpy_async_gives_the_array(device):
    buffer = device.upload(np.arange(5.0))
    np.testing.assert_array_equal(buffer.numpy_async().result(timeout=30), np.arange(5.0))


def test_unknown_dtype_is_refused(device):
    with pytest.raises(accel.InvalidArgument, match="dtype 'bool' is not one of accel's"):
        device.allocate((2,), "bool")
    with pytest.raises(accel.InvalidArgument):
        device.allocate((-1,), "float32")


def test_a_freed_buffer_is_stale(device):
    buffer = device.upload(np.ones(4, np.float32))
    alias = buffer
    buffer.free()
    with pytest.raises(accel.StaleHandle):
        alias.numpy()


def test_buffers_of_a_closed_device_raise_stale_handle_not_crash():
    device = accel.Device.open("cpu")
    buffer = device.upload(np.ones((2, 2), np.float32))
    device.close()
    assert device.closed
    with pytest.raises(accel.StaleHandle, match="which was closed"):
        buffer.numpy()
    with pytest.raises(accel.StaleHandle):
        buffer.copy_from(np.ones((2, 2), np.float32))
    other = accel.Device.open("cpu")
    with pytest.raises(accel.StaleHandle):
        other.gemm(a=buffer, b=buffer, c=buffer)
    other.close()
    del buffer  # releasing it after the close does nothing


def test_requests_on_a_closed_device_fail_with_failed_precondition():
    device = accel.Device.open("cpu")
    buffer = device.allocate((2, 2))
    device.close()
    with pytest.raises(accel.FailedPrecondition):
        device.allocate((2,))
    with pytest.raises(accel.StaleHandle):  # its buffers are checked first
        device.random(buffer)
    with pytest.raises(accel.FailedPrecondition):
        device.health()


def test_default_device_is_cuda_where_one_opens_else_the_cpu():
    try:
        accel.Device.open("cuda").close()
        expected = "cuda"
    except accel.Error:
        expected = "cpu"
    device = accel.Device.default()
    assert device.kind == expected
    device.close()


@pytest.mark.parametrize("isolation", ["in_process", "worker_process"])
def test_copy_between_devices_moves_a_range_to_another_device(device, rng, isolation):
    other = accel.Device.open("cpu", isolation=isolation)
    try:
        x = rng.standard_normal(1000).astype(np.float32)
        source = device.upload(x)
        target = other.upload(np.zeros(1000, np.float32))
        assert accel.copy_between_devices(source, target, count=400, source_offset=600,
                                          destination_offset=10).result() is None
        expected = np.zeros(1000, np.float32)
        expected[10:410] = x[600:]
        np.testing.assert_array_equal(target.numpy(), expected)
        with pytest.raises(accel.InvalidArgument, match="past the end of the destination"):
            accel.copy_between_devices(source, target, destination_offset=1).result()
        with pytest.raises(accel.InvalidArgument, match="element types differ"):
            accel.copy_between_devices(source, other.allocate((1000,), "int32")).result()
    finally:
        other.close()


def test_cuda_peer_links_lists_ordered_pairs():
    for link in accel.cuda_peer_links():
        assert link["from"] != link["to"] and isinstance(link["peer_access"], bool)
