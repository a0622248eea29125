"""The JIT family on the CPU device: CUTLASS requests run by its double-precision reference (vs NumPy); NVRTC
kernels are CUDA-only, and the CPU device says so (python/gpu_tests/test_jit_cuda.py launches them on a GPU)."""

import numpy as np
import pytest

import accel

SCALE = r'''extern "C" __global__ void scale(float* x, float a, unsigned long long n) {
  auto i = blockIdx.x * 1ull * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}'''


# CUTLASS's TMA loads need every row and matrix start on 16 bytes: leading dimensions of 8 f16 or 4 f32 elements.

def test_cutlass_gemm_with_a_bias_and_activation_matches_numpy(device, rng):
    a = rng.standard_normal((8, 16)).astype(np.float16)           # row-major m x k
    b = rng.standard_normal((8, 16)).astype(np.float16)           # column-major k x n: stored as [n, k]
    bias = rng.standard_normal(8).astype(np.float32)
    d = device.allocate((8, 8), "float32")
    future = device.cutlass_gemm(device.upload(a), device.upload(b), d, alpha=0.5, bias=device.upload(bias),
                                 bias_vector="per_row", activation=accel.Activation.relu)
    assert isinstance(future, accel.Future)
    future.result()
    product = 0.5 * a.astype(np.float64) @ b.astype(np.float64).T + bias[:, None]
    np.testing.assert_allclose(d.numpy(), np.maximum(product, 0), rtol=1e-3, atol=1e-3)


def test_cutlass_gemm_refuses_what_its_epilogue_lacks(device):
    a, b = device.allocate((8, 8), "float16"), device.allocate((8, 8), "float16")
    with pytest.raises(accel.NotSupported, match="sigmoid"):
        device.cutlass_gemm(a, b, device.allocate((8, 8), "float16"), activation="sigmoid").result()
    with pytest.raises(accel.InvalidArgument, match="aligned"):
        device.cutlass_gemm(device.allocate((2, 2), "float16"), b, a, m=2, n=2, k=2).result()
    with pytest.raises(accel.InvalidArgument, match="'when_compiling' must be one of 'wait'"):
        device.cutlass_gemm(a, b, a, when_compiling="later")


def test_cutlass_grouped_gemm_runs_each_group(device, rng):
    a1, b1 = rng.standard_normal((8, 16)).astype(np.float16), rng.standard_normal((8, 16)).astype(np.float16)
    a2, b2 = rng.standard_normal((16, 8)).astype(np.float16), rng.standard_normal((8, 8)).astype(np.float16)
    d = device.allocate((8 * 8 + 16 * 8,), "float32")
    groups = [{"m": 8, "n": 8, "k": 16, "a": device.upload(a1), "b": device.upload(b1), "d": d},
              {"m": 16, "n": 8, "k": 8, "a": device.upload(a2), "b": device.upload(b2), "d": (d, 64)}]
    device.cutlass_grouped_gemm(groups).result()
    out = d.numpy()
    np.testing.assert_allclose(out[:64].reshape(8, 8), a1.astype(np.float64) @ b1.astype(np.float64).T, rtol=1e-3,
                               atol=1e-3)
    np.testing.assert_allclose(out[64:].reshape(16, 8), a2.astype(np.float64) @ b2.astype(np.float64).T, rtol=1e-3,
                               atol=1e-3)
    with pytest.raises(accel.InvalidArgument, match=r"'groups\[0\]': no argument 'e'"):
        device.cutlass_grouped_gemm([{"e": 1}], input="float16", output="float32")


def test_cutlass_conv_fprop_matches_a_direct_convolution(device, rng):
    x = rng.standard_normal((1, 4, 4, 8)).astype(np.float16)      # N H W C
    w = rng.standard_normal((8, 3, 3, 8)).astype(np.float16)      # K R S C
    y = device.allocate((1, 4, 4, 8), "float16")
    device.cutlass_conv(device.upload(x), device.upload(w), y, pre_padding=[1, 1], post_padding=[1, 1]).result()
    padded = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    expected = sum(np.einsum("nhwc,kc->nhwk", padded[:, i:i + 4, j:j + 4, :], w[:, i, j, :].astype(np.float64))
                   for i in range(3) for j in range(3))
    np.testing.assert_allclose(y.numpy().astype(np.float64), expected, rtol=2e-2, atol=2e-2)
    with pytest.raises(accel.NotSupported, match="channels-last"):
        device.cutlass_conv(device.upload(x), device.upload(w), y, layout="channels_first").result()


def test_a_program_and_its_arguments_mirror_the_cpp_structs(device):
    program = accel.Program("scale.cu", SCALE, options=["-DTILE=64"], headers={"tile.h": "#define T 1"})
    assert program.name == "scale.cu" and program.options == ["-DTILE=64"] and "scale" in program.source
    x = device.allocate((16,), "float32")
    assert [accel.KernelArg.inout(x).size, accel.KernelArg.f32(2.0).size, accel.KernelArg.u64(16).size,
            accel.KernelArg.i32(-1).size] == [8, 4, 8, 4]
    with pytest.raises(accel.InvalidArgument, match="'code' must be one of 'cubin', 'ptx'"):
        accel.Program("p.cu", SCALE, code="sass")


def test_the_cpu_device_answers_a_kernel_launch_not_supported(device):
    x = device.upload(np.ones(16, np.float32))
    program = accel.Program("scale.cu", SCALE)
    with pytest.raises(accel.NotSupported):
        device.launch_kernel(program, "scale", grid=1, block=(16, 1, 1),
                             args=[accel.KernelArg.inout(x), accel.KernelArg.f32(2.0), accel.KernelArg.u64(16)]).result()
    other = accel.Device.open("cpu")
    try:
        with pytest.raises(accel.InvalidArgument, match="args\\[0\\]"):
            other.launch_kernel(program, "scale", grid=1, block=16, args=[accel.KernelArg.inout(x)])
    finally:
        other.close()
