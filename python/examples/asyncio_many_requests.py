"""Many concurrent requests from asyncio: a thousand GEMMs and a thousand FFTs in flight at once, each a coroutine
that uploads its operands, awaits its request and then awaits the copy of its result, all gathered with
asyncio.gather; every result is checked against NumPy's.

    python asyncio_many_requests.py [--gemms 1000] [--ffts 1000] [--device cpu]

accel's futures complete on accel's threads; `await` hands each completion to the event loop's thread, so the
coroutines below never block the loop while the device works.
"""

import argparse
import asyncio
import time

import numpy as np

import accel


async def multiply(device, a, b):
    """a @ b on the device (row-major, float32), as a NumPy array."""
    c = device.allocate((a.shape[0], b.shape[1]), "float32")
    await device.gemm(device.upload(a), device.upload(b), c)
    return await c.numpy_async()


async def spectrum(device, signal):
    """The FFT of a complex signal on the device, in place, as a NumPy array."""
    buffer = device.upload(signal)
    await device.fft(buffer)
    return await buffer.numpy_async()


async def run(gemms, ffts, kind):
    rng = np.random.default_rng(2026)
    # Odd sizes, different for every request.
    pairs = [(rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32))
             for m, k, n in rng.integers(1, 48, size=(gemms, 3))]
    signals = [(rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
               for n in rng.integers(1, 300, size=ffts)]
    with accel.Device.open(kind) as device:
        start = time.perf_counter()
        results = await asyncio.gather(*(multiply(device, a, b) for a, b in pairs),
                                       *(spectrum(device, signal) for signal in signals))
        elapsed = time.perf_counter() - start
    products, spectra = results[:gemms], results[gemms:]
    for (a, b), product in zip(pairs, products):
        np.testing.assert_allclose(product, a @ b, rtol=1e-4, atol=1e-4)
    for signal, computed in zip(signals, spectra):
        np.testing.assert_allclose(computed, np.fft.fft(signal), rtol=1e-3, atol=1e-3 * np.sqrt(signal.size))
    print(f"{gemms} GEMMs and {ffts} FFTs awaited concurrently in {elapsed:.2f} s: all {len(results)} match NumPy")
    return len(results)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gemms", type=int, default=1000)
    parser.add_argument("--ffts", type=int, default=1000)
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    arguments = parser.parse_args(argv)
    return asyncio.run(run(arguments.gemms, arguments.ffts, arguments.device))


if __name__ == "__main__":
    main()
