"""Best-known objective values of QAPLIB and TSPLIB instances, one table per problem kind.

Figures from the libraries' published tables (QAPLIB: Burkard, Karisch and Rendl, with later
updates; TSPLIB: Reinelt's STSP and ATSP pages; every TSPLIB value is a proven optimum). ``optimal`` says
whether the value is proven optimal. A problem of another kind registers its own table
(:func:`register_table`), so that names of different problems never collide. Caveats kept from
the sources: ``tai100a``'s published
``.sln`` holds an older 21052466, the table 21044752; ``dsj1000`` is the CEIL_2D value.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BestKnown:
    name: str
    library: str
    n: int
    value: int
    optimal: bool


_TABLE = (
    ("bur26a", "QAPLIB", 26, 5426670, True),
    ("bur26b", "QAPLIB", 26, 3817852, True),
    ("bur26c", "QAPLIB", 26, 5426795, True),
    ("bur26d", "QAPLIB", 26, 3821225, True),
    ("bur26e", "QAPLIB", 26, 5386879, True),
    ("bur26f", "QAPLIB", 26, 3782044, True),
    ("bur26g", "QAPLIB", 26, 10117172, True),
    ("bur26h", "QAPLIB", 26, 7098658, True),
    ("chr12a", "QAPLIB", 12, 9552, True),
    ("chr12b", "QAPLIB", 12, 9742, True),
    ("chr12c", "QAPLIB", 12, 11156, True),
    ("chr15a", "QAPLIB", 15, 9896, True),
    ("chr15b", "QAPLIB", 15, 7990, True),
    ("chr15c", "QAPLIB", 15, 9504, True),
    ("chr18a", "QAPLIB", 18, 11098, True),
    ("chr18b", "QAPLIB", 18, 1534, True),
    ("chr20a", "QAPLIB", 20, 2192, True),
    ("chr20b", "QAPLIB", 20, 2298, True),
    ("chr20c", "QAPLIB", 20, 14142, True),
    ("chr22a", "QAPLIB", 22, 6156, True),
    ("chr22b", "QAPLIB", 22, 6194, True),
    ("chr25a", "QAPLIB", 25, 3796, True),
    ("els19", "QAPLIB", 19, 17212548, True),
    ("esc16a", "QAPLIB", 16, 68, True),
    ("esc16b", "QAPLIB", 16, 292, True),
    ("esc16c", "QAPLIB", 16, 160, True),
    ("esc16d", "QAPLIB", 16, 16, True),
    ("esc16e", "QAPLIB", 16, 28, True),
    ("esc16f", "QAPLIB", 16, 0, True),
    ("esc16g", "QAPLIB", 16, 26, True),
    ("esc16h", "QAPLIB", 16, 996, True),
    ("esc16i", "QAPLIB", 16, 14, True),
    ("esc16j", "QAPLIB", 16, 8, True),
    ("esc32a", "QAPLIB", 32, 130, True),
    ("esc32b", "QAPLIB", 32, 168, True),
    ("esc32c", "QAPLIB", 32, 642, True),
    ("esc32d", "QAPLIB", 32, 200, True),
    ("esc32e", "QAPLIB", 32, 2, True),
    ("esc32g", "QAPLIB", 32, 6, True),
    ("esc32h", "QAPLIB", 32, 438, True),
    ("esc64a", "QAPLIB", 64, 116, True),
    ("esc128", "QAPLIB", 128, 64, True),
    ("had12", "QAPLIB", 12, 1652, True),
    ("had14", "QAPLIB", 14, 2724, True),
    ("had16", "QAPLIB", 16, 3720, True),
    ("had18", "QAPLIB", 18, 5358, True),
    ("had20", "QAPLIB", 20, 6922, True),
    ("kra30a", "QAPLIB", 30, 88900, True),
    ("kra30b", "QAPLIB", 30, 91420, True),
    ("lipa20a", "QAPLIB", 20, 3683, True),
    ("lipa20b", "QAPLIB", 20, 27076, True),
    ("lipa30a", "QAPLIB", 30, 13178, True),
    ("lipa30b", "QAPLIB", 30, 151426, True),
    ("lipa40a", "QAPLIB", 40, 31538, True),
    ("lipa40b", "QAPLIB", 40, 476581, True),
    ("lipa50a", "QAPLIB", 50, 62093, True),
    ("lipa50b", "QAPLIB", 50, 1210244, True),
    ("lipa60a", "QAPLIB", 60, 107218, True),
    ("lipa60b", "QAPLIB", 60, 2520135, True),
    ("lipa70a", "QAPLIB", 70, 169755, True),
    ("lipa70b", "QAPLIB", 70, 4603200, True),
    ("lipa80a", "QAPLIB", 80, 253195, True),
    ("lipa80b", "QAPLIB", 80, 7763962, True),
    ("lipa90b", "QAPLIB", 90, 12490441, True),
    ("nug12", "QAPLIB", 12, 578, True),
    ("nug14", "QAPLIB", 14, 1014, True),
    ("nug15", "QAPLIB", 15, 1150, True),
    ("nug16a", "QAPLIB", 16, 1610, True),
    ("nug16b", "QAPLIB", 16, 1240, True),
    ("nug17", "QAPLIB", 17, 1732, True),
    ("nug18", "QAPLIB", 18, 1930, True),
    ("nug20", "QAPLIB", 20, 2570, True),
    ("nug21", "QAPLIB", 21, 2438, True),
    ("nug22", "QAPLIB", 22, 3596, True),
    ("nug24", "QAPLIB", 24, 3488, True),
    ("nug25", "QAPLIB", 25, 3744, True),
    ("nug27", "QAPLIB", 27, 5234, True),
    ("nug28", "QAPLIB", 28, 5166, True),
    ("rou12", "QAPLIB", 12, 235528, True),
    ("rou15", "QAPLIB", 15, 354210, True),
    ("rou20", "QAPLIB", 20, 725522, True),
    ("scr12", "QAPLIB", 12, 31410, True),
    ("scr15", "QAPLIB", 15, 51140, True),
    ("scr20", "QAPLIB", 20, 110030, True),
    ("sko42", "QAPLIB", 42, 15812, False),
    ("sko49", "QAPLIB", 49, 23386, False),
    ("sko56", "QAPLIB", 56, 34458, False),
    ("sko64", "QAPLIB", 64, 48498, False),
    ("sko81", "QAPLIB", 81, 90998, False),
    ("sko100a", "QAPLIB", 100, 152002, False),
    ("sko100b", "QAPLIB", 100, 153890, False),
    ("sko100c", "QAPLIB", 100, 147862, False),
    ("sko100d", "QAPLIB", 100, 149576, False),
    ("sko100e", "QAPLIB", 100, 149150, False),
    ("sko100f", "QAPLIB", 100, 149036, False),
    ("ste36a", "QAPLIB", 36, 9526, True),
    ("ste36b", "QAPLIB", 36, 15852, True),
    ("ste36c", "QAPLIB", 36, 8239110, True),
    ("tai10a", "QAPLIB", 10, 135028, True),
    ("tai10b", "QAPLIB", 10, 1183760, True),
    ("tai12a", "QAPLIB", 12, 224416, True),
    ("tai12b", "QAPLIB", 12, 39464925, True),
    ("tai15a", "QAPLIB", 15, 388214, True),
    ("tai15b", "QAPLIB", 15, 51765268, True),
    ("tai17a", "QAPLIB", 17, 491812, True),
    ("tai20a", "QAPLIB", 20, 703482, True),
    ("tai20b", "QAPLIB", 20, 122455319, True),
    ("tai25a", "QAPLIB", 25, 1167256, True),
    ("tai25b", "QAPLIB", 25, 344355646, True),
    ("tai30a", "QAPLIB", 30, 1818146, False),
    ("tai30b", "QAPLIB", 30, 637117113, True),
    ("tai35a", "QAPLIB", 35, 2422002, False),
    ("tai35b", "QAPLIB", 35, 283315445, False),
    ("tai40a", "QAPLIB", 40, 3139370, False),
    ("tai50a", "QAPLIB", 50, 4938796, False),
    ("tai50b", "QAPLIB", 50, 458821517, False),
    ("tai60b", "QAPLIB", 60, 608215054, False),
    ("tai64c", "QAPLIB", 64, 1855928, True),
    ("tai80a", "QAPLIB", 80, 13499184, False),
    ("tai100a", "QAPLIB", 100, 21044752, False),
    ("tai100b", "QAPLIB", 100, 1185996137, False),
    ("tai150b", "QAPLIB", 150, 498896643, False),
    ("tai256c", "QAPLIB", 256, 44759294, False),
    ("tho30", "QAPLIB", 30, 149936, True),
    ("tho40", "QAPLIB", 40, 240516, False),
    ("wil50", "QAPLIB", 50, 48816, False),
    ("a280", "TSPLIB", 280, 2579, True),
    ("ali535", "TSPLIB", 535, 202339, True),
    ("att48", "TSPLIB", 48, 10628, True),
    ("att532", "TSPLIB", 532, 27686, True),
    ("bayg29", "TSPLIB", 29, 1610, True),
    ("bays29", "TSPLIB", 29, 2020, True),
    ("berlin52", "TSPLIB", 52, 7542, True),
    ("bier127", "TSPLIB", 127, 118282, True),
    ("brazil58", "TSPLIB", 58, 25395, True),
    ("brd14051", "TSPLIB", 14051, 469385, True),
    ("brg180", "TSPLIB", 180, 1950, True),
    ("burma14", "TSPLIB", 14, 3323, True),
    ("ch130", "TSPLIB", 130, 6110, True),
    ("ch150", "TSPLIB", 150, 6528, True),
    ("d198", "TSPLIB", 198, 15780, True),
    ("d493", "TSPLIB", 493, 35002, True),
    ("d657", "TSPLIB", 657, 48912, True),
    ("d1655", "TSPLIB", 1655, 62128, True),
    ("d2103", "TSPLIB", 2103, 80450, True),
    ("d15112", "TSPLIB", 15112, 1573084, True),
    ("d18512", "TSPLIB", 18512, 645238, True),
    ("dantzig42", "TSPLIB", 42, 699, True),
    ("dsj1000", "TSPLIB", 1000, 18660188, True),
    ("eil51", "TSPLIB", 51, 426, True),
    ("eil76", "TSPLIB", 76, 538, True),
    ("eil101", "TSPLIB", 101, 629, True),
    ("fl417", "TSPLIB", 417, 11861, True),
    ("fl1400", "TSPLIB", 1400, 20127, True),
    ("fl1577", "TSPLIB", 1577, 22249, True),
    ("fl3795", "TSPLIB", 3795, 28772, True),
    ("fri26", "TSPLIB", 26, 937, True),
    ("gil262", "TSPLIB", 262, 2378, True),
    ("gr17", "TSPLIB", 17, 2085, True),
    ("gr21", "TSPLIB", 21, 2707, True),
    ("gr24", "TSPLIB", 24, 1272, True),
    ("gr48", "TSPLIB", 48, 5046, True),
    ("gr96", "TSPLIB", 96, 55209, True),
    ("gr120", "TSPLIB", 120, 6942, True),
    ("gr137", "TSPLIB", 137, 69853, True),
    ("gr202", "TSPLIB", 202, 40160, True),
    ("gr229", "TSPLIB", 229, 134602, True),
    ("gr431", "TSPLIB", 431, 171414, True),
    ("gr666", "TSPLIB", 666, 294358, True),
    ("hk48", "TSPLIB", 48, 11461, True),
    ("kroA100", "TSPLIB", 100, 21282, True),
    ("kroA150", "TSPLIB", 150, 26524, True),
    ("kroA200", "TSPLIB", 200, 29368, True),
    ("kroB100", "TSPLIB", 100, 22141, True),
    ("kroB150", "TSPLIB", 150, 26130, True),
    ("kroC100", "TSPLIB", 100, 20749, True),
    ("kroD100", "TSPLIB", 100, 21294, True),
    ("kroE100", "TSPLIB", 100, 22068, True),
    ("lin105", "TSPLIB", 105, 14379, True),
    ("nrw1379", "TSPLIB", 1379, 56638, True),
    ("p654", "TSPLIB", 654, 34643, True),
    ("pa561", "TSPLIB", 561, 2763, True),
    ("pcb442", "TSPLIB", 442, 50778, True),
    ("pcb1173", "TSPLIB", 1173, 56892, True),
    ("pcb3038", "TSPLIB", 3038, 137694, True),
    ("pla7397", "TSPLIB", 7397, 23260728, True),
    ("pla33810", "TSPLIB", 33810, 66048945, True),
    ("pla85900", "TSPLIB", 85900, 142382641, True),
    ("pr76", "TSPLIB", 76, 108159, True),
    ("pr107", "TSPLIB", 107, 44303, True),
    ("pr124", "TSPLIB", 124, 59030, True),
    ("pr136", "TSPLIB", 136, 96772, True),
    ("pr144", "TSPLIB", 144, 58537, True),
    ("pr152", "TSPLIB", 152, 73682, True),
    ("pr226", "TSPLIB", 226, 80369, True),
    ("pr264", "TSPLIB", 264, 49135, True),
    ("pr299", "TSPLIB", 299, 48191, True),
    ("pr439", "TSPLIB", 439, 107217, True),
    ("pr2392", "TSPLIB", 2392, 378032, True),
    ("rat99", "TSPLIB", 99, 1211, True),
    ("rat195", "TSPLIB", 195, 2323, True),
    ("rat575", "TSPLIB", 575, 6773, True),
    ("rd100", "TSPLIB", 100, 7910, True),
    ("rd400", "TSPLIB", 400, 15281, True),
    ("rl1304", "TSPLIB", 1304, 252948, True),
    ("rl1323", "TSPLIB", 1323, 270199, True),
    ("rl1889", "TSPLIB", 1889, 316536, True),
    ("rl5915", "TSPLIB", 5915, 565530, True),
    ("rl5934", "TSPLIB", 5934, 556045, True),
    ("rl11849", "TSPLIB", 11849, 923288, True),
    ("si175", "TSPLIB", 175, 21407, True),
    ("si535", "TSPLIB", 535, 48450, True),
    ("si1032", "TSPLIB", 1032, 92650, True),
    ("st70", "TSPLIB", 70, 675, True),
    ("swiss42", "TSPLIB", 42, 1273, True),
    ("ts225", "TSPLIB", 225, 126643, True),
    ("tsp225", "TSPLIB", 225, 3916, True),
    ("u159", "TSPLIB", 159, 42080, True),
    ("u574", "TSPLIB", 574, 36905, True),
    ("u724", "TSPLIB", 724, 41910, True),
    ("u1060", "TSPLIB", 1060, 224094, True),
    ("u1432", "TSPLIB", 1432, 152970, True),
    ("u1817", "TSPLIB", 1817, 57201, True),
    ("u2152", "TSPLIB", 2152, 64253, True),
    ("u2319", "TSPLIB", 2319, 234256, True),
    ("ulysses16", "TSPLIB", 16, 6859, True),
    ("ulysses22", "TSPLIB", 22, 7013, True),
    ("vm1084", "TSPLIB", 1084, 239297, True),
    ("vm1748", "TSPLIB", 1748, 336556, True),
    ("br17", "TSPLIB-ATSP", 17, 39, True),
    ("ft53", "TSPLIB-ATSP", 53, 6905, True),
    ("ft70", "TSPLIB-ATSP", 70, 38673, True),
    ("ftv33", "TSPLIB-ATSP", 34, 1286, True),
    ("ftv35", "TSPLIB-ATSP", 36, 1473, True),
    ("ftv38", "TSPLIB-ATSP", 39, 1530, True),
    ("ftv44", "TSPLIB-ATSP", 45, 1613, True),
    ("ftv47", "TSPLIB-ATSP", 48, 1776, True),
    ("ftv55", "TSPLIB-ATSP", 56, 1608, True),
    ("ftv64", "TSPLIB-ATSP", 65, 1839, True),
    ("ftv70", "TSPLIB-ATSP", 71, 1950, True),
    ("ftv170", "TSPLIB-ATSP", 171, 2755, True),
    ("kro124p", "TSPLIB-ATSP", 100, 36230, True),
    ("p43", "TSPLIB-ATSP", 43, 5620, True),
    ("rbg323", "TSPLIB-ATSP", 323, 1326, True),
    ("rbg358", "TSPLIB-ATSP", 358, 1163, True),
    ("rbg403", "TSPLIB-ATSP", 403, 2465, True),
    ("rbg443", "TSPLIB-ATSP", 443, 2720, True),
    ("ry48p", "TSPLIB-ATSP", 48, 14422, True),
)

BEST_KNOWN: dict[str, BestKnown] = {row[0].lower(): BestKnown(*row) for row in _TABLE}

_LIBRARY_KINDS = {"QAPLIB": "qap", "TSPLIB": "tsp", "TSPLIB-ATSP": "atsp"}
#: kind -> (lower-case name -> entry)
TABLES: dict[str, dict[str, BestKnown]] = {}
for _entry in BEST_KNOWN.values():
    TABLES.setdefault(_LIBRARY_KINDS[_entry.library], {})[_entry.name.lower()] = _entry


def register_table(kind: str, entries) -> None:
    """Add the best-known values of problem ``kind`` (:class:`BestKnown` entries)."""
    table = TABLES.setdefault(kind, {})
    for entry in entries:
        table[entry.name.lower()] = entry


def best_known(name: str, n: int | None = None, kind: str | None = None) -> BestKnown | None:
    """The table entry for an instance name (case-insensitive), or ``None``.

    With ``kind`` given, only that problem's table is searched; with ``n`` given, an entry of
    another size is not returned (a renamed or generated file).
    """
    tables = [TABLES.get(kind, {})] if kind is not None else list(TABLES.values())
    entry = next((t[name.lower()] for t in tables if name.lower() in t), None)
    if entry is None or (n is not None and entry.n != n):
        return None
    return entry


def beaten_optimum(entry: BestKnown | None, value: int, sense: str = "min") -> bool:
    """Whether ``value`` is better than ``entry``'s proven optimum: then the entry is of another
    instance of that name and size (a renamed or changed file) and does not apply."""
    if entry is None or not entry.optimal:
        return False
    return value < entry.value if sense == "min" else value > entry.value


def gap_percent(value: int, reference: int | None, sense: str = "min") -> float | None:
    """The gap to the best known in the problem's sense: above it for a minimisation,
    ``100 * (value - reference) / |reference|``; below it for a maximisation, ``100 * (reference -
    value) / |reference|`` (never negative for a value short of the reference); ``None`` when there
    is no reference (or it is 0 and the value is not)."""
    if reference is None:
        return None
    if reference == 0:
        return 0.0 if value == 0 else None
    diff = value - reference if sense == "min" else reference - value
    return 100.0 * diff / abs(reference)
