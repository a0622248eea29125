"""accel.Communicator and the collectives on a world of CPU devices of this process (include/accel/libs/collective/),
against NumPy. Every rank's request is sent before any is waited for, as each rank's device answers only when all
have joined the call."""

import numpy as np
import pytest

import accel


@pytest.fixture
def world():
    devices = [accel.Device.open("cpu") for _ in range(3)]
    comms = accel.collective.init_all(devices, timeout_ms=20_000)
    yield devices, comms
    for future in [comm.destroy() for comm in comms]:
        future.result()
    for device in devices:
        device.close()


def wait_all(futures):
    for future in futures:
        assert isinstance(future, accel.Future)
        future.result()


def test_init_all_gives_one_rank_per_device(world):
    devices, comms = world
    assert [c.rank for c in comms] == [0, 1, 2] and all(c.ranks == 3 for c in comms)
    assert [c.device for c in comms] == devices
    assert len({c.id for c in comms}) == 3


def test_all_reduce_in_place_and_into_another_buffer(world, rng):
    devices, comms = world
    parts = [rng.standard_normal(6).astype(np.float32) for _ in comms]
    buffers = [d.upload(p) for d, p in zip(devices, parts)]
    wait_all([c.all_reduce(b) for c, b in zip(comms, buffers)])
    for b in buffers:
        np.testing.assert_allclose(b.numpy(), sum(parts), rtol=1e-5)
    outs = [d.allocate((6,), "float32") for d in devices]
    wait_all([c.all_reduce(b, o, op=accel.ReduceOp.max) for c, b, o in zip(comms, buffers, outs)])
    np.testing.assert_allclose(outs[2].numpy(), sum(parts), rtol=1e-5)


def test_all_gather_reduce_scatter_broadcast_and_reduce(world):
    devices, comms = world
    sends = [d.upload(np.full(2, r + 1.0, np.float32)) for r, d in enumerate(devices)]
    gathered = [d.allocate((6,), "float32") for d in devices]
    wait_all([c.all_gather(s, g) for c, s, g in zip(comms, sends, gathered)])
    np.testing.assert_array_equal(gathered[1].numpy(), [1, 1, 2, 2, 3, 3])

    scattered = [d.allocate((2,), "float32") for d in devices]
    wait_all([c.reduce_scatter(g, s) for c, g, s in zip(comms, gathered, scattered)])
    np.testing.assert_array_equal(scattered[2].numpy(), [9, 9])   # 3 ranks x part 2 (3, 3)

    received = [d.allocate((2,), "float32") for d in devices]
    wait_all([c.broadcast(s if c.rank == 1 else None, r, root=1) for c, s, r in zip(comms, sends, received)])
    assert all(r.numpy().tolist() == [2, 2] for r in received)

    total = devices[0].allocate((2,), "float32")
    wait_all([c.reduce(s, total if c.rank == 0 else None, root=0, op="prod") for c, s in zip(comms, sends)])
    np.testing.assert_array_equal(total.numpy(), [6, 6])


def test_send_and_recv_in_a_group(world):
    devices, comms = world
    data = [d.upload(np.full(3, 10.0 * r, np.float32)) for r, d in enumerate(devices)]
    inbox = [d.allocate((3,), "float32") for d in devices]
    futures = []
    for c in comms:   # a ring: each rank sends to the next and receives from the previous
        right, left = (c.rank + 1) % 3, (c.rank + 2) % 3
        futures.append(c.group([
            {"kind": "send", "send": data[c.rank], "count": 3, "dtype": "float32", "peer": right},
            {"kind": accel.CollectiveKind.recv, "recv": inbox[c.rank], "count": 3, "dtype": "float32", "peer": left},
        ]))
    wait_all(futures)
    assert [b.numpy()[0] for b in inbox] == [20.0, 0.0, 10.0]


def test_init_rank_joins_a_world_by_its_unique_id():
    devices = [accel.Device.open("cpu") for _ in range(2)]
    try:
        unique_id = accel.collective.unique_id("cpu")
        assert isinstance(unique_id, bytes) and len(unique_id) == 128
        joining = [accel.collective.init_rank(d, unique_id, 2, r, timeout_ms=20_000) for r, d in enumerate(devices)]
        comms = [f.result() for f in joining]
        assert [c.rank for c in comms] == [0, 1] and isinstance(comms[0], accel.Communicator)
        xs = [d.upload(np.array([1.0, 2.0], np.float32)) for d in devices]
        wait_all([c.all_reduce(x, op="avg") for c, x in zip(comms, xs)])
        np.testing.assert_array_equal(xs[1].numpy(), [1.0, 2.0])
        wait_all([c.destroy() for c in comms])
    finally:
        for d in devices:
            d.close()


def test_bad_arguments_raise_invalid_argument(world):
    devices, comms = world
    with pytest.raises(accel.InvalidArgument, match="128 bytes"):
        accel.collective.init_rank(devices[0], b"short", 2, 0)
    with pytest.raises(accel.InvalidArgument, match="no argument 'root'"):
        comms[0].collective(kind="broadcast", root=0)
    with pytest.raises(accel.InvalidArgument, match="'kind' must be one of"):
        comms[0].collective(kind="all_to_all")
    with pytest.raises(accel.InvalidArgument, match="steps\\[0\\]"):
        comms[0].group(["all_reduce"])
    with pytest.raises(accel.InvalidArgument, match="'cpu', 'cuda'"):
        accel.collective.unique_id("tpu")


def test_a_collective_cannot_be_recorded(world):
    devices, comms = world
    x = devices[0].upload(np.ones(2, np.float32))
    with accel.Recording(devices[0]):
        with pytest.raises(accel.NotSupported, match="collective::Collective"):
            comms[0].all_reduce(x)


def test_init_from_torchrun_reads_the_launchers_environment(monkeypatch, device):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(accel.InvalidArgument, match="launcher environment has no"):
        accel.collective.init_from_torchrun(device)
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("LOCAL_RANK", "0")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "29500")
    monkeypatch.setenv("WORLD_SIZE", "two")
    with pytest.raises(accel.InvalidArgument, match="WORLD_SIZE"):
        accel.collective.init_from_torchrun(device)
    monkeypatch.setenv("WORLD_SIZE", "1")
    comm = accel.collective.init_from_torchrun(device, timeout_ms=20_000)   # a world of one: rank 0 serves no one
    assert (comm.rank, comm.ranks) == (0, 1) and comm.device == device
    x = device.upload(np.array([4.0], np.float32))
    comm.all_reduce(x).result()
    assert x.numpy().tolist() == [4.0]
    comm.destroy().result()


def test_one_communicator_option_is_taken(rng):
    """blocking_collectives=False (one NCCL communicator on CUDA) reaches the request; a CPU world, which has one kind
    of communicator, runs the same."""
    devices = [accel.Device.open("cpu") for _ in range(2)]
    try:
        comms = accel.collective.init_all(devices, timeout_ms=20_000, blocking_collectives=False)
        parts = [rng.standard_normal(5).astype(np.float32) for _ in comms]
        buffers = [d.upload(p) for d, p in zip(devices, parts)]
        wait_all([c.all_reduce(b) for c, b in zip(comms, buffers)])
        np.testing.assert_allclose(buffers[1].numpy(), parts[0] + parts[1], rtol=1e-6)
        wait_all([c.destroy() for c in comms])
        with pytest.raises(TypeError):
            accel.collective.init_all(devices, blocking_collective=False)
    finally:
        for device in devices:
            device.close()
