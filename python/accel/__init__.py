"""accel from Python: GPU (and CPU) libraries behind supervised actors, one asynchronous API.

    import accel, numpy as np
    device = accel.Device.open("cpu")
    a, b = device.upload(np.ones((64, 16), np.float32)), device.upload(np.ones((16, 32), np.float32))
    c = device.allocate((64, 32), "float32")
    device.gemm(a=a, b=b, c=c).result()      # or: await device.gemm(...)
    print(c.numpy()[0, 0])                   # 16.0

Every request returns an accel.Future (result(timeout), done(), add_done_callback(fn), await); errors are
accel.Error subclasses, one per C++ status code (accel.InvalidArgument, accel.StaleHandle, ...).
"""

import atexit as _atexit

from . import _accel
from ._accel import (Buffer, Communicator, Device, DevicePool, Future, Graph, GraphBuilder, GraphTensor, KernelArg,
                     Placement, Program, Recording, System, copy_between_devices, cuda_peer_links, from_dlpack,
                     import_buffer)
from ._errors import (Cancelled, ContextLost, DeadlineExceeded, Error, FailedPrecondition, Internal, InvalidArgument,
                      NotSupported, ResourceExhausted, StaleHandle, Unavailable)
from . import _blas, _requests, _solver  # noqa: F401  (add the requests' defaults to Device)
from ._enums import *  # noqa: F401,F403  (accel.Transpose, accel.Fill, ...: the requests' enums)
from ._enums import __all__ as _enum_names
from . import collective, dnn, embed, graph, jit, sparse

__version__ = "0.1.0"

__all__ = ["Buffer", "Device", "DevicePool", "Placement", "Future", "System", "Recording", "Graph", "GraphBuilder",
           "GraphTensor", "Communicator", "Program", "KernelArg", "copy_between_devices", "cuda_peer_links", "from_dlpack", "import_buffer", "collective", "dnn", "embed", "graph",
           "jit", "sparse", "Error", "InvalidArgument",
           "NotSupported", "FailedPrecondition", "ResourceExhausted", "Unavailable", "Cancelled", "DeadlineExceeded", "StaleHandle",
           "ContextLost", "Internal", *_enum_names]

# The default System's actors stop before the interpreter's objects go away.
_atexit.register(_accel._shutdown)
