"""GEMM and FFT from Python against NumPy's results."""

import numpy as np
import pytest

import accel


@pytest.mark.parametrize("dtype, tolerance", [("float32", 1e-4), ("float64", 1e-12)])
def test_gemm_matches_numpy(device, rng, dtype, tolerance):
    a = rng.standard_normal((37, 19)).astype(dtype)
    b = rng.standard_normal((19, 23)).astype(dtype)
    c = device.allocate((37, 23), dtype)
    device.gemm(a=device.upload(a), b=device.upload(b), c=c).result()
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=tolerance, atol=tolerance)


def test_gemm_keywords_mirror_the_cpp_request(device, rng):
    a = rng.standard_normal((8, 5)).astype(np.float32)  # stored k x m: op(A) = A^T
    b = rng.standard_normal((6, 8)).astype(np.float32)  # stored n x k: op(B) = B^T
    c0 = rng.standard_normal((5, 6)).astype(np.float32)
    c = device.upload(c0)
    device.gemm(a=device.upload(a), b=device.upload(b), c=c, m=5, n=6, k=8, transpose_a="transpose",
                transpose_b="transpose", alpha=0.5, beta=2.0, input_type="float32", output_type="float32").result()
    np.testing.assert_allclose(c.numpy(), 0.5 * a.T @ b.T + 2.0 * c0, rtol=1e-4, atol=1e-4)


def test_batched_gemm_with_bias_and_relu(device, rng):
    a = rng.standard_normal((3, 4, 7)).astype(np.float32)
    b = rng.standard_normal((3, 7, 5)).astype(np.float32)
    bias = rng.standard_normal(5).astype(np.float32)
    c = device.allocate((3, 4, 5), "float32")
    device.gemm(a=device.upload(a), b=device.upload(b), c=c, bias=device.upload(bias), activation="relu",
                bias_vector="per_column").result()
    np.testing.assert_allclose(c.numpy(), np.maximum(a @ b + bias, 0), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype, tolerance", [("complex64", 1e-4), ("complex128", 1e-10)])
def test_fft_c2c_forward_and_inverse_match_numpy(device, rng, dtype, tolerance):
    x = (rng.standard_normal(64) + 1j * rng.standard_normal(64)).astype(dtype)
    spectrum = device.allocate((64,), dtype)
    device.fft(device.upload(x), spectrum).result()
    np.testing.assert_allclose(spectrum.numpy(), np.fft.fft(x), rtol=tolerance, atol=tolerance * 64)
    back = device.allocate((64,), dtype)
    device.fft(spectrum, back, direction="inverse", normalization="inverse").result()
    np.testing.assert_allclose(back.numpy(), x, rtol=tolerance, atol=tolerance)


def test_fft_2d_batched_in_place(device, rng):
    x = (rng.standard_normal((3, 8, 16)) + 1j * rng.standard_normal((3, 8, 16))).astype(np.complex64)
    buffer = device.upload(x)
    device.fft(buffer, rank=2).result()  # the last two axes, batch of 3, in place
    np.testing.assert_allclose(buffer.numpy(), np.fft.fft2(x), rtol=1e-4, atol=1e-3)


def test_fft_r2c_matches_numpy_rfft(device, rng):
    x = rng.standard_normal(32).astype(np.float32)
    spectrum = device.allocate((17,), "complex64")
    device.fft(device.upload(x), spectrum, type="r2c").result()
    np.testing.assert_allclose(spectrum.numpy(), np.fft.rfft(x), rtol=1e-4, atol=1e-4)


def test_unknown_keyword_is_refused_by_name(device):
    a = device.allocate((2, 2))
    with pytest.raises(accel.InvalidArgument, match="no argument 'alhpa'"):
        device.gemm(a=a, b=a, c=a, alhpa=2.0)


def test_wrong_enum_value_names_the_choices(device):
    a = device.allocate((2, 2))
    with pytest.raises(accel.InvalidArgument, match="'transpose_a' must be one of 'none', 'transpose'"):
        device.gemm(a=a, b=a, c=a, transpose_a="yes")


def test_wrong_type_names_the_argument(device):
    a = device.allocate((2, 2))
    with pytest.raises(accel.InvalidArgument, match="argument 'c' must be an accel.Buffer"):
        device.gemm(a=a, b=a, c=np.zeros((2, 2)))


def test_an_operand_too_small_fails_the_future_with_invalid_argument(device):
    a = device.allocate((2, 3))
    with pytest.raises(accel.InvalidArgument, match="operand 'a'"):
        device.gemm(a=a, b=a, c=a, m=3, n=3, k=3).result()


def test_a_buffer_of_another_device_is_refused(device):
    with accel.Device.open("cpu") as other:
        foreign = other.allocate((2, 2))
        mine = device.allocate((2, 2))
        with pytest.raises(accel.InvalidArgument, match="belongs to device"):
            device.gemm(a=foreign, b=mine, c=mine)


def test_random_normal_is_reproducible_and_plausible(device):
    first, second = device.allocate((100_000,), "float32"), device.allocate((100_000,), "float32")
    device.random(first, distribution="normal", seed=7).result()
    device.random(second, distribution="normal", seed=7).result()
    values = first.numpy()
    np.testing.assert_array_equal(values, second.numpy())
    assert abs(values.mean()) < 0.02 and abs(values.std() - 1) < 0.02


def test_random_offset_continues_the_stream(device):
    whole, tail = device.allocate((64,), "float32"), device.allocate((32,), "float32")
    device.random(whole, seed=3).result()
    device.random(tail, seed=3, offset=32).result()
    np.testing.assert_array_equal(whole.numpy()[32:], tail.numpy())


def test_contract_and_einsum_match_numpy(device, rng):
    a = rng.standard_normal((4, 5, 6)).astype(np.float32)
    b = rng.standard_normal((6, 5, 3)).astype(np.float32)
    d = device.allocate((4, 3), "float32")
    device.einsum("ikl,lkj->ij", device.upload(a), device.upload(b), d).result()
    np.testing.assert_allclose(d.numpy(), np.einsum("ikl,lkj->ij", a, b), rtol=1e-4, atol=1e-4)
    e = device.allocate((3, 4), "float32")
    device.contract(a=(device.upload(a), "ikl"), b=(device.upload(b), "lkj"), d=(e, "ji"), alpha=2.0).result()
    np.testing.assert_allclose(e.numpy(), 2 * np.einsum("ikl,lkj->ji", a, b), rtol=1e-4, atol=1e-4)


def test_contract_modes_must_fit_the_buffer(device):
    a = device.allocate((2, 3), "float32")
    with pytest.raises(accel.InvalidArgument, match="names 3 modes"):
        device.contract(a=(a, "ijk"), b=(a, "jk"), d=(a, "ik"))
    with pytest.raises(accel.InvalidArgument, match="a \\(accel.Buffer, 'modes'\\) pair"):
        device.contract(a=a, b=(a, "ij"), d=(a, "ij"))
