"""Collective communication (accel::collective): NCCL on CUDA devices, a world of CPU devices of this process on
the CPU. init_all(devices) gives one accel.Communicator per device; each call below is a request on that rank's
device returning an accel.Future, and every rank of the world must make it.

    comms = accel.collective.init_all([dev0, dev1])
    futures = [c.all_reduce(x) for c, x in zip(comms, buffers)]     # in place, sum
    for f in futures: f.result()

count and dtype come from the buffers unless given (count as NCCL counts it: collective.hpp's table).
"""

from ._accel import Communicator, collective_unique_id, init_all, init_from_torchrun, init_rank
from ._errors import Error, FailedPrecondition, Unavailable

__all__ = ["Communicator", "init_all", "init_from_mpi", "init_from_torchrun", "init_rank", "unique_id"]

unique_id = collective_unique_id


def init_from_mpi(device, comm=None, *, timeout_ms=60_000, blocking_collectives=True):
    """This process's communicator on `device` from an MPI communicator (mpi4py's; MPI.COMM_WORLD when None): rank r
    of `comm` becomes rank r of the world, whose id its rank 0 makes and broadcasts. Every rank of `comm` must call
    it; it waits until all have joined. It is accel::collective::init_from_mpi done through mpi4py, so the package
    links no MPI of its own and runs on whichever MPI mpi4py found.

    Refused on every rank alike, after the exchange (so that no rank is left waiting in it or for the world): devices
    of more than one kind, and CPU devices in a communicator of more than one rank (a CPU world's ranks are CPU
    devices of one process; init_all makes those)."""
    if comm is None:
        try:
            from mpi4py import MPI
        except ImportError as error:
            raise ImportError("accel.collective.init_from_mpi needs mpi4py when no comm is given "
                              "(pip install mpi4py)") from error
        comm = MPI.COMM_WORLD
    rank, ranks, kind = comm.Get_rank(), comm.Get_size(), device.kind
    message = None
    if rank == 0:
        try:
            message = (True, unique_id(kind))
        except Error as error:
            message = (False, str(error))
    made, payload = comm.bcast(message, root=0)
    kinds = comm.allgather(kind)
    where = f"collective.init_from_mpi (rank {rank} of {ranks})"
    if not made:
        raise Unavailable(f"unavailable: {where}: rank 0 could not make a unique id: {payload}")
    if len(set(kinds)) > 1:
        named = ", ".join(f"rank {r} {k}" for r, k in enumerate(kinds))
        raise FailedPrecondition(f"failed_precondition: {where}: a world's devices are of one kind, and these are "
                                 f"not ({named})")
    if kind == "cpu" and ranks > 1:
        raise FailedPrecondition(f"failed_precondition: {where}: a CPU world's ranks are CPU devices of one process, "
                                 f"and these {ranks} ranks are processes (use CUDA devices, or init_all for CPU "
                                 "devices of one process)")
    return init_rank(device, payload, ranks, rank, timeout_ms=timeout_ms,
                     blocking_collectives=blocking_collectives).result()


def _call(self, kind, send, recv, count, kwargs):
    some = send if send is not None else recv
    kwargs.setdefault("dtype", some.dtype)
    return self.collective(kind=kind, send=send, recv=recv, count=count, **kwargs)


def all_reduce(self, send, recv=None, op="sum", count=None, **kwargs):
    """recv = op over the ranks of send (in place when recv is None); count: send's size."""
    recv = send if recv is None else recv
    return _call(self, "all_reduce", send, recv, send.size if count is None else count, dict(kwargs, op=op))


def all_gather(self, send, recv, count=None, **kwargs):
    """Every rank's `count` elements of send into recv, rank r's at r * count; count: send's size."""
    return _call(self, "all_gather", send, recv, send.size if count is None else count, kwargs)


def reduce_scatter(self, send, recv, op="sum", count=None, **kwargs):
    """Part r (count elements) of the reduction of send into rank r's recv; count: recv's size."""
    return _call(self, "reduce_scatter", send, recv, recv.size if count is None else count, dict(kwargs, op=op))


def broadcast(self, send, recv, root=0, count=None, **kwargs):
    """Rank `root`'s send into every rank's recv (send may be None off the root); count: recv's size."""
    return _call(self, "broadcast", send, recv, recv.size if count is None else count, dict(kwargs, peer=root))


def reduce(self, send, recv, root=0, op="sum", count=None, **kwargs):
    """The reduction of send into rank `root`'s recv (recv may be None off the root); count: send's size."""
    return _call(self, "reduce", send, recv, send.size if count is None else count, dict(kwargs, peer=root, op=op))


def send(self, buffer, peer, count=None, **kwargs):
    """`count` elements of buffer to rank `peer` (which calls recv); count: the buffer's size."""
    return _call(self, "send", buffer, None, buffer.size if count is None else count, dict(kwargs, peer=peer))


def recv(self, buffer, peer, count=None, **kwargs):
    """`count` elements from rank `peer` into buffer; count: the buffer's size."""
    return _call(self, "recv", None, buffer, buffer.size if count is None else count, dict(kwargs, peer=peer))


for _method in (all_reduce, all_gather, reduce_scatter, broadcast, reduce, send, recv):
    setattr(Communicator, _method.__name__, _method)
