"""A short fingerprint of an instance's data: what worker caches and checkpoints are keyed by."""

from __future__ import annotations

import hashlib

import numpy as np


def fingerprint(header: str, arrays) -> str:
    """16 hex digits of the SHA-1 of ``header`` and the bytes of every array in ``arrays`` (None skipped)."""
    h = hashlib.sha1(header.encode())
    for a in arrays:
        if a is not None:
            h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]
