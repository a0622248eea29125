"""accel.Recording: requests recorded inside `with recording:`, launched in order, buffers rebound between launches
(include/accel/device/recording.hpp; the CPU device replays the steps one by one)."""

import gc

import numpy as np
import pytest

import accel


def test_recorded_requests_run_in_order_at_each_launch(device, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 2)).astype(np.float32)
    a_buf, b_buf, c = device.upload(a), device.upload(b), device.upload(np.zeros((3, 2), np.float32))
    offset = device.upload(np.full((3, 2), 1.0, np.float32))
    recording = accel.Recording(device)
    with recording as same:
        assert same is recording
        assert device.gemm(a_buf, b_buf, c) is None          # recorded, nothing runs
        assert device.axpy(offset, c, alpha=2.0) is None     # c += 2
        assert device.scal(c, 0.5) is None                   # c /= 2
    assert len(recording) == 3 and recording.names == ["Gemm", "blas::Axpy", "blas::Scal"]
    np.testing.assert_array_equal(c.numpy(), np.zeros((3, 2), np.float32))  # not run yet
    launched = recording.launch()
    assert isinstance(launched, accel.Future)
    launched.result()
    np.testing.assert_allclose(c.numpy(), (a @ b + 2.0) * 0.5, rtol=1e-5, atol=1e-5)
    recording.launch().result()   # gemm overwrites c (beta 0): the same result again
    np.testing.assert_allclose(c.numpy(), (a @ b + 2.0) * 0.5, rtol=1e-5, atol=1e-5)


def test_rebinding_a_buffer_changes_later_launches_only(device, rng):
    x = device.upload(np.arange(4, dtype=np.float32))
    y = device.upload(np.zeros(4, np.float32))
    other = device.upload(np.full(4, 10.0, np.float32))
    recording = accel.Recording(device)
    with recording:
        device.copy_buffer(x, y)
        device.scal(y, 3.0)
    assert recording.names == ["CopyOnDevice", "blas::Scal"]
    recording.launch().result()
    np.testing.assert_array_equal(y.numpy(), np.arange(4) * 3.0)
    recording.rebind(x, other)
    recording.launch().result()
    np.testing.assert_array_equal(y.numpy(), np.full(4, 30.0))
    with pytest.raises(accel.InvalidArgument, match="same device, dtype and count"):
        recording.rebind(other, device.allocate((5,), "float32"))
    with pytest.raises(accel.InvalidArgument, match="does not use"):
        recording.rebind(device.allocate((4,), "float32"), other)


def test_the_recording_keeps_its_buffers_alive(device):
    recording = accel.Recording(device)
    x = device.upload(np.ones(8, np.float32))
    y = device.upload(np.zeros(8, np.float32))
    with recording:
        device.axpy(x, y, alpha=2.0)
    live = device.live_buffers
    del x
    gc.collect()
    assert device.live_buffers == live
    recording.launch().result()
    np.testing.assert_array_equal(y.numpy(), np.full(8, 2.0))


def test_a_request_that_cannot_be_captured_is_refused_by_name(device):
    a = device.upload(np.eye(3, dtype=np.float32))
    ipiv = device.allocate((3,), "int32")
    recording = accel.Recording(device)
    with recording:
        device.scal(a, 1.0)
        with pytest.raises(accel.NotSupported, match="Recording refuses solver::Getrf"):
            device.getrf(a, ipiv)
        b = accel.GraphBuilder()
        b.output("y", b.unary("relu", b.input("x", "float32", [3, 3])))
        with pytest.raises(accel.NotSupported, match="graph::Execute"):
            device.execute(b.build(), inputs={"x": a}, outputs={"y": a})
    assert len(recording) == 1


