"""cuDNN-style convolutions and operation graphs on the CPU device's reference, against NumPy
(include/accel/dnn/)."""

import numpy as np
import pytest

import accel


def conv_reference(x, w, padding=(0, 0), stride=(1, 1)):
    """Cross-correlation of x [N, C, H, W] by w [K, C, R, S] (NCHW), as cuDNN and PyTorch compute it."""
    n, c, h, wi = x.shape
    k, _, r, s = w.shape
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    p = (h + 2 * padding[0] - r) // stride[0] + 1
    q = (wi + 2 * padding[1] - s) // stride[1] + 1
    y = np.zeros((n, k, p, q))
    for i in range(r):
        for j in range(s):
            window = padded[:, :, i:i + stride[0] * p:stride[0], j:j + stride[1] * q:stride[1]]
            y += np.einsum("ncpq,kc->nkpq", window, w[:, :, i, j].astype(np.float64))
    return y


def test_conv_fwd_channels_first_with_padding_stride_bias_and_relu(device, rng):
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    bias = rng.standard_normal((1, 4, 1, 1)).astype(np.float32)
    y = device.allocate((2, 4, 4, 3), "float32")
    future = device.conv_fwd(device.upload(x), device.upload(w), y, bias=device.upload(bias),
                             layout=accel.TensorLayout.channels_first, pre_padding=[1, 1], post_padding=[1, 1],
                             stride=[2, 2], activation="relu")
    assert isinstance(future, accel.Future)
    future.result()
    expected = np.maximum(conv_reference(x, w, (1, 1), (2, 2)) + bias, 0)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-4, atol=1e-4)


def test_conv_fwd_channels_last_reads_nhwc(device, rng):
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    y = device.allocate((1, 3, 3, 3), "float32")
    device.conv_fwd(device.upload(x.transpose(0, 2, 3, 1)), device.upload(w.transpose(0, 2, 3, 1)), y).result()
    np.testing.assert_allclose(y.numpy().transpose(0, 3, 1, 2), conv_reference(x, w), rtol=1e-4, atol=1e-4)


def test_conv_backward_data_and_filter_are_the_adjoints(device, rng):
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    dy = rng.standard_normal((1, 3, 3, 3)).astype(np.float32)
    dx, dw = device.allocate(x.shape, "float32"), device.allocate(w.shape, "float32")
    device.conv_bwd_data(device.upload(dy), device.upload(w), dx, layout="channels_first").result()
    device.conv_bwd_filter(device.upload(x), device.upload(dy), dw, layout="channels_first").result()
    # <conv(x, w), dy> = <x, dx> = <w, dw>
    inner = float((conv_reference(x, w) * dy).sum())
    assert float((x * dx.numpy()).sum()) == pytest.approx(inner, rel=1e-4)
    assert float((w * dw.numpy()).sum()) == pytest.approx(inner, rel=1e-4)


def test_an_unsupported_epilogue_and_a_bad_shape_are_refused(device):
    x, w, y = device.allocate((1, 2, 4, 4)), device.allocate((2, 2, 1, 1)), device.allocate((1, 2, 4, 4))
    with pytest.raises(accel.NotSupported, match="gelu_tanh"):
        device.conv_fwd(x, w, y, layout="channels_first", activation="gelu_tanh").result()
    with pytest.raises(accel.InvalidArgument, match="at most 3 ints"):
        device.conv_fwd(x, w, y, layout="channels_first", stride=[1, 1, 1, 1])
    with pytest.raises(ValueError, match="conv_fwd"):
        device.conv_fwd(device.allocate((4,)), w, y)


def test_a_graph_of_conv_add_and_relu_runs_like_numpy(device, rng):
    b = accel.dnn.GraphBuilder()
    x = b.tensor("float32", [1, 2, 5, 5])
    w = b.tensor("float32", [3, 2, 3, 3])
    bias = b.tensor("float32", [1, 3, 1, 1])
    y = b.relu(b.add(b.conv_forward(x, w, pre_padding=[1, 1], post_padding=[1, 1]), bias))
    b.output(y, "float32")
    graph = b.build()
    assert graph.bound_uids == [x.uid, w.uid, bias.uid, y.uid] and graph.writes(y.uid) and not graph.writes(x.uid)
    assert accel.dnn.Graph.decode(graph.signature) == graph
    assert "conv" in str(graph).lower()
    xs = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    ws = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    bs = rng.standard_normal((1, 3, 1, 1)).astype(np.float32)
    out = device.allocate((1, 3, 5, 5), "float32")
    device.run_graph(graph, {x: device.upload(xs), w: device.upload(ws), bias.uid: device.upload(bs),
                             y: out}).result()
    np.testing.assert_allclose(out.numpy(), np.maximum(conv_reference(xs, ws, (1, 1)) + bs, 0), rtol=1e-4, atol=1e-4)


