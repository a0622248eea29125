"""The cuDNN and JIT families from Python on a CUDA device: convolutions and an operation graph through cuDNN, an
NVRTC kernel, CUTLASS GEMM and convolution (compiled on first use: tens of seconds each, then cached on disk). The CPU
suite (python/tests/test_dnn.py, test_jit.py) checks the same bindings against the CPU reference. Run by
scripts/gpu-python-check; skipped where accel has no CUDA device."""

import numpy as np

import accel

SCALE = r'''extern "C" __global__ void scale(float* x, float a, unsigned long long n) {
  auto i = blockIdx.x * 1ull * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}'''

AXPY = r'''template <class T> __global__ void axpy(T* y, const T* x, T a, unsigned long long n) {
  auto i = blockIdx.x * 1ull * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}'''


def conv_nhwc(x, w, padding):
    """Cross-correlation of x [N, H, W, C] by w [K, R, S, C], stride 1, symmetric padding, in float64."""
    _, h, wi, _ = x.shape
    _, r, s, _ = w.shape
    padded = np.pad(x.astype(np.float64), ((0, 0), (padding, padding), (padding, padding), (0, 0)))
    p, q = h + 2 * padding - r + 1, wi + 2 * padding - s + 1
    return sum(np.einsum("nhwc,kc->nhwk", padded[:, i:i + p, j:j + q, :], w[:, i, j, :].astype(np.float64))
               for i in range(r) for j in range(s))


def test_conv_fwd_with_a_fused_bias_and_relu_through_cudnn(cuda, rng):
    x = rng.standard_normal((2, 8, 8, 16)).astype(np.float16)
    w = (rng.standard_normal((32, 3, 3, 16)) / 8).astype(np.float16)
    bias = rng.standard_normal(32).astype(np.float16)
    y = cuda.allocate((2, 8, 8, 32), "float16")
    cuda.conv_fwd(cuda.upload(x), cuda.upload(w), y, bias=cuda.upload(bias), pre_padding=[1, 1],
                  post_padding=[1, 1], activation="relu").result()
    expected = np.maximum(conv_nhwc(x, w, 1) + bias.astype(np.float64), 0)
    np.testing.assert_allclose(y.numpy().astype(np.float64), expected, rtol=2e-2, atol=5e-2)


def test_conv_backward_passes_through_cudnn(cuda, rng):
    x = rng.standard_normal((1, 6, 6, 8)).astype(np.float32)
    w = rng.standard_normal((8, 3, 3, 8)).astype(np.float32)
    dy = rng.standard_normal((1, 4, 4, 8)).astype(np.float32)
    dx, dw = cuda.allocate(x.shape, "float32"), cuda.allocate(w.shape, "float32")
    cuda.conv_bwd_data(cuda.upload(dy), cuda.upload(w), dx).result()
    cuda.conv_bwd_filter(cuda.upload(x), cuda.upload(dy), dw).result()
    inner = float((conv_nhwc(x, w, 0) * dy).sum())   # <conv(x, w), dy> = <x, dx> = <w, dw>
    assert abs(float((x * dx.numpy()).sum()) - inner) <= 1e-2 * abs(inner) + 1e-2
    assert abs(float((w * dw.numpy()).sum()) - inner) <= 1e-2 * abs(inner) + 1e-2


def test_an_operation_graph_runs_through_cudnn(cuda, rng):
    b = accel.dnn.GraphBuilder()
    x = b.tensor("float16", [1, 16, 8, 8], "channels_last")
    w = b.tensor("float16", [16, 16, 3, 3], "channels_last")
    bias = b.tensor("float16", [1, 16, 1, 1])
    y = b.relu(b.add(b.conv_forward(x, w, pre_padding=[1, 1], post_padding=[1, 1]), bias))
    b.output(y, "float16", "channels_last")
    graph = b.build()
    xs = rng.standard_normal((1, 8, 8, 16)).astype(np.float16)                  # NHWC storage
    ws = (rng.standard_normal((16, 3, 3, 16)) / 8).astype(np.float16)           # KRSC storage
    bs = rng.standard_normal(16).astype(np.float16)
    out = cuda.allocate((1, 8, 8, 16), "float16")
    cuda.run_graph(graph, {x: cuda.upload(xs), w: cuda.upload(ws), bias: cuda.upload(bs), y: out}).result()
    expected = np.maximum(conv_nhwc(xs, ws, 1) + bs.astype(np.float64), 0)
    np.testing.assert_allclose(out.numpy().astype(np.float64), expected, rtol=2e-2, atol=5e-2)


def test_an_nvrtc_kernel_runs_and_a_template_is_instantiated(cuda):
    n = 1000
    x = cuda.upload(np.arange(n, dtype=np.float32))
    cuda.launch_kernel(accel.Program("scale.cu", SCALE), "scale", grid=(n + 255) // 256, block=256,
                       args=[accel.KernelArg.inout(x), accel.KernelArg.f32(2.0), accel.KernelArg.u64(n)]).result()
    np.testing.assert_array_equal(x.numpy(), np.arange(n, dtype=np.float32) * 2)
    y = cuda.upload(np.ones(n, np.float64))
    program = accel.Program("axpy.cu", AXPY, name_expressions=["axpy<double>"])
    cuda.launch_kernel(program, "axpy<double>", grid=((n + 127) // 128, 1, 1), block=(128, 1, 1),
                       args=[accel.KernelArg.inout(y), accel.KernelArg.in_(cuda.upload(np.full(n, 3.0))),
                             accel.KernelArg.f64(0.5), accel.KernelArg.u64(n)]).result()
    np.testing.assert_array_equal(y.numpy(), np.full(n, 2.5))


def test_a_cutlass_gemm_with_its_epilogue(cuda, rng):
    a = (rng.standard_normal((128, 64)) / 8).astype(np.float16)
    b = (rng.standard_normal((96, 64)) / 8).astype(np.float16)    # column-major 64 x 96
    bias = rng.standard_normal(96).astype(np.float16)
    d = cuda.allocate((128, 96), "float16")
    cuda.cutlass_gemm(cuda.upload(a), cuda.upload(b), d, bias=cuda.upload(bias), bias_vector="per_column",
                      activation="relu", when_compiling="wait").result(timeout=600)
    expected = np.maximum(a.astype(np.float64) @ b.astype(np.float64).T + bias.astype(np.float64), 0)
    np.testing.assert_allclose(d.numpy().astype(np.float64), expected, rtol=2e-2, atol=2e-2)


def test_a_cutlass_convolution(cuda, rng):
    x = rng.standard_normal((1, 8, 8, 16)).astype(np.float16)
    w = (rng.standard_normal((32, 3, 3, 16)) / 8).astype(np.float16)
    y = cuda.allocate((1, 8, 8, 32), "float16")
    cuda.cutlass_conv(cuda.upload(x), cuda.upload(w), y, pre_padding=[1, 1], post_padding=[1, 1],
                      when_compiling="wait").result(timeout=600)
    np.testing.assert_allclose(y.numpy().astype(np.float64), conv_nhwc(x, w, 1), rtol=2e-2, atol=5e-2)
