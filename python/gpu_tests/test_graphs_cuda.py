"""Compiled graphs, recordings (host copies of pinned torch memory too), device pools and collectives from Python on
CUDA devices (the CPU suite, python/tests, checks the same bindings on the CPU device). Run by scripts/gpu-python-check;
skipped where accel has no CUDA device, and the collective test where the machine has fewer than two GPUs."""

import numpy as np
import pytest

import accel


def linear_graph(dtype, bucket=None):
    b = accel.GraphBuilder()
    if bucket:
        b.bucket("rows", bucket)
    x = b.input("x", dtype, ["rows", 64])
    w = b.parameter("w", dtype, [64, 32])
    bias = b.parameter("bias", dtype, [32])
    b.output("y", b.l2_normalize(b.matmul(x, w, bias=bias, activation="relu")))
    return b.build()


def linear_reference(xs, w, bias):
    y = np.maximum(xs.astype(np.float64) @ w.astype(np.float64) + bias, 0)
    return y / np.maximum(np.linalg.norm(y, axis=1, keepdims=True), 1e-12)


@pytest.mark.parametrize("dtype, tolerance", [("float32", 2e-3), ("float16", 3e-2)])
def test_a_graph_runs_on_the_gpu_in_each_mode(cuda, rng, dtype, tolerance):
    graph = linear_graph(dtype, bucket=[8, 16, 32])
    w = rng.standard_normal((64, 32)).astype(dtype)
    bias = rng.standard_normal(32).astype(dtype)
    weights = graph.upload_weights(cuda, {"w": w, "bias": bias})
    for rows in (5, 16, 23):
        xs = (rng.standard_normal((rows, 64)) / 8).astype(dtype)
        expected = linear_reference(xs, w, bias)
        for mode in accel.ExecuteMode:
            out = cuda.allocate((rows, 32), dtype)
            cuda.execute(graph, symbols={"rows": rows}, weights=weights, inputs={"x": cuda.upload(xs)},
                         outputs={"y": out}, mode=mode).result()
            np.testing.assert_allclose(out.numpy().astype(np.float64), expected, rtol=tolerance, atol=tolerance)


def test_a_recording_replays_as_a_cuda_graph_and_follows_a_rebind(cuda, rng):
    a = rng.standard_normal((32, 16)).astype(np.float32)
    b = rng.standard_normal((16, 8)).astype(np.float32)
    a_buf, b_buf, c = cuda.upload(a), cuda.upload(b), cuda.allocate((32, 8), "float32")
    offset = cuda.upload(np.ones((32, 8), np.float32))
    signal = cuda.upload(rng.standard_normal(64).astype(np.complex64))
    recording = accel.Recording(cuda)
    with recording:
        cuda.gemm(a_buf, b_buf, c)
        cuda.axpy(offset, c, alpha=3.0)
        cuda.fft(signal)
        cuda.random(cuda.allocate((128,), "float32"), seed=7)
    assert recording.names == ["Gemm", "blas::Axpy", "Fft", "rand::Generate"]
    before = signal.numpy()
    for _ in range(3):   # the first launch captures, the later ones replay
        recording.launch().result()
        np.testing.assert_allclose(c.numpy(), a @ b + 3.0, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(signal.numpy(), np.fft.fft(np.fft.fft(np.fft.fft(before))), rtol=1e-2, atol=1e-1)
    other = cuda.upload(np.full((16, 8), 2.0, np.float32))
    recording.rebind(b_buf, other)
    recording.launch().result()
    np.testing.assert_allclose(c.numpy(), a @ np.full((16, 8), 2.0) + 3.0, rtol=1e-3, atol=1e-3)


def test_recorded_host_copies_of_pinned_torch_memory_run_in_the_graph(cuda, rng):
    torch = pytest.importorskip("torch")
    n = 4096
    pinned = [torch.empty(n, dtype=torch.float32, pin_memory=True).numpy() for _ in range(4)]
    ins, outs = pinned[:2], pinned[2:]
    x = cuda.allocate((n,), "float32")
    recording = accel.Recording(cuda)
    recording.upload(ins[0], x)
    with recording:
        cuda.scal(x, 3.0)
    recording.download(x, outs[0])
    assert recording.names == ["CopyToDevice", "blas::Scal", "CopyToHost"]
    for launch in range(200):   # captured once, replayed; host memory rebound every launch (the graph updated)
        if launch % 2 == 1:
            recording.rebind_host(ins[0], ins[1])
            recording.rebind_host(outs[0], outs[1])
            ins.reverse()
            outs.reverse()
        ins[0][:] = rng.standard_normal(n).astype(np.float32)
        recording.launch().result()
        np.testing.assert_array_equal(outs[0], ins[0] * 3.0)
    pageable = accel.Recording(cuda)
    pageable.upload(np.zeros(n, np.float32), x)
    with pytest.raises(accel.NotSupported, match="pageable host memory"):
        pageable.launch().result()


def test_a_pool_of_every_gpu_places_by_free_memory(cuda):
    pool = accel.DevicePool.open("all")
    try:
        assert len(pool) >= 1 and all(d.kind == "cuda" for d in pool.devices)
        states = pool.states()
        assert all(s["memory_capacity_bytes"] > 0 and s["memory_free_bytes"] > 0 for s in states)
        placed = pool.place(accel.PlacementPolicy.most_free_memory, weight=10)
        device = pool.device(placed.index)
        x = device.upload(np.ones(1024, np.float32))
        future = device.scal(x, 2.0)
        future.result()
        pool.finish(placed, future)
        assert pool.state(placed.index)["requests_placed"] == 1
        np.testing.assert_array_equal(x.numpy(), np.full(1024, 2.0))
    finally:
        for device in pool.devices:
            device.close()


def test_all_reduce_across_two_gpus():
    pool = accel.DevicePool.open("all")
    try:
        if len(pool) < 2 or pool.device(0).kind != "cuda":
            pytest.skip("fewer than two GPUs")
        devices = pool.devices[:2]
        comms = accel.collective.init_all(devices, timeout_ms=60_000)
        parts = [np.arange(1 << 16, dtype=np.float32) * (r + 1) for r in range(2)]
        buffers = [d.upload(p) for d, p in zip(devices, parts)]
        for future in [c.all_reduce(x) for c, x in zip(comms, buffers)]:
            future.result()
        np.testing.assert_allclose(buffers[1].numpy(), parts[0] + parts[1])
        gathered = [d.allocate((2 << 16,), "float32") for d in devices]
        for future in [c.all_gather(x, g) for c, x, g in zip(comms, buffers, gathered)]:
            future.result()
        np.testing.assert_allclose(gathered[0].numpy(), np.concatenate([parts[0] + parts[1]] * 2))
        for future in [c.destroy() for c in comms]:
            future.result()
    finally:
        for device in pool.devices:
            device.close()
