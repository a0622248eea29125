"""Type stubs of the requests' enums (_enums.py makes them at import from the module's names;
python/tests/test_enums.py checks that this file lists the same)."""

import enum

__all__ = ["Activation", "BiasVector", "BinaryOp", "CodeKind", "CollectiveKind", "ConvPass", "Diagonal", "Distribution",
           "EigenJob", "ExecuteMode", "FftDirection", "FftNormalization", "FftType", "Fill", "GateLayout", "GemmCompute",
           "Generator", "KernelSchedule", "MatrixOrder", "Padding", "PlacementPolicy", "PointwiseMode", "PoolMode", "PoolingMode",
           "ReduceOp", "ReductionMode", "Side", "SparseFormat", "SparseStructure", "SvdJob", "TensorCompute",
           "TensorLayout", "Transpose", "WhenCompiling"]


class Activation(enum.StrEnum):
    identity = "identity"
    relu = "relu"
    gelu_tanh = "gelu_tanh"
    silu = "silu"
    gelu_erf = "gelu_erf"
    sigmoid = "sigmoid"
    tanh = "tanh"
    log1p_relu = "log1p_relu"


class BiasVector(enum.StrEnum):
    none = "none"
    per_row = "per_row"
    per_column = "per_column"
    per_channel = "per_channel"


class BinaryOp(enum.StrEnum):
    add = "add"
    sub = "sub"
    mul = "mul"
    div = "div"


class CodeKind(enum.StrEnum):
    cubin = "cubin"
    ptx = "ptx"


class CollectiveKind(enum.StrEnum):
    all_reduce = "all_reduce"
    all_gather = "all_gather"
    reduce_scatter = "reduce_scatter"
    broadcast = "broadcast"
    reduce = "reduce"
    send = "send"
    recv = "recv"


class ConvPass(enum.StrEnum):
    fprop = "fprop"
    dgrad = "dgrad"
    wgrad = "wgrad"


class Diagonal(enum.StrEnum):
    non_unit = "non_unit"
    unit = "unit"


class Distribution(enum.StrEnum):
    uniform = "uniform"
    normal = "normal"
    log_normal = "log_normal"
    poisson = "poisson"
    bits = "bits"


class EigenJob(enum.StrEnum):
    values = "values"
    values_and_vectors = "values_and_vectors"


class ExecuteMode(enum.StrEnum):
    automatic = "automatic"
    replay = "replay"
    direct = "direct"


class FftDirection(enum.StrEnum):
    forward = "forward"
    inverse = "inverse"


class FftNormalization(enum.StrEnum):
    none = "none"
    inverse = "inverse"
    orthonormal = "orthonormal"


class FftType(enum.StrEnum):
    c2c = "c2c"
    r2c = "r2c"
    c2r = "c2r"


class Fill(enum.StrEnum):
    lower = "lower"
    upper = "upper"


class GateLayout(enum.StrEnum):
    halves = "halves"
    groups_of_8 = "groups_of_8"


class GemmCompute(enum.StrEnum):
    standard = "standard"
    tf32 = "tf32"


class Generator(enum.StrEnum):
    philox4x32_10 = "philox4x32_10"
    xorwow = "xorwow"
    mrg32k3a = "mrg32k3a"
    sobol32 = "sobol32"


class KernelSchedule(enum.StrEnum):
    automatic = "automatic"
    tma_cooperative = "tma_cooperative"
    tma_pingpong = "tma_pingpong"


class MatrixOrder(enum.StrEnum):
    row_major = "row_major"
    column_major = "column_major"


class Padding(enum.StrEnum):
    zero = "zero"
    repeat_last = "repeat_last"


class PlacementPolicy(enum.StrEnum):
    least_loaded = "least_loaded"
    round_robin = "round_robin"
    most_free_memory = "most_free_memory"


class PointwiseMode(enum.StrEnum):
    add = "add"
    sub = "sub"
    mul = "mul"
    div = "div"
    min = "min"
    max = "max"
    relu = "relu"
    sigmoid = "sigmoid"
    tanh = "tanh"
    gelu = "gelu"
    gelu_approx_tanh = "gelu_approx_tanh"
    swish = "swish"
    elu = "elu"
    softplus = "softplus"
    identity = "identity"
    sqrt = "sqrt"
    rsqrt = "rsqrt"
    exp = "exp"
    log = "log"
    neg = "neg"
    abs = "abs"


class PoolMode(enum.StrEnum):
    mean = "mean"
    max = "max"
    first = "first"
    last = "last"
    mean_sqrt_length = "mean_sqrt_length"
    weighted_mean = "weighted_mean"


class PoolingMode(enum.StrEnum):
    max = "max"
    average_include_padding = "average_include_padding"
    average_exclude_padding = "average_exclude_padding"


class ReduceOp(enum.StrEnum):
    sum = "sum"
    prod = "prod"
    min = "min"
    max = "max"
    avg = "avg"


class ReductionMode(enum.StrEnum):
    add = "add"
    mul = "mul"
    min = "min"
    max = "max"
    mean = "mean"
    norm1 = "norm1"
    norm2 = "norm2"


class Side(enum.StrEnum):
    left = "left"
    right = "right"


class SparseFormat(enum.StrEnum):
    csr = "csr"
    csc = "csc"
    coo = "coo"
    blocked_ell = "blocked_ell"


class SparseStructure(enum.StrEnum):
    checked_each_use = "checked_each_use"
    fixed = "fixed"


class SvdJob(enum.StrEnum):
    none = "none"
    thin = "thin"
    full = "full"


class TensorCompute(enum.StrEnum):
    standard = "standard"
    float32 = "float32"
    float64 = "float64"
    float16 = "float16"
    bfloat16 = "bfloat16"
    tf32 = "tf32"
    tf32x3 = "tf32x3"


class TensorLayout(enum.StrEnum):
    channels_first = "channels_first"
    channels_last = "channels_last"


class Transpose(enum.StrEnum):
    none = "none"
    transpose = "transpose"


class WhenCompiling(enum.StrEnum):
    wait = "wait"
    library_fallback = "library_fallback"
    unavailable = "unavailable"
