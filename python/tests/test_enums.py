"""The requests' enums as Python enums (StrEnum: a member is also the string a request takes)."""

import ast
import enum
import pathlib

import numpy as np

import accel
from accel import _accel

EXPECTED = {
    "Transpose": ["none", "transpose"], "MatrixOrder": ["row_major", "column_major"], "Side": ["left", "right"],
    "Fill": ["lower", "upper"], "Diagonal": ["non_unit", "unit"], "EigenJob": ["values", "values_and_vectors"],
    "SvdJob": ["none", "thin", "full"], "FftType": ["c2c", "r2c", "c2r"], "FftDirection": ["forward", "inverse"],
    "FftNormalization": ["none", "inverse", "orthonormal"], "GemmCompute": ["standard", "tf32"],
    "BiasVector": ["none", "per_row", "per_column", "per_channel"],
    "Generator": ["philox4x32_10", "xorwow", "mrg32k3a", "sobol32"],
    "Distribution": ["uniform", "normal", "log_normal", "poisson", "bits"],
    "TensorCompute": ["standard", "float32", "float64", "float16", "bfloat16", "tf32", "tf32x3"],
    "SparseFormat": ["csr", "csc", "coo", "blocked_ell"], "SparseStructure": ["checked_each_use", "fixed"],
    "PlacementPolicy": ["least_loaded", "round_robin", "most_free_memory"],
    "BinaryOp": ["add", "sub", "mul", "div"], "Padding": ["zero", "repeat_last"],
    "PoolMode": ["mean", "max", "first", "last", "mean_sqrt_length", "weighted_mean"],
    "ExecuteMode": ["automatic", "replay", "direct"],
    "CollectiveKind": ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "send", "recv"],
    "ReduceOp": ["sum", "prod", "min", "max", "avg"], "TensorLayout": ["channels_first", "channels_last"],
    "PointwiseMode": ["add", "sub", "mul", "div", "min", "max", "relu", "sigmoid", "tanh", "gelu", "gelu_approx_tanh",
                      "swish", "elu", "softplus", "identity", "sqrt", "rsqrt", "exp", "log", "neg", "abs"],
    "ReductionMode": ["add", "mul", "min", "max", "mean", "norm1", "norm2"],
    "PoolingMode": ["max", "average_include_padding", "average_exclude_padding"],
    "WhenCompiling": ["wait", "library_fallback", "unavailable"],
    "KernelSchedule": ["automatic", "tma_cooperative", "tma_pingpong"], "ConvPass": ["fprop", "dgrad", "wgrad"],
    "CodeKind": ["cubin", "ptx"],
}


def test_each_enum_has_the_cpp_enumerators_in_order():
    for name, values in EXPECTED.items():
        made = getattr(accel, name)
        assert issubclass(made, enum.StrEnum) and name in accel.__all__
        assert [member.name for member in made] == values
        assert [member.value for member in made] == values
    assert "gelu_tanh" in [member.value for member in accel.Activation]


def test_a_member_is_its_name_as_a_string():
    assert accel.Transpose.transpose == "transpose" and str(accel.Fill.lower) == "lower"
    assert accel.SvdJob("thin") is accel.SvdJob.thin
    assert accel.Side.__module__ == "accel" and repr(accel.Side.left) == "<Side.left: 'left'>"


def test_requests_take_members_and_strings_alike(device, rng):
    a = rng.standard_normal((6, 4)).astype(np.float32)
    b = rng.standard_normal((6, 3)).astype(np.float32)
    by_enum, by_string = device.allocate((4, 3), "float32"), device.allocate((4, 3), "float32")
    device.gemm(device.upload(a), device.upload(b), by_enum, m=4, n=3, k=6,
                transpose_a=accel.Transpose.transpose).result()
    device.gemm(device.upload(a), device.upload(b), by_string, m=4, n=3, k=6, transpose_a="transpose").result()
    np.testing.assert_array_equal(by_enum.numpy(), by_string.numpy())
    np.testing.assert_allclose(by_enum.numpy(), a.T @ b, rtol=1e-5, atol=1e-5)


def test_a_member_of_another_enum_is_refused_by_value(device):
    a = device.allocate((2, 2))
    try:
        device.gemm(a, a, a, transpose_a=accel.Side.left)
        raise AssertionError("transpose_a took Side.left")
    except accel.InvalidArgument as error:
        assert "'transpose_a' must be one of 'none', 'transpose'" in str(error)


def test_the_type_stub_lists_the_bound_enums():
    stub = pathlib.Path(accel.__file__).parent / "_enums.pyi"
    tree = ast.parse(stub.read_text())
    listed = {node.name: [target.id for statement in node.body if isinstance(statement, ast.Assign)
                          for target in statement.targets]
              for node in tree.body if isinstance(node, ast.ClassDef)}
    assert listed == {name: list(values) for name, values in _accel._enums.items()}
