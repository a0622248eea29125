"""accel.GraphBuilder, accel.Graph and Device.execute on the CPU device, against NumPy (include/accel/graph/)."""

import numpy as np
import pytest

import accel


def linear_graph(bucket=None):
    b = accel.GraphBuilder()
    if bucket:
        b.bucket("rows", bucket)
    x = b.input("x", "float32", ["rows", 4])
    w = b.parameter("w", "float32", [4, 3])
    bias = b.parameter("bias", "float32", [3])
    b.output("y", b.matmul(x, w, bias=bias, activation=accel.Activation.relu))
    return b.build()


def run(device, graph, weights, rows, xs, out_shape, symbols=None):
    out = device.allocate(out_shape, "float32")
    future = device.execute(graph, symbols=symbols or {"rows": rows}, weights=weights,
                            inputs={"x": device.upload(xs)}, outputs={"y": out})
    assert isinstance(future, accel.Future)
    future.result()
    return out.numpy()


def test_a_matmul_graph_runs_like_numpy(device, rng):
    graph = linear_graph()
    assert graph.inputs == ["x"] and graph.outputs == ["y"] and graph.symbols == ["rows"]
    assert graph.tensors[0] == ("x", "float32", ("rows", 4))
    assert graph.parameters["w"]["shape"] == (4, 3) and graph.parameters["w"]["bytes"] == 48
    w = rng.standard_normal((4, 3)).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    weights = graph.upload_weights(device, {"w": w, "bias": bias})
    assert weights.dtype == "uint8" and weights.size == graph.weight_bytes
    for rows in (5, 2):
        xs = rng.standard_normal((rows, 4)).astype(np.float32)
        np.testing.assert_allclose(run(device, graph, weights, rows, xs, (rows, 3)),
                                   np.maximum(xs @ w + bias, 0), rtol=1e-5, atol=1e-5)


def test_a_matmul_adds_its_residual_and_refuses_one_after_an_activation(device, rng):
    b = accel.GraphBuilder()
    x = b.input("x", "float32", ["rows", 4])
    stream = b.input("stream", "float32", ["rows", 3])
    w = b.parameter("w", "float32", [3, 4])
    b.output("y", b.matmul(x, w, transpose_b=True, residual=stream))
    graph = b.build()
    wv = rng.standard_normal((3, 4)).astype(np.float32)
    weights = graph.upload_weights(device, {"w": wv})
    xs = rng.standard_normal((5, 4)).astype(np.float32)
    ss = rng.standard_normal((5, 3)).astype(np.float32)
    out = device.allocate((5, 3), "float32")
    device.execute(graph, symbols={"rows": 5}, weights=weights,
                   inputs={"x": device.upload(xs), "stream": device.upload(ss)}, outputs={"y": out}).result()
    np.testing.assert_allclose(out.numpy(), xs @ wv.T + ss, rtol=1e-5, atol=1e-5)
    b = accel.GraphBuilder()
    x = b.input("x", "float32", ["rows", 4])
    b.output("y", b.matmul(x, b.parameter("w", "float32", [4, 4]), activation=accel.Activation.relu, residual=x))
    with pytest.raises(accel.InvalidArgument, match="a residual must be .* identity activation"):
        b.build()


def test_a_bucketed_symbol_runs_by_its_rung_and_refuses_above_the_top(device, rng):
    assert accel.GraphBuilder.powers_of_two(4, 16) == [4, 8, 16]
    assert accel.GraphBuilder.arithmetic(3, 9) == [3, 6, 9]
    graph = linear_graph(bucket=[4, 8])
    assert graph.buckets == {"rows": [4, 8]}
    w = np.eye(4, 3, dtype=np.float32)
    weights = graph.upload_weights(device, {"w": w, "bias": np.zeros(3, np.float32)})
    xs = rng.standard_normal((7, 4)).astype(np.float32)
    np.testing.assert_allclose(run(device, graph, weights, 7, xs, (7, 3)), np.maximum(xs @ w, 0), atol=1e-6)
    with pytest.raises(accel.Error, match="rows"):
        run(device, graph, weights, 9, rng.standard_normal((9, 4)).astype(np.float32), (9, 3))


