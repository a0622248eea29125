"""Run-time compiled kernels (accel::jit): CUTLASS GEMM, grouped GEMM and convolution (compiled on first use on a
CUDA device; a double-precision reference on the CPU), and NVRTC kernels from CUDA C++ source (CUDA devices only:
the CPU device answers accel.NotSupported).

    program = accel.Program("scale.cu", 'extern "C" __global__ void scale(float* x, float a, unsigned long long n)'
                            '{ auto i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }')
    device.launch_kernel(program, "scale", grid=(n + 255) // 256, block=256,
                         args=[accel.KernelArg.inout(x), accel.KernelArg.f32(2.0), accel.KernelArg.u64(n)])

Device.cutlass_gemm and cutlass_conv take the request structs' members as keyword arguments; here sizes and types
default from the buffers' shapes (as the layouts store them: A row-major [m, k], B column-major [n, k], D row-major
[m, n] by default).
"""

from . import _shapes
from ._accel import KernelArg, Program
from .dnn import conv_shape_defaults

__all__ = ["KernelArg", "Program"]


def _rows_columns(buffer, layout, what):
    if len(buffer.shape) != 2:
        raise ValueError(f"{what}: give m, n and k, or 2-D buffers (not {buffer.shape})")
    rows, columns = buffer.shape
    return (rows, columns) if layout == "row_major" else (columns, rows)


def cutlass_gemm(self, a, b, d, c=None, **kwargs):
    """D = activation(alpha A B (* scales) + beta C + bias) + residual, one CUTLASS kernel (accel::CutlassGemm). m
    and k from A's shape, n from D's, input from A's dtype, output from D's. Returns an accel.Future."""
    if not {"m", "n", "k"} & kwargs.keys():
        kwargs["m"], kwargs["k"] = _rows_columns(a, kwargs.get("layout_a", "row_major"), "cutlass_gemm")
        kwargs["n"] = _rows_columns(d, kwargs.get("layout_c", "row_major"), "cutlass_gemm")[1]
    kwargs.setdefault("input", a.dtype)
    kwargs.setdefault("output", d.dtype)
    return cutlass_gemm.__wrapped__(self, a=a, b=b, c=c, d=d, **kwargs)


def cutlass_grouped_gemm(self, groups, **kwargs):
    """One launch for GEMMs of different shapes (accel::CutlassGroupedGemm): `groups` is a list of dicts (m, n, k,
    a, b, c, d, lda, ..., each matrix a Buffer or a (Buffer, offset) pair); input and output default from the
    first group's a and d. Returns an accel.Future."""
    first = groups[0] if groups and isinstance(groups[0], dict) else {}
    for kind, matrix in (("input", "a"), ("output", "d")):
        ref = first.get(matrix)
        buffer = ref[0] if isinstance(ref, tuple) else ref
        if kind not in kwargs and buffer is not None:
            kwargs[kind] = buffer.dtype
    return cutlass_grouped_gemm.__wrapped__(self, groups=groups, **kwargs)


def cutlass_conv(self, x, w, y, pass_="fprop", **kwargs):
    """An implicit-GEMM 2-D convolution (accel::CutlassConv): x [N, H, W, C], w [K, R, S, C], y [N, P, Q, K]
    channels-last; pass_ fprop writes y, dgrad x, wgrad w. Sizes from x's and w's shapes. Returns an
    accel.Future."""
    return cutlass_conv.__wrapped__(self, x=x, w=w, y=y, pass_=pass_,
                                    **conv_shape_defaults(kwargs, x, w, "cutlass_conv"))


_shapes.install(cutlass_gemm, cutlass_grouped_gemm, cutlass_conv)
