"""The C++ requests' enums as Python enums: accel.Transpose, accel.Fill, accel.Side, accel.FftType, ... Each is an
``enum.StrEnum`` made from the names the module binds (src/python/request_fields.hpp, ``EnumNames``), its members named
as the C++ enumerators (``accel.Transpose.transpose``, ``accel.SvdJob.thin``). A member is the string of its name, so
a request takes either: ``trsm(..., side=accel.Side.right)`` or ``trsm(..., side="right")``."""

import enum

from . import _accel


def _make(name, values):
    made = enum.StrEnum(name, [(value, value) for value in values], module="accel", qualname=name)
    made.__doc__ = f"accel::{name} as Python takes it: {', '.join(values)} (each equal to its name as a str)."
    return made


ENUMS = {name: _make(name, values) for name, values in sorted(_accel._enums.items())}
globals().update(ENUMS)
__all__ = list(ENUMS)