def test_only_the_recordings_device_is_captured_and_outside_the_block_requests_run(device):
    other = accel.Device.open("cpu")
    try:
        x = device.upload(np.ones(2, np.float32))
        z = other.upload(np.ones(2, np.float32))
        recording = accel.Recording(device)
        with recording:
            future = other.scal(z, 5.0)       # another device: sent
            device.scal(x, 7.0)
            with pytest.raises(accel.InvalidArgument, match="belongs to"):
                device.scal(z, 2.0)
        future.result()
        np.testing.assert_array_equal(z.numpy(), [5.0, 5.0])
        device.scal(x, 2.0).result()          # after the block: sent
        np.testing.assert_array_equal(x.numpy(), [2.0, 2.0])
        recording.launch().result()
        np.testing.assert_array_equal(x.numpy(), [14.0, 14.0])
    finally:
        other.close()


def test_misuse_raises_failed_precondition(device):
    recording = accel.Recording(device)
    with recording:
        with pytest.raises(accel.FailedPrecondition, match="inside the recording's own"):
            recording.launch()
        with pytest.raises(accel.FailedPrecondition, match="already recording"):
            recording.__enter__()
        with pytest.raises(accel.FailedPrecondition, match="another recording"):
            accel.Recording(device).__enter__()
    recording.launch().result()   # an empty recording runs nothing


def test_a_freed_buffer_fails_the_launch_as_stale(device):
    x = device.upload(np.ones(2, np.float32))
    recording = accel.Recording(device)
    with recording:
        device.scal(x, 2.0)
    device.close()
    with pytest.raises(accel.StaleHandle):
        recording.launch().result()


def test_a_recording_dropped_inside_its_block_records_nothing_more(device):
    x = device.upload(np.ones(2, np.float32))
    dropped = accel.Recording(device)
    dropped.__enter__()
    assert device.scal(x, 3.0) is None
    del dropped
    gc.collect()
    device.scal(x, 2.0).result()   # sent: no recording is open any more
    np.testing.assert_array_equal(x.numpy(), [2.0, 2.0])


def test_recorded_host_copies_read_and_write_their_arrays_at_each_launch(device, rng):
    x_host = rng.standard_normal(16).astype(np.float32)
    y_host = np.zeros(16, np.float32)
    x = device.allocate((16,), "float32")
    recording = accel.Recording(device)
    recording.upload(x_host, x)
    with recording:
        device.scal(x, 2.0)
    recording.download(x, y_host)
    assert recording.names == ["CopyToDevice", "blas::Scal", "CopyToHost"]
    np.testing.assert_array_equal(y_host, np.zeros(16, np.float32))   # nothing ran yet
    recording.launch().result()
    np.testing.assert_array_equal(y_host, x_host * 2)
    x_host[:] = 1.0                                                   # read again at the next launch
    recording.launch().result()
    np.testing.assert_array_equal(y_host, np.full(16, 2.0, np.float32))
    other_in, other_out = np.arange(16, dtype=np.float32), np.empty(16, np.float32)
    recording.rebind_host(x_host, other_in)
    recording.rebind_host(y_host, other_out)
    recording.launch().result()
    np.testing.assert_array_equal(other_out, np.arange(16) * 2.0)
    np.testing.assert_array_equal(y_host, np.full(16, 2.0, np.float32))   # no longer written


def test_the_recording_keeps_its_host_arrays_alive(device):
    x = device.allocate((1000,), "float32")
    recording = accel.Recording(device)
    recording.upload(np.full(1000, 3.0, np.float32), x)     # no other reference to the array
    out = np.zeros(1000, np.float32)
    recording.download(x, out)
    gc.collect()
    recording.launch().result()
    np.testing.assert_array_equal(out, np.full(1000, 3.0, np.float32))


def test_host_copies_are_checked_by_name_when_recorded(device):
    x = device.allocate((4,), "float32")
    recording = accel.Recording(device)
    with pytest.raises(accel.InvalidArgument, match="holds 5 x f32"):
        recording.upload(np.zeros(5, np.float32), x)
    with pytest.raises(accel.InvalidArgument, match="holds 4 x f64"):
        recording.download(x, np.zeros(4, np.float64))
    read_only = np.zeros(4, np.float32)
    read_only.flags.writeable = False
    with pytest.raises(accel.InvalidArgument, match="read-only"):
        recording.download(x, read_only)
    with pytest.raises(accel.InvalidArgument, match="C-contiguous array in host memory"):
        recording.upload(np.zeros((4, 2), np.float32)[:, 0], x)
    source = np.zeros(4, np.float32)
    source.flags.writeable = False                      # an upload only reads it
    recording.upload(source, x)
    with pytest.raises(accel.InvalidArgument, match="cannot replace"):
        recording.rebind_host(source, np.zeros(3, np.float32))
    with pytest.raises(accel.InvalidArgument, match="no upload of the recording reads this array"):
        recording.rebind_host(np.zeros(4, np.float32), np.ones(4, np.float32))
    assert len(recording) == 1


