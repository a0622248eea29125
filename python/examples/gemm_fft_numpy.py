"""GEMM and FFT on NumPy arrays: a batched row-major matrix product with a bias and ReLU fused into it, then a batched
real-to-complex 2-D FFT of the products, both on one accel device, checked against NumPy.

    python gemm_fft_numpy.py [--device cpu]

The arrays are copied to the device (Device.upload) and back (Buffer.numpy); the requests return accel.Futures,
waited for with result(). Requests on one device run in the order they were sent, so the FFT, sent right after the
GEMM, reads the GEMM's output without waiting for it on the host in between.
"""

import argparse

import numpy as np

import accel


def run(kind):
    rng = np.random.default_rng(44)
    batch, m, k, n = 4, 24, 33, 16
    a = rng.standard_normal((batch, m, k)).astype(np.float32)
    b = rng.standard_normal((batch, k, n)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)

    with accel.Device.open(kind) as device:
        # C = relu(A @ B + bias): m, n, k and the batch come from the buffers' shapes.
        product = device.allocate((batch, m, n), "float32")
        device.gemm(device.upload(a), device.upload(b), product, bias=device.upload(bias),
                    bias_vector=accel.BiasVector.per_column, activation="relu")
        # A real-to-complex 2-D FFT over the last two axes of each of the `batch` products: n // 2 + 1 columns out.
        spectrum = device.allocate((batch, m, n // 2 + 1), "complex64")
        device.fft(product, spectrum, type=accel.FftType.r2c, rank=2).result()  # waits for both requests
        computed_product, computed_spectrum = product.numpy(), spectrum.numpy()

    expected_product = np.maximum(a @ b + bias, 0)
    np.testing.assert_allclose(computed_product, expected_product, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(computed_spectrum, np.fft.rfft2(expected_product), rtol=1e-3, atol=1e-2)
    print(f"GEMM ({batch} x {m}x{k} @ {k}x{n}, bias, relu) and 2-D FFT match NumPy")
    return computed_product, computed_spectrum


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    return run(parser.parse_args(argv).device)


if __name__ == "__main__":
    main()
