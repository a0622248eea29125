"""``await accel_future`` in asyncio: the completion, which happens on an accel thread, is handed to the event
loop's own thread with ``loop.call_soon_threadsafe``; the awaiting coroutine resumes there."""

import asyncio


def _settle(waiter, future):
    if waiter.done():  # the awaiting task was cancelled meanwhile
        return
    error = future.exception()
    if error is None:
        waiter.set_result(future.result())
    else:
        waiter.set_exception(error)


def await_future(future):
    """The iterator accel.Future.__await__ returns."""
    loop = asyncio.get_running_loop()
    waiter = loop.create_future()

    def on_done(done):
        try:
            loop.call_soon_threadsafe(_settle, waiter, done)
        except RuntimeError:  # the loop was closed: nobody awaits any more
            pass

    future.add_done_callback(on_done)
    return waiter.__await__()