def test_every_blas_routine_beside_gemm_is_recorded_and_a_launch_matches_numpy(device, rng):
    """Level 1-3 routines recorded from Python (each C++ request has RecordTraits): one launch runs them in order."""
    n = 5
    x0 = rng.standard_normal(n)
    s1, s2, r1, r2, b0, z = (rng.standard_normal(n) for _ in range(6))
    a0, b_matrix, p, q = (rng.standard_normal((n, n)) for _ in range(4))
    symmetric = a0 + a0.T
    lower = np.tril(rng.standard_normal((n, n)) / n) + 3 * np.eye(n)
    x, y = device.upload(x0), device.upload(np.zeros(n))
    swapped = device.upload(s1), device.upload(s2)
    rotated = device.upload(r1), device.upload(r2)
    norm, total = device.upload(np.zeros(1)), device.upload(np.zeros(1))
    largest, smallest = device.upload(np.zeros(1, np.int32)), device.upload(np.zeros(1, np.int32))
    updated, solved, product = device.upload(a0.T), device.upload(b0), device.upload(np.zeros(n))
    sym, tri = device.upload(symmetric), device.upload(lower.T)
    b, c, d = device.upload(b_matrix.T), device.upload(np.zeros((n, n))), device.upload(np.zeros((n, n)))
    z_buffer, p_buffer, q_buffer = device.upload(z), device.upload(p.T), device.upload(q.T)
    recording = accel.Recording(device)
    with recording:
        device.copy(x, y)
        device.swap(*swapped)
        device.rot(*rotated, 0.6, 0.8)
        device.nrm2(x, norm)
        device.asum(x, total)
        device.iamax(x, largest)
        device.iamin(x, smallest)
        device.ger(updated, x, z_buffer, alpha=0.5)
        device.trsv(tri, solved, fill="lower")
        device.symv(sym, x, product)
        device.symm(sym, b, c, side="left", fill="lower")
        device.trmm(tri, b, side="left", fill="lower")
        device.geam(p_buffer, q_buffer, d, alpha=2.0, beta=-1.0)
    assert recording.names == ["blas::Copy", "blas::Swap", "blas::Rot", "blas::Nrm2", "blas::Asum", "blas::Iamax",
                               "blas::Iamin", "blas::Ger", "blas::Trsv", "blas::Symv", "blas::Symm", "blas::Trmm",
                               "blas::Geam"]
    np.testing.assert_array_equal(y.numpy(), np.zeros(n))  # nothing ran yet
    recording.launch().result()
    np.testing.assert_array_equal(y.numpy(), x0)
    np.testing.assert_array_equal(swapped[0].numpy(), s2)
    np.testing.assert_array_equal(swapped[1].numpy(), s1)
    np.testing.assert_allclose(rotated[0].numpy(), 0.6 * r1 + 0.8 * r2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rotated[1].numpy(), 0.6 * r2 - 0.8 * r1, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(norm.numpy()[0], np.linalg.norm(x0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(total.numpy()[0], np.abs(x0).sum(), rtol=1e-12, atol=1e-12)
    assert largest.numpy()[0] == np.argmax(np.abs(x0)) + 1
    assert smallest.numpy()[0] == np.argmin(np.abs(x0)) + 1
    np.testing.assert_allclose(updated.numpy().T, a0 + 0.5 * np.outer(x0, z), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(solved.numpy(), np.linalg.solve(lower, b0), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(product.numpy(), symmetric @ x0, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(c.numpy().T, symmetric @ b_matrix, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.numpy().T, lower @ b_matrix, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(d.numpy().T, 2.0 * p - q, rtol=1e-12, atol=1e-12)
