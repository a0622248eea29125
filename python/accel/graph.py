"""Tensor graphs from Python (accel::graph): build once with accel.GraphBuilder, run on any device with
Device.execute, compiled per shape or per bucket of shapes.

    b = accel.GraphBuilder()
    x = b.input("x", "float32", ["rows", 64])           # "rows" is a symbol, bound at run time
    w = b.parameter("w", "float32", [64, 16])
    b.output("y", b.matmul(x, w, activation="relu"))
    graph = b.build()
    weights = graph.upload_weights(device, {"w": w_array})
    device.execute(graph, symbols={"rows": 5}, weights=weights, inputs={"x": xs}, outputs={"y": ys}).result()
"""

import numpy as np

from ._accel import Graph, GraphBuilder, GraphTensor

__all__ = ["Graph", "GraphBuilder", "GraphTensor", "pack_weights"]


def pack_weights(graph, arrays):
    """The weights buffer's bytes (a uint8 NumPy array of graph.weight_bytes) with each parameter's array at its
    offset. `arrays` maps every parameter's name to an array of its shape (converted to its dtype)."""
    parameters = graph.parameters
    missing, unknown = parameters.keys() - arrays.keys(), arrays.keys() - parameters.keys()
    if missing or unknown:
        raise ValueError(f"pack_weights: parameters without an array: {sorted(missing)}; "
                         f"arrays of no parameter: {sorted(unknown)}")
    blob = np.zeros(graph.weight_bytes, np.uint8)
    for name, slot in parameters.items():
        array = np.ascontiguousarray(arrays[name], dtype=slot["dtype"])
        if array.shape != tuple(slot["shape"]):
            raise ValueError(f"pack_weights: parameter '{name}' has shape {tuple(slot['shape'])}, "
                             f"its array {array.shape}")
        blob[slot["offset"]:slot["offset"] + slot["bytes"]] = array.reshape(-1).view(np.uint8)
    return blob


def upload_weights(self, device, arrays):
    """A uint8 buffer on `device` holding the graph's parameters (pack_weights), for Device.execute's `weights`."""
    return device.upload(pack_weights(self, arrays))


Graph.upload_weights = upload_weights