def test_matmul_pooling_reduction_and_layer_norm_graphs(device, rng):
    b = accel.dnn.GraphBuilder()
    a = b.tensor("float32", [2, 3, 4])
    m = b.tensor("float32", [2, 4, 5])
    product = b.matmul(a, m)
    b.output(product, "float32")
    summed = b.reduction(accel.ReductionMode.add, product, [2, 3, 1])
    b.output(summed, "float32")
    img = b.tensor("float32", [1, 1, 4, 4])
    pooled = b.pooling(img, "max", window=[2, 2], stride=[2, 2])
    b.output(pooled, "float32")
    xs = b.tensor("float32", [3, 4])
    scale, shift = b.tensor("float32", [1, 4]), b.tensor("float32", [1, 4])
    normed, mean, inv_variance = b.layer_norm(xs, scale, shift, 1e-5)
    assert mean is None and inv_variance is None
    b.output(normed, "float32")
    graph = b.build()
    values = {a: rng.standard_normal((2, 3, 4)), m: rng.standard_normal((2, 4, 5)),
              img: np.arange(16.0).reshape(1, 1, 4, 4), xs: rng.standard_normal((3, 4)),
              scale: rng.standard_normal((1, 4)), shift: rng.standard_normal((1, 4))}
    outputs = {product: (2, 3, 5), summed: (2, 3, 1), pooled: (1, 1, 2, 2), normed: (3, 4)}
    bindings = {t: device.upload(v.astype(np.float32)) for t, v in values.items()}
    bindings.update({t: device.allocate(shape, "float32") for t, shape in outputs.items()})
    device.run_graph(graph, bindings).result()
    expected_product = values[a] @ values[m]
    np.testing.assert_allclose(bindings[product].numpy(), expected_product, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(bindings[summed].numpy(), expected_product.sum(axis=2, keepdims=True), rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_array_equal(bindings[pooled].numpy(), [[[[5, 7], [13, 15]]]])
    x = values[xs]
    ln = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(bindings[normed].numpy(), ln * values[scale] + values[shift], rtol=1e-4, atol=1e-4)


def test_build_and_run_errors_name_what_is_wrong(device):
    b = accel.dnn.GraphBuilder()
    a = b.tensor("float32", [2, 3])
    c = b.tensor("float32", [4, 5])
    b.output(b.matmul(a, c), "float32")
    with pytest.raises(accel.InvalidArgument, match="matmul"):
        b.build()
    with pytest.raises(accel.InvalidArgument, match="'mode' must be one of 'add'"):
        accel.dnn.GraphBuilder().pointwise("cube", a)
    with pytest.raises(accel.InvalidArgument, match="at most 8"):
        accel.dnn.GraphBuilder().tensor("float32", [1] * 9)
    ok = accel.dnn.GraphBuilder()
    x = ok.tensor("float32", [2, 2])
    y = ok.relu(x)
    ok.output(y, "float32")
    graph = ok.build()
    with pytest.raises(accel.InvalidArgument):
        device.run_graph(graph, {x: device.allocate((2, 2))}).result()   # y unbound
    with pytest.raises(accel.InvalidArgument, match="accel.Buffer"):
        device.run_graph(graph, {x: "nope"})


def test_strided_tensors_describe_their_storage():
    b = accel.dnn.GraphBuilder()
    x = b.tensor("float32", [1, 2, 3, 3], strides=[18, 1, 6, 2])
    b.output(b.relu(x), "float32", "channels_last")
    described = {t["uid"]: t for t in b.build().tensors}
    assert described[x.uid]["strides"] == [18, 1, 6, 2] and not described[x.uid]["virtual"]
