"""Python defaults over the C++ requests' keyword arguments (src/python/requests.cpp binds them as in C++): sizes,
batch and dtypes taken from the buffers' shapes where the caller leaves them out. Every keyword of the C++ request
struct is still accepted and wins."""

import math

from ._accel import Device

_gemm = Device.gemm
_fft = Device.fft
_random = Device.random
_contract = Device.contract
_copy_buffer = Device.copy_buffer

_PRECISION = {"complex64": "float32", "float32": "float32", "complex128": "float64", "float64": "float64",
              "float16": "float16"}


def gemm(self, a, b, c, **kwargs):
    """C = alpha * op(A) @ op(B) + beta * C (+ bias, activation): accel::Gemm. Row-major by default; m, n, k and
    batch come from the buffers' shapes ([batch,] rows, columns) unless given; input_type from A, output_type from C.
    Returns an accel.Future."""
    if kwargs.get("order", "row_major") == "row_major" and not {"m", "n", "k"} & kwargs.keys():
        if len(a.shape) < 2 or len(b.shape) < 2:
            raise ValueError("gemm: give m, n and k, or buffers shaped ([batch,] rows, columns)")
        rows_a, cols_a = a.shape[-2:]
        rows_b, cols_b = b.shape[-2:]
        transposed_a = kwargs.get("transpose_a", "none") == "transpose"
        transposed_b = kwargs.get("transpose_b", "none") == "transpose"
        kwargs["m"], kwargs["k"] = (cols_a, rows_a) if transposed_a else (rows_a, cols_a)
        kwargs["n"] = rows_b if transposed_b else cols_b
        if len(a.shape) == 3 and "batch" not in kwargs:
            kwargs["batch"] = a.shape[0]
    kwargs.setdefault("input_type", a.dtype)
    kwargs.setdefault("output_type", c.dtype)
    return _gemm(self, a=a, b=b, c=c, **kwargs)


def fft(self, input, output=None, **kwargs):
    """An FFT (accel::Fft): c2c unless `type` says r2c or c2r; forward unless `direction="inverse"`. The transform's
    rank and sizes come from the logical array's shape (the input's; the output's for c2r) unless `n` is given: its
    last `rank` axes (default: all, at most 3) are transformed, the axes before them are the batch. In place when
    `output` is None. Returns an accel.Future."""
    output = input if output is None else output
    kind = kwargs.get("type", "c2c")
    if "n" not in kwargs:
        logical = output.shape if kind == "c2r" else input.shape
        rank = kwargs.get("rank", min(len(logical), 3))
        if rank < 1 or rank > len(logical):
            raise ValueError(f"fft: rank {rank} does not fit an array of shape {logical}")
        kwargs["rank"] = rank
        kwargs["n"] = list(logical[len(logical) - rank:])
        kwargs.setdefault("batch", math.prod(logical[:len(logical) - rank]))
    kwargs.setdefault("precision", _PRECISION.get(input.dtype, input.dtype))
    return _fft(self, input=input, output=output, **kwargs)


def random(self, output, **kwargs):
    """Fills `output` with random numbers (accel::rand::Generate): Philox4x32-10 uniform by default; `distribution`
    normal, log_normal, poisson or bits; `seed` and `offset` as request data (the same numbers on every device).
    count and dtype come from the buffer unless given (`lambda_` is Poisson's lambda). Returns an accel.Future."""
    kwargs.setdefault("count", output.size)
    kwargs.setdefault("dtype", output.dtype)
    return _random(self, output=output, **kwargs)


def contract(self, a, b, d, **kwargs):
    """D = alpha * contraction of A and B + beta * C (accel::tensor::Contract). Each tensor is a (buffer, "modes")
    pair, one letter per axis: contract(a=(A, "ik"), b=(B, "kj"), d=(D, "ij")) is a matrix product. dtype from D's
    buffer unless given. Returns an accel.Future."""
    kwargs.setdefault("dtype", d[0].dtype)
    return _contract(self, a=a, b=b, d=d, **kwargs)


def einsum(self, subscripts, a, b, out, **kwargs):
    """einsum("ik,kj->ij", A, B, out=D): contract() with NumPy's notation for two operands."""
    inputs, _, output = subscripts.replace(" ", "").partition("->")
    modes_a, _, modes_b = inputs.partition(",")
    if not output or not modes_b:
        raise ValueError(f"einsum: '{subscripts}' must read 'a_modes,b_modes->out_modes'")
    return contract(self, (a, modes_a), (b, modes_b), (out, output), **kwargs)


def copy_buffer(self, source, destination, count=None, **kwargs):
    """Copies `count` elements (default: all of `source` from source_offset) into `destination` from
    destination_offset (accel::CopyOnDevice); both buffers of this device. Returns an accel.Future."""
    if count is None:
        count = source.size - kwargs.get("source_offset", 0)
    return _copy_buffer(self, source=source, destination=destination, count=count, **kwargs)


gemm.__wrapped__ = _gemm
contract.__wrapped__ = _contract
random.__wrapped__ = _random
fft.__wrapped__ = _fft
copy_buffer.__wrapped__ = _copy_buffer
Device.gemm = gemm
Device.fft = fft
Device.random = random
Device.contract = contract
Device.einsum = einsum
Device.copy_buffer = copy_buffer
