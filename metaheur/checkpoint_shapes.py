"""The shapes of a checkpoint's arrays as a run of the instance it resumes writes them, known
before any array is read (:meth:`metaheur.checkpoint.Checkpoint.validate`).

Every array member has one expected shape: a length of the searched problem's size ``n`` or of
the island algorithm's layout (:class:`~metaheur.islands.base.SavedSearches`), or a count of rows
from 1 to the most the island keeps (:meth:`~metaheur.islands.base.Island.most_members`), the same
count wherever the same rows appear (an island's population and costs; its saved searches). A
member of another shape is refused before its data is read, so that no size declared in a
checkpoint is allocated unless a run of the instance can have written it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from metaheur.islands.base import Island


@dataclass(frozen=True)
class Rows:
    """A count of rows from 1 to ``most``, the same in every shape that names ``name``."""

    name: str
    most: int


Shape = tuple[int | Rows, ...]


def expected_shapes(n: int, islands: list[tuple[int, type[Island], int, list[str]]],
                    archived: int) -> dict[str, Shape]:
    """The shape of every array member: for each ``(index, algorithm, most members, saved
    search names)`` of an island with arrays, its population (rows, n), costs (rows,), best (n,)
    and saved searches of its algorithm's layout; ``archived`` archive members of (n,)."""
    shapes: dict[str, Shape] = {f"archive_{j}": (n,) for j in range(archived)}
    for i, algorithm, most, saved in islands:
        rows = Rows(f"members {i}", most)
        shapes |= {f"population_{i}": (rows, n), f"costs_{i}": (rows,), f"best_{i}": (n,)}
        layout = algorithm.saved_searches
        if saved and (layout is None or set(saved) != set(layout.shapes)):
            raise ValueError(f"island {i}'s saved searches ({', '.join(saved)}) are not those of its kind")
        sizes = {"S": Rows(f"searches {i}", most), "n": n}
        shapes |= {f"searches_{name}_{i}": tuple(sizes.get(d, d) for d in layout.shapes[name]) for name in saved}
    return shapes


def most_bytes(shape: Shape, itemsize: int = 8) -> int:
    """The most bytes an array of ``shape`` holds (its rows at their most)."""
    return math.prod(d.most if isinstance(d, Rows) else d for d in shape) * itemsize


def check_shapes(declared: dict[str, tuple[int, ...]], expected: dict[str, Shape]) -> None:
    """Every declared shape is its expected one (:func:`expected_shapes`), each count of rows in
    range and the same wherever it appears; a ValueError names the first member that is not
    (and the member whose rows it does not match)."""
    counts: dict[str, tuple[int, str]] = {}  # rows' name -> (their count, the member that fixed it)
    for name, shape in declared.items():
        want = expected[name]
        fits = len(shape) == len(want) and all(_fits(got, d, counts, name) for got, d in zip(shape, want, strict=True))
        if not fits:
            raise ValueError(f"{name} has shape {tuple(shape)}, not {_shown(want, counts, name)}")


def _fits(length: int, dim: int | Rows, counts: dict[str, tuple[int, str]], member: str) -> bool:
    """Whether ``length`` is ``dim``'s: its int, or a count of its rows (the first member seen
    fixes it)."""
    if not isinstance(dim, Rows):
        return length == dim
    if dim.name not in counts:
        counts[dim.name] = length, member
    return length == counts[dim.name][0] and 1 <= length <= dim.most


def _shown(shape: Shape, counts: dict[str, tuple[int, str]], member: str) -> str:
    """An expected shape as a message shows it: ``(1..20, 12)``, a count fixed by another member
    as that count, naming the member."""
    dims, of = [], ""
    for d in shape:
        if isinstance(d, Rows) and counts.get(d.name, (0, member))[1] != member:
            dims.append(str(counts[d.name][0]))
            of = f" (the rows of {counts[d.name][1]})"
        else:
            dims.append(str(d) if not isinstance(d, Rows) else f"1..{d.most}" if d.most > 1 else "1")
    return f"({', '.join(dims)}{',' if len(dims) == 1 else ''}){of}"
