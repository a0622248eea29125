"""cuDNN-style convolutions and operation graphs (accel::dnn): cuDNN on CUDA devices, a double-precision reference on
the CPU. Device.conv_fwd, conv_bwd_data and conv_bwd_filter take ConvShape's members as keyword arguments; here they
default from the buffers' shapes: x [N, C, *spatial] and w [K, C/groups, *filter] for layout="channels_first", x
[N, *spatial, C] and w [K, *filter, C/groups] for "channels_last" (the C++ default). Graphs: accel.dnn.GraphBuilder
builds one op by op, Device.run_graph runs it with a buffer per non-virtual tensor.

    b = accel.dnn.GraphBuilder()
    x = b.tensor("float32", [1, 3, 8, 8]); w = b.tensor("float32", [4, 3, 3, 3])
    y = b.relu(b.conv_forward(x, w, pre_padding=[1, 1], post_padding=[1, 1]))
    b.output(y, "float32")
    device.run_graph(b.build(), {x: xs, w: ws, y: ys}).result()
"""

from . import _shapes
from ._accel import DnnGraph as Graph, DnnGraphBuilder as GraphBuilder, DnnTensor as Tensor

__all__ = ["Graph", "GraphBuilder", "Tensor", "conv_shape_defaults"]


def conv_shape_defaults(kwargs, x, w, what):
    """Sets ConvShape's spatial_rank, dtype, n, c, k, groups, input and filter from x's and w's shapes (the
    activation and the filter as the layout stores them) where kwargs lacks them; returns kwargs."""
    layout = kwargs.get("layout", "channels_last")
    if len(x.shape) < 3 or len(x.shape) != len(w.shape):
        raise ValueError(f"{what}: give the sizes, or buffers shaped [N, C, *spatial] and [K, C/groups, *filter] "
                         f"(or channels-last), not {x.shape} and {w.shape}")
    if layout == "channels_first":
        n, c, *spatial = x.shape
        k, per_group, *taps = w.shape
    else:
        n, *spatial, c = x.shape
        k, *taps, per_group = w.shape
    kwargs.setdefault("spatial_rank", len(spatial))
    kwargs.setdefault("dtype", x.dtype)
    kwargs.setdefault("n", n)
    kwargs.setdefault("c", c)
    kwargs.setdefault("k", k)
    kwargs.setdefault("groups", c // per_group if per_group else 1)
    kwargs.setdefault("input", list(spatial))
    kwargs.setdefault("filter", list(taps))
    return kwargs


def conv_fwd(self, x, w, y, bias=None, **kwargs):
    """y = conv(x, w) (+ a per_channel bias, then an activation, fused): accel::ConvFwd. Sizes from the buffers'
    shapes (see the module). Returns an accel.Future."""
    if bias is not None:
        kwargs.setdefault("bias_vector", "per_channel")
    return conv_fwd.__wrapped__(self, x=x, w=w, y=y, bias=bias, **conv_shape_defaults(kwargs, x, w, "conv_fwd"))


def conv_bwd_data(self, dy, w, dx, **kwargs):
    """dx from dy and w (accel::ConvBwdData); sizes from dx's and w's shapes. Returns an accel.Future."""
    return conv_bwd_data.__wrapped__(self, dy=dy, w=w, dx=dx, **conv_shape_defaults(kwargs, dx, w, "conv_bwd_data"))


def conv_bwd_filter(self, x, dy, dw, **kwargs):
    """dw from x and dy (accel::ConvBwdFilter); sizes from x's and dw's shapes. Returns an accel.Future."""
    return conv_bwd_filter.__wrapped__(self, x=x, dy=dy, dw=dw,
                                       **conv_shape_defaults(kwargs, x, dw, "conv_bwd_filter"))


_shapes.install(conv_fwd, conv_bwd_data, conv_bwd_filter)
