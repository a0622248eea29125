"""accel.DevicePool: several devices, placement by policy, down-marks and refresh (include/accel/device/pool.hpp)."""

import numpy as np
import pytest

import accel


@pytest.fixture
def pool():
    opened = accel.DevicePool.open("cpu,cpu")
    yield opened
    for device in opened.devices:
        device.close()


def test_the_pool_opens_each_entry_as_a_device_of_its_own(pool):
    assert len(pool) == 2 and [pool.spec(i) for i in range(2)] == ["cpu", "cpu"]
    first, second = pool.devices
    assert isinstance(first, accel.Device) and first.kind == "cpu" and first != second
    assert pool.device(1) == second
    assert [state["index"] for state in pool.states()] == [0, 1]
    assert all(state["usable"] and state["health"] is None and state["down"] is None for state in pool.states())


def test_a_pooled_device_runs_requests(pool, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 2)).astype(np.float32)
    placed = pool.place(accel.PlacementPolicy.least_loaded)
    device = pool.device(placed.index)
    c = device.allocate((3, 2), "float32")
    future = device.gemm(device.upload(a), device.upload(b), c)
    future.result()
    pool.finish(placed, future)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-5, atol=1e-5)
    state = pool.state(placed.index)
    assert state["requests_placed"] == 1 and state["requests_in_flight"] == 0 and state["requests_failed"] == 0


def test_round_robin_takes_turns_and_least_loaded_weighs(pool):
    turns = [pool.place("round_robin") for _ in range(4)]
    assert [p.index for p in turns] == [turns[0].index, 1 - turns[0].index] * 2
    for placed in turns:
        pool.finish(placed)
    heavy = pool.place("least_loaded", weight=100)
    light = pool.place("least_loaded", weight=1)
    assert heavy.weight == 100 and light.index != heavy.index
    assert pool.state(heavy.index)["weight_in_flight"] == 100
    assert pool.place("least_loaded", weight=1).index == light.index  # 2 < 100 in flight
    pool.finish(heavy)
    assert pool.state(heavy.index)["weight_in_flight"] == 0
    assert pool.state(heavy.index)["weight_placed"] == 102  # and its two round_robin turns


def test_a_device_failure_marks_the_device_down_until_refresh(pool):
    placed = pool.place("round_robin")
    pool.finish(placed, accel.Unavailable("worker lost"))
    state = pool.state(placed.index)
    assert not state["usable"] and "worker lost" in state["down"] and state["times_down"] == 1
    assert state["requests_failed"] == 1
    assert {pool.place("round_robin").index for _ in range(3)} == {1 - placed.index}
    pool.refresh()
    assert pool.state(placed.index)["usable"]


def test_a_request_error_does_not_mark_the_device_down(pool):
    placed = pool.place()
    pool.finish(placed, accel.InvalidArgument("bad shape"))
    assert pool.state(placed.index)["usable"] and pool.state(placed.index)["requests_failed"] == 1


def test_no_usable_device_raises_unavailable_naming_why(pool):
    pool.mark_down(0, "maintenance")
    pool.mark_down(1, "maintenance")
    with pytest.raises(accel.Unavailable, match="maintenance"):
        pool.place()
    pool.refresh(1)
    assert pool.place().index == 1


def test_own_counters_are_apart_but_the_devices_are_shared(pool):
    other = pool.with_own_counters()
    pool.mark_down(0, "for the first pool only")
    assert other.state(0)["usable"] and not pool.state(0)["usable"]
    assert other.device(0) == pool.device(0)


def test_bad_arguments_raise_invalid_argument(pool):
    with pytest.raises(accel.InvalidArgument, match="'policy' must be one of 'least_loaded'"):
        pool.place("fastest")
    with pytest.raises(accel.InvalidArgument, match="index 2"):
        pool.device(2)
    with pytest.raises(accel.InvalidArgument, match="outcome"):
        pool.finish(pool.place(), "done")
    with pytest.raises(accel.InvalidArgument, match="gpu"):
        accel.DevicePool.open("cpu,gpu")
    with pytest.raises(accel.InvalidArgument):
        accel.DevicePool.open("")

