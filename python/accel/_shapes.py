"""What the BLAS and solver defaults (_blas.py, _solver.py) read from buffers' shapes, and how they are installed on
Device over the bound C++ requests.

Those requests' matrices are column-major, as BLAS and LAPACK store them, while NumPy arrays (and so the buffers
Device.upload makes) are C order: the C-order bytes of a NumPy array of shape (q, p) are, column-major, the p x q
matrix that is its transpose. So a buffer shaped ([batch,] q, p) holds column-major p x q matrices (upload ``A.T`` to
pass A; ``buffer.numpy().T`` reads the result back), and a 1-D buffer of n elements one n x 1 column.
"""

from ._accel import Device


def matrices(buffer, what):
    """(batch, rows, columns) of the column-major matrices `buffer` holds (see above)."""
    shape = buffer.shape
    if len(shape) == 1:
        return 1, shape[0], 1
    if len(shape) == 2:
        return 1, shape[1], shape[0]
    if len(shape) == 3:
        return shape[0], shape[2], shape[1]
    raise ValueError(f"{what}: a buffer of shape {shape} holds no matrices: give the sizes, or a buffer shaped "
                     "([batch,] columns, rows)")


def vector_length(buffer, increment):
    """The most elements a vector stepping by `increment` has in `buffer`."""
    return 0 if buffer.size == 0 else (buffer.size - 1) // max(abs(increment), 1) + 1


def install(*functions):
    """Puts each function on Device in place of the bound request of its name (kept as its __wrapped__)."""
    for function in functions:
        function.__wrapped__ = getattr(Device, function.__name__)
        setattr(Device, function.__name__, function)
