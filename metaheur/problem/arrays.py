"""Arrays handed to the problem constructors, checked at the door: every cost metaheur reports is
an exact integer, so weights must be integers (integral floats are taken exactly), finite, and
within int64."""

from __future__ import annotations

import numpy as np

from metaheur.errors import MetaheurError

INT64_LIMIT = 2.0**63
#: The kernels store matrices as int32: entries beyond this do not fit.
INT32_MAX = 2**31 - 1


def exact_integers(values, what: str) -> np.ndarray:
    """``values`` as a contiguous int64 array, or a :class:`MetaheurError` that says what is wrong
    (``what`` names the array: "tai12a: flow matrix"): not numbers, NaN or infinite entries,
    fractional entries (with how to scale them), entries beyond int64."""
    try:
        a = np.asarray(values)
    except (TypeError, ValueError):
        raise MetaheurError(f"{what} is not an array of numbers") from None
    if a.dtype.kind in "biu":
        if a.dtype.kind == "u" and a.size and a.max() >= INT64_LIMIT:
            raise MetaheurError(f"{what} has entries beyond the 64-bit integer range")
        return np.ascontiguousarray(a, dtype=np.int64)
    if a.dtype.kind != "f":
        if a.dtype.kind == "O":
            try:
                a = a.astype(np.float64)
            except (TypeError, ValueError, OverflowError):
                raise MetaheurError(f"{what} is not an array of numbers") from None
        else:
            raise MetaheurError(f"{what} is not an array of real numbers (dtype {a.dtype})")
    bad = ~np.isfinite(a)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise MetaheurError(f"{what} has NaN or infinite entries (first {float(a[where])} at {list(where)})")
    if a.size and np.abs(a).max() >= INT64_LIMIT:
        raise MetaheurError(f"{what} has entries beyond the 64-bit integer range")
    fractional = a != np.round(a)
    if fractional.any():
        where = tuple(int(i) for i in np.argwhere(fractional)[0])
        raise MetaheurError(f"{what} has fractional entries (first {float(a[where])} at {list(where)}): costs are "
                            "exact integers here, so scale the weights to integers first (e.g. multiply by 10**k and "
                            "round), and divide the costs by the same factor")
    return np.ascontiguousarray(a, dtype=np.int64)
