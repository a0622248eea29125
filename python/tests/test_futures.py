"""accel.Future from threads and from asyncio: every completion delivered once, on the right thread."""

import asyncio
import threading
import time

import numpy as np
import pytest

import accel


def small_gemm(device):
    a = device.upload(np.ones((4, 4), np.float32))
    c = device.allocate((4, 4), "float32")
    return device.gemm(a=a, b=a, c=c), c


def test_result_done_and_timeout(device):
    future, c = small_gemm(device)
    assert future.result(timeout=30) is None
    assert future.done() and not future.cancelled() and future.exception() is None
    np.testing.assert_array_equal(c.numpy(), np.full((4, 4), 4.0, np.float32))


def test_add_done_callback_runs_once_per_callback_even_after_completion(device):
    future, _ = small_gemm(device)
    seen = []
    future.add_done_callback(lambda f: seen.append(("early", f.result())))
    future.result()
    future.add_done_callback(lambda f: seen.append(("late", f.result())))  # already done: runs now
    deadline = time.monotonic() + 10
    while len(seen) < 2 and time.monotonic() < deadline:
        time.sleep(0.001)
    assert sorted(seen) == [("early", None), ("late", None)]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the ZeroDivisionError, reported
def test_a_failing_callback_does_not_lose_the_others(device):
    future, _ = small_gemm(device)
    seen = threading.Event()
    future.add_done_callback(lambda f: 1 / 0)
    future.add_done_callback(lambda f: seen.set())
    future.result()
    assert seen.wait(10)


def test_exception_returns_the_error_without_raising(device):
    a = device.allocate((2,))
    future = device.gemm(a=a, b=a, c=a, m=4, n=4, k=4)
    assert isinstance(future.exception(timeout=30), accel.InvalidArgument)
    with pytest.raises(accel.InvalidArgument):
        future.result()


def test_futures_waited_from_many_threads(device):
    results, errors = [], []

    def worker():
        try:
            for _ in range(50):
                future, c = small_gemm(device)
                future.result(timeout=60)
                results.append(float(c.numpy()[0, 0]))
        except Exception as error:  # noqa: BLE001  (reported below)
            errors.append(error)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and results == [4.0] * 400


def test_a_thousand_concurrent_awaits_none_lost(device):
    a = device.upload(np.ones((2, 2), np.float32))
    outputs = [device.allocate((2, 2), "float32") for _ in range(1000)]
    loop_thread = []

    async def one(c):
        await device.gemm(a=a, b=a, c=c)
        loop_thread.append(threading.get_ident())
        return c

    async def main():
        return await asyncio.wait_for(asyncio.gather(*(one(c) for c in outputs)), timeout=120)

    done = asyncio.run(main())
    assert len(done) == 1000 and len(loop_thread) == 1000
    assert set(loop_thread) == {threading.get_ident()}  # resumed on the loop's thread
    assert all(c.numpy()[0, 0] == 2.0 for c in done)


def test_await_raises_the_request_error(device):
    a = device.allocate((2,))

    async def main():
        await device.gemm(a=a, b=a, c=a, m=4, n=4, k=4)

    with pytest.raises(accel.InvalidArgument):
        asyncio.run(main())


def test_await_gives_the_value(device):
    buffer = device.upload(np.arange(3.0))

    async def main():
        return await buffer.numpy_async()

    np.testing.assert_array_equal(asyncio.run(main()), np.arange(3.0))


def test_result_timeout_raises_timeout_error_and_the_future_stays_usable(device):
    n = 1536  # about 7 GFLOP: far longer than the timeout on any CPU
    a = device.upload(np.ones((n, n), np.float32))
    c = device.allocate((n, n), "float32")
    future = device.gemm(a=a, b=a, c=c)
    with pytest.raises(TimeoutError):
        future.result(timeout=0.0001)
    assert future.result(timeout=120) is None and future.done()
    assert c.numpy()[0, 0] == n