def test_norms_pooling_and_elementwise_ops_match_numpy(device, rng):
    b = accel.GraphBuilder()
    x = b.input("x", "float32", ["rows", 8])
    offsets = b.input("offsets", "int32", ["sequences + 1"], padding=accel.Padding.repeat_last)
    gamma = b.parameter("gamma", "float32", [8])
    beta = b.parameter("beta", "float32", [8])
    normed = b.layer_norm(x, gamma, beta, 1e-5)
    doubled = b.binary("add", normed, normed)
    b.output("pooled", b.l2_normalize(b.pool(doubled, offsets, "mean")))
    b.output("first", b.pool(x, offsets, accel.PoolMode.first))
    graph = b.build()
    assert graph.tensors[1] == ("offsets", "int32", ("sequences+1",))
    xs = rng.standard_normal((5, 8)).astype(np.float32)
    g, be = rng.standard_normal(8).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    bounds = np.array([0, 2, 5], np.int32)
    pooled, first = device.allocate((2, 8), "float32"), device.allocate((2, 8), "float32")
    device.execute(graph, symbols={"rows": 5, "sequences": 2}, weights=graph.upload_weights(device, {"gamma": g, "beta": be}),
                   inputs={"x": device.upload(xs), "offsets": device.upload(bounds)},
                   outputs={"pooled": pooled, "first": first}).result()
    mean, var = xs.mean(axis=1, keepdims=True), xs.var(axis=1, keepdims=True)
    ln = 2 * ((xs - mean) / np.sqrt(var + 1e-5) * g + be)
    expected = np.stack([ln[0:2].mean(axis=0), ln[2:5].mean(axis=0)])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(pooled.numpy(), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(first.numpy(), xs[[0, 2]])


def test_a_packed_normalised_rope_and_a_gated_block_match_numpy(device, rng):
    heads, kv_heads, d, rows, eps = 4, 2, 8, 5, 1e-6
    width = (heads + 2 * kv_heads) * d
    b = accel.GraphBuilder()
    qkv = b.input("qkv", "float32", ["rows", width])
    offsets = b.input("offsets", "int32", [2], padding=accel.Padding.repeat_last)
    q_norm, k_norm = b.parameter("q_norm", "float32", [d]), b.parameter("k_norm", "float32", [d])
    positions = b.sequence_positions(offsets, "rows")
    b.output("rotated", b.rope(qkv, positions, heads, 10000.0, kv_heads=kv_heads, query_norm=q_norm, key_norm=k_norm,
                               eps=eps))
    b.output("gated", b.gated(qkv, "silu"))
    b.output("gated8", b.gated(qkv, "silu", layout=accel.GateLayout.groups_of_8))
    graph = b.build()
    xs = rng.standard_normal((rows, width)).astype(np.float32)
    qg, kg = rng.standard_normal(d).astype(np.float32), rng.standard_normal(d).astype(np.float32)
    rotated, gated = device.allocate((rows, width), "float32"), device.allocate((rows, width // 2), "float32")
    gated8 = device.allocate((rows, width // 2), "float32")
    device.execute(graph, symbols={"rows": rows}, weights=graph.upload_weights(device, {"q_norm": qg, "k_norm": kg}),
                   inputs={"qkv": device.upload(xs), "offsets": device.upload(np.array([0, rows], np.int32))},
                   outputs={"rotated": rotated, "gated": gated, "gated8": gated8}).result()
    heads_of = xs.reshape(rows, heads + 2 * kv_heads, d).astype(np.float64)
    normed = heads_of / np.sqrt((heads_of ** 2).mean(axis=2, keepdims=True) + eps)
    normed[:, :heads] *= qg
    normed[:, heads:heads + kv_heads] *= kg
    angle = np.arange(rows)[:, None] / 10000.0 ** (np.arange(d // 2) * 2 / d)
    cos, sin = np.cos(angle)[:, None], np.sin(angle)[:, None]
    expected = heads_of.copy()
    a, c = normed[:, :heads + kv_heads, :d // 2], normed[:, :heads + kv_heads, d // 2:]
    expected[:, :heads + kv_heads] = np.concatenate([a * cos - c * sin, c * cos + a * sin], axis=2)
    np.testing.assert_allclose(rotated.numpy(), expected.reshape(rows, width), rtol=1e-4, atol=1e-4)
    gate, up = xs[:, :width // 2].astype(np.float64), xs[:, width // 2:]
    np.testing.assert_allclose(gated.numpy(), gate / (1 + np.exp(-gate)) * up, rtol=1e-5, atol=1e-5)
    groups = xs.reshape(rows, width // 16, 2, 8).astype(np.float64)  # gates in groups of 8, each group's ups after it
    gate, up = groups[:, :, 0].reshape(rows, -1), groups[:, :, 1].reshape(rows, -1)
    np.testing.assert_allclose(gated8.numpy(), gate / (1 + np.exp(-gate)) * up, rtol=1e-5, atol=1e-5)
    with pytest.raises(accel.InvalidArgument, match="key_norm goes with query_norm"):
        b2 = accel.GraphBuilder()
        b2.rope(b2.input("x", "float32", [2, 16]), b2.input("p", "int32", [2]), 2, 100.0, key_norm=b2.parameter(
            "k", "float32", [8]), eps=1e-6)
        b2.build()


def test_views_and_slices(device, rng):
    b = accel.GraphBuilder()
    x = b.input("x", "float32", [2, 6])
    sliced = b.slice(b.transpose(b.reshape(x, [3, 4]), [1, 0]), 0, 1, 3)   # [2, 3]
    b.output("y", b.unary("relu", sliced))
    graph = b.build()
    assert graph.weight_bytes == 0 and graph.parameters == {}
    xs = rng.standard_normal((2, 6)).astype(np.float32)
    out = device.allocate((2, 3), "float32")
    device.execute(graph, inputs={"x": device.upload(xs)}, outputs={"y": out}).result()
    np.testing.assert_array_equal(out.numpy(), np.maximum(xs.reshape(3, 4).T[1:3], 0))


def test_the_cpu_device_refuses_a_half_precision_graph_as_not_supported(device):
    b = accel.GraphBuilder()
    x = b.input("x", "float32", [2, 3])
    b.output("y", b.cast(x, "float16"))
    graph = b.build()
    with pytest.raises(accel.NotSupported, match="f32"):
        device.execute(graph, inputs={"x": device.allocate((2, 3))}, outputs={"y": device.allocate((2, 3), "float16")}).result()


def test_the_encoding_round_trips(device):
    graph = linear_graph(bucket=[4, 8])
    again = accel.Graph.decode(graph.encoding)
    assert again == graph and again.encoding == graph.encoding and again != linear_graph()
    with pytest.raises(accel.Error):
        accel.Graph.decode(b"not a graph")


def test_the_first_build_error_names_the_op():
    b = accel.GraphBuilder()
    x = b.input("x", "float32", ["rows", 4])
    w = b.parameter("w", "float32", [5, 3])
    b.output("y", b.matmul(x, w))
    with pytest.raises(accel.InvalidArgument, match="matmul"):
        b.build()


def test_bad_dimensions_and_enums_raise_invalid_argument():
    b = accel.GraphBuilder()
    with pytest.raises(accel.InvalidArgument, match="'2rows'"):
        b.input("x", "float32", ["2rows"])
    with pytest.raises(accel.InvalidArgument, match="shape"):
        b.input("x", "float32", [1.5])
    x = b.input("x", "float32", [("rows", -1), 4])
    with pytest.raises(accel.InvalidArgument, match="'op' must be one of 'add', 'sub', 'mul', 'div'"):
        b.binary("pow", x, x)
    assert b.input("y", "float32", ["rows - 1"]) is not None


def test_execute_refuses_a_missing_binding_before_running(device):
    graph = linear_graph()
    out = device.allocate((2, 3), "float32")
    with pytest.raises(accel.InvalidArgument, match="x"):
        device.execute(graph, symbols={"rows": 2}, weights=device.allocate((graph.weight_bytes,), "uint8"),
                       inputs={}, outputs={"y": out}).result()
    with pytest.raises(accel.InvalidArgument, match="accel.Buffer"):
        device.execute(graph, symbols={"rows": 2}, inputs={"x": "nope"}, outputs={"y": out})


def test_bindings_may_start_inside_their_buffers(device, rng):
    graph = linear_graph()
    w = rng.standard_normal((4, 3)).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    weights = graph.upload_weights(device, {"w": w, "bias": bias})
    xs = rng.standard_normal((5, 4)).astype(np.float32)
    inputs = device.upload(np.concatenate([np.full(6, 7.0, np.float32), xs.ravel()]))
    out = device.upload(np.full(4 + 15 + 2, -1.0, np.float32))
    device.execute(graph, symbols={"rows": 5}, weights=weights, inputs={"x": (inputs, 6)},
                   outputs={"y": (out, 4)}).result()
    got = out.numpy()
    np.testing.assert_allclose(got[4:19].reshape(5, 3), np.maximum(xs @ w + bias, 0), rtol=1e-5, atol=1e-5)
    assert (got[:4] == -1).all() and (got[19:] == -1).all()
    with pytest.raises(accel.InvalidArgument, match="input 'x'"):
        device.execute(graph, symbols={"rows": 5}, weights=weights, inputs={"x": (inputs, 7)},
                       outputs={"y": (out, 4)}).result()
    with pytest.raises(accel.InvalidArgument, match="first element"):
        device.execute(graph, symbols={"rows": 5}, weights=weights, inputs={"x": (inputs, -1)}, outputs={"y": out})


def test_pack_weights_checks_names_and_shapes():
    graph = linear_graph()
    with pytest.raises(ValueError, match="bias"):
        accel.graph.pack_weights(graph, {"w": np.zeros((4, 3))})
    with pytest.raises(ValueError, match="shape"):
        accel.graph.pack_weights(graph, {"w": np.zeros((3, 4)), "bias": np.zeros(3)})
    blob = accel.graph.pack_weights(graph, {"w": np.ones((4, 3)), "bias": np.zeros(3)})
    offset = graph.parameters["w"]["offset"]
    assert blob.view(np.uint8)[offset:offset + 48].view(np.float32).tolist() == [1.0] * 12
