"""``check_problem``: a user problem's device code against its numpy reference (docs/problems.md).

On random permutations, on the CPU build and on each (simulated) GPU, through kernels/engine/perm_eval.cu:
the kernel cost, every pair delta and row function the snippet defines (segment moves included),
the engine's own evaluation by cost after the move of every neighbourhood in ``moves`` that has no
pair delta, every cache after each ``update_*`` hook (against ``prepare`` of the new permutation,
and through the deltas and rows read from it), ``partial_insert_row`` on full sequences and the
position its ``partial_insert_tie`` takes among equal values (against ``insertion_tie``). The
first mismatch is raised as one MetaheurError that names the device, the function, the move in
words and both values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from metaheur.devices import Device, available_devices, parse_device, to_host
from metaheur.engine.shapes import PERM, threads
from metaheur.engine.user_source import MOVES, upload
from metaheur.errors import MetaheurError
from metaheur.problem.permutation import PermutationProblem

_TYPE = {m: k for k, m in enumerate(MOVES)}
_ROWS = {"swap": "swap_row", "insert": "insert_row", "reverse": "reverse_row", "segment": "segment_row"}
GPU_BLOCK = threads(PERM)  # block functions run with a GPU's threads there


def segment_code(start: int, length: int, rev: int, longest: int) -> int:
    """A segment move's row code (kernels/engine/perm_moves.cuh, mh_seg_code)."""
    return ((start * longest + length - 1) << 1) | int(rev)


def segment_parts(code: int, longest: int) -> tuple[int, int, int]:
    """(start, length, reversed) of a segment move's row code."""
    return (code >> 1) // longest, (code >> 1) % longest + 1, code & 1


def move_words(move: str, i: int, j: int, longest: int = 3) -> str:
    """A move in words (0-based positions; a segment's ``i`` is its row code)."""
    if move == "swap":
        return f"swap of positions {min(i, j)} and {max(i, j)}"
    if move == "insert":
        return f"insertion of the element at position {i} at position {j}"
    if move == "segment":
        s, length, rev = segment_parts(i, longest)
        return f"segment of positions {s}..{s + length - 1} moved to position {j}{' reversed' if rev else ''}"
    return f"reversal of positions {min(i, j)}..{max(i, j)}"


def apply_move(perm: np.ndarray, move: str, i: int, j: int, longest: int = 3) -> np.ndarray:
    """``perm`` after the move (a copy), as kernels/engine/perm_moves.cuh applies it (a segment's
    ``i`` is its row code, for segments of at most ``longest`` elements)."""
    p = list(perm)
    if move == "insert":
        p.insert(j, p.pop(i))
    elif move == "segment":
        s, length, rev = segment_parts(i, longest)
        block = p[s:s + length]
        del p[s:s + length]
        p[j:j] = block[::-1] if rev else block
    else:
        a, b = min(i, j), max(i, j)
        if move == "swap":
            p[a], p[b] = p[b], p[a]
        else:
            p[a:b + 1] = p[a:b + 1][::-1]
    return np.array(p, dtype=perm.dtype)


def segment_valid(code: int, j: int, n: int, longest: int, reversible: bool) -> bool:
    """Whether (code, j) is a segment move: the block within the permutation and shorter than
    it, reversed only when longer than one element and allowed, j a destination other than its start."""
    s, length, rev = segment_parts(code, longest)
    ok_rev = not rev or (reversible and length > 1)
    return s + length <= n and length < n and ok_rev and 0 <= j <= n - length and j != s


@dataclass
class CheckReport:
    """What :func:`check_problem` compared: ``checks`` lines ``device: function (count)``."""

    problem: str
    checks: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.problem}: every check agrees with evaluate\n  " + "\n  ".join(self.checks)


class _Checker:
    def __init__(self, problem: PermutationProblem, device: Device, trials: int, rng: np.random.Generator):
        self.pb, self.dev, self.k, self.n = problem, device, trials, problem.n
        self.code = problem.user_code()
        self.mod = self.code.module("engine/perm_eval.cu", device)
        fields, arrays = problem.kernel_data()
        self.data = upload(fields, arrays, device)
        self.cs, self.ws = problem.cache_entries(), problem.work_entries()
        self.cache_dtype = problem.cache_dtype
        self.rng = rng
        self.longest, self.reversible = int(problem.segment_length), bool(problem.segment_reverse)
        self.block = GPU_BLOCK if device.is_gpu else 1  # block functions run with a GPU's threads there
        self.lines: list[str] = []

    def _run(self, name: str, grid: int, args: tuple) -> None:
        self.mod.kernel(name)(grid, self.block, tuple(args) + self.data)

    def fail(self, what: str, perm, detail: str) -> None:
        raise MetaheurError(f"check_problem({self.pb.kind}) on {self.dev.name}: {what} disagrees with evaluate "
                            f"on permutation {np.asarray(perm).tolist()}: {detail}")

    def perms(self) -> np.ndarray:
        return np.array([self.rng.permutation(self.n) for _ in range(self.k)], dtype=np.int32)

    def moves(self, count: int, move: str = "swap") -> tuple[np.ndarray, np.ndarray]:
        """``count`` random moves (i, j); a segment's i is its row code."""
        n = self.n
        if move == "segment":
            codes = [self.segment_row_code() for _ in range(count)]
            dest = [int(self.rng.integers(0, n - segment_parts(c, self.longest)[1])) for c in codes]
            starts = [segment_parts(c, self.longest)[0] for c in codes]
            return np.array(codes), np.array([d + (d >= s) for d, s in zip(dest, starts, strict=True)])
        i = self.rng.integers(0, n, size=count)
        j = (i + self.rng.integers(1, n, size=count)) % n
        return i, j

    def segment_row_code(self) -> int:
        """A random segment row: start, length (1..longest, within the permutation), orientation."""
        s = int(self.rng.integers(0, self.n))
        length = 1 + int(self.rng.integers(0, min(self.longest, self.n - 1, self.n - s)))
        rev = int(self.reversible and length > 1 and self.rng.integers(0, 2))
        return segment_code(s, length, rev, self.longest)

    def words(self, move: str, i: int, j: int) -> str:
        return move_words(move, int(i), int(j), self.longest)

    def moved(self, perm, move: str, i: int, j: int) -> np.ndarray:
        return apply_move(perm, move, int(i), int(j), self.longest)

    def cost(self, perms) -> np.ndarray:
        dev = self.dev
        out = dev.zeros(len(perms), np.int64)
        self._run("perm_cost", len(perms), (dev.asarray(perms), len(perms), self.n, out))
        return to_host(out)

    def prepare(self, perms):
        dev = self.dev
        caches = dev.zeros((len(perms), max(1, self.cs)), self.cache_dtype)
        self._run("perm_prepare", len(perms), (dev.asarray(perms), len(perms), self.n, caches, self.cs,
                                               dev.zeros((len(perms), self.ws), np.int64), self.ws))
        return caches

    def check_cost(self, perms) -> np.ndarray:
        ref, got = self.pb.values(perms), self.cost(perms)
        for b in np.flatnonzero(ref != got)[:1]:
            self.fail("cost", perms[b], f"kernel {got[b]}, evaluate {ref[b]}")
        self.lines.append(f"{self.dev.name}: cost ({len(perms)} permutations)")
        return ref

    def check_pairs(self, perms, base, caches, move: str, label: str) -> None:
        dev, k = self.dev, len(perms)
        i, j = self.moves(k, move)
        if move in ("swap", "reverse"):
            i, j = np.minimum(i, j), np.maximum(i, j)
        moved = np.array([self.moved(p, move, a, b) for p, a, b in zip(perms, i, j, strict=True)])
        ref = self.pb.values(moved) - base
        out = dev.zeros(k, np.int64)
        mv = np.stack([np.full(k, _TYPE[move]), i, j], axis=1).astype(np.int32)
        self._run("perm_pair", k, (dev.asarray(perms), dev.asarray(mv), k, self.n, caches, self.cs,
                                   dev.asarray(base), dev.zeros((k, self.n), np.int32), out))
        got = to_host(out)
        for b in np.flatnonzero(ref != got)[:1]:
            self.fail(label, perms[b], f"{self.words(move, i[b], j[b])}: delta {got[b]}, evaluate says {ref[b]}")
        self.lines.append(f"{self.dev.name}: {label} ({k} moves)")

    def check_rows(self, perms, base, caches, move: str, label: str | None = None) -> None:
        dev, k, n = self.dev, len(perms), self.n
        rows = (np.array([self.segment_row_code() for _ in range(k)]) if move == "segment"
                else self.rng.integers(0, n, size=k))
        out = dev.zeros((k, n), np.int64)
        spec = np.stack([np.full(k, _TYPE[move]), rows], axis=1).astype(np.int32)
        scratch = dev.zeros((k, self.block * n), np.int32)
        self._run("perm_row", k, (dev.asarray(perms), dev.asarray(spec), k, n, caches, self.cs, dev.asarray(base),
                                  dev.zeros((k, self.ws), np.int64), self.ws, scratch, out))
        got = to_host(out)
        label = label or _ROWS[move]
        for b in range(k):
            ref = np.zeros(n, np.int64)
            js = [j for j in range(n) if self.is_move(move, int(rows[b]), j)]
            if js:
                moved = np.array([self.moved(perms[b], move, rows[b], j) for j in js])
                ref[js] = self.pb.values(moved) - base[b]
            for j in np.flatnonzero(ref != got[b])[:1]:
                what = self.words(move, rows[b], j) if j in js else f"row {rows[b]}, no move at {j}"
                self.fail(label, perms[b], f"{what}: out[{j}] = {got[b, j]}, evaluate says {ref[j]}")
        self.lines.append(f"{self.dev.name}: {label} ({k} rows)")

    def is_move(self, move: str, i: int, j: int) -> bool:
        if move == "segment":
            return segment_valid(i, j, self.n, self.longest, self.reversible)
        return i != j

    def check_update(self, perms, move: str) -> None:
        dev, k = self.dev, len(perms)
        caches = self.prepare(perms)
        i, j = self.moves(k, move)
        moved = np.array([self.moved(p, move, a, b) for p, a, b in zip(perms, i, j, strict=True)]).astype(np.int32)
        mv = np.stack([np.full(k, _TYPE[move]), i, j], axis=1).astype(np.int32)
        self._run("perm_update", k, (dev.asarray(moved), dev.asarray(mv), k, self.n, caches, self.cs,
                                     dev.zeros((k, self.ws), np.int64), self.ws))
        got, ref = to_host(caches), to_host(self.prepare(moved))
        hook = f"update_{move}"
        for b in np.flatnonzero((got != ref).any(axis=1))[:1]:
            e = int(np.flatnonzero(got[b] != ref[b])[0])
            self.fail(hook, perms[b], f"after the {self.words(move, i[b], j[b])}, cache[{e}] = {got[b, e]}, "
                      f"prepare of the new permutation gives {ref[b, e]}")
        self.lines.append(f"{self.dev.name}: {hook} ({k} moves)")
        base = self.pb.values(moved)
        for other in MOVES:
            if self.code.has(f"{other}_delta"):
                self.check_pairs(moved, base, caches, other, f"{other}_delta after {hook}")
            if self.code.has(_ROWS[other]):
                self.check_rows(moved, base, caches, other, f"{_ROWS[other]} after {hook}")

    def check_partial(self, perms) -> None:
        dev, k, n = self.dev, len(perms), self.n
        at = self.rng.integers(0, n, size=k)
        seqs = np.array([np.append(np.delete(p, a), 0) for p, a in zip(perms, at, strict=True)], dtype=np.int32)
        elems = perms[np.arange(k), at].astype(np.int32)
        out = dev.zeros((k, n + 1), np.int64)
        self._run("perm_partial", k, (dev.asarray(seqs), dev.asarray(np.full(k, n - 1, np.int32)), dev.asarray(elems),
                                      k, n, dev.zeros((k, self.ws), np.int64), self.ws, out))
        got = to_host(out)
        for b in range(k):
            full = np.array([np.insert(seqs[b][:n - 1], q, elems[b]) for q in range(n)])
            ref = self.pb.values(full)
            for q in np.flatnonzero(ref != got[b, :n])[:1]:
                self.fail("partial_insert_row", full[q], f"element {elems[b]} inserted at position {q} of the other "
                          f"{n - 1}: out[{q}] = {got[b, q]}, evaluate says {ref[q]}")
        self.lines.append(f"{self.dev.name}: partial_insert_row ({k} sequences)")
        if self.code.has("partial_insert_tie"):
            self.check_ties(seqs, elems, got)

    def check_ties(self, seqs, elems, rows) -> None:
        """The position perm_insert_best takes with ties: the least value, then the least
        ``insertion_tie`` of the numpy reference, then the first."""
        dev, k, n = self.dev, len(seqs), self.n
        pos = dev.zeros(k, np.int64)
        self._run("perm_insert_best", k, (dev.asarray(seqs), dev.asarray(np.full(k, n - 1, np.int32)),
                                          dev.asarray(elems), k, n, 1, dev.zeros((k, self.ws), np.int64), self.ws,
                                          dev.zeros((k, n + 1), np.int64), pos))
        got = to_host(pos)
        for b in range(k):
            values = self.pb.engine_sign * rows[b, :n]
            ties = [(int(self.pb.insertion_tie(seqs[b][:n - 1], int(elems[b]), q)), q)
                    for q in np.flatnonzero(values == values.min()).tolist()]
            want = min(ties)[1]
            if got[b] != want:
                self.fail("partial_insert_tie", np.insert(seqs[b][:n - 1], want, elems[b]),
                          f"element {elems[b]} inserted into the other {n - 1}: position {got[b]} taken, the "
                          f"least value and then the least insertion_tie {dict((q, t) for t, q in ties)} give {want}")
        self.lines.append(f"{self.dev.name}: partial_insert_tie ({k} sequences)")

    def run(self) -> list[str]:
        perms = self.perms()
        base = self.check_cost(perms)
        caches = self.prepare(perms)
        for move in MOVES:
            if self.code.has(f"{move}_delta"):
                self.check_pairs(perms, base, caches, move, f"{move}_delta")
            elif move in self.pb.moves:  # the engine's own evaluation: cost after the move
                self.check_pairs(perms, base, caches, move, f"cost after {move} moves")
            if self.code.has(_ROWS[move]):
                self.check_rows(perms, base, caches, move)
            if self.cs and move in self.pb.moves and move != "segment":  # a segment move's cache: prepare
                self.check_update(perms, move)
        if self.code.has("partial_insert_row"):
            self.check_partial(perms)
        return self.lines


def check_problem(problem: PermutationProblem, devices=None, trials: int = 16, seed: int = 0) -> CheckReport:
    """Compare ``problem``'s device functions with its ``evaluate`` on ``trials`` random
    permutations (and moves) on each of ``devices`` (default: the CPU build and every GPU,
    simulated ones included), after :func:`check_cache`; raises a one-line MetaheurError at the
    first mismatch, returns what was checked otherwise."""
    if problem.user_code() is None:
        raise MetaheurError(f"check_problem({problem.kind}): the problem has no device_code (numpy only)")
    if trials < 1:
        raise MetaheurError(f"check_problem: trials must be >= 1, got {trials}")
    devs = available_devices() if devices is None else [parse_device(d) for d in devices]
    if problem.cache_entries() > 0:  # writes beyond the cache would show as mismatches (or worse) below
        check_cache(problem, np.random.default_rng(seed))
    report = CheckReport(problem.name)
    for dev in devs:
        report.checks += _Checker(problem, dev, trials, np.random.default_rng(seed)).run()
    return report


#: Entries beyond ``cache_size`` that :func:`check_cache` watches (at most), filled with :data:`_UNWRITTEN`.
CACHE_GUARD = 2**20
_UNWRITTEN = {"int64": -(2**63) + 12345, "int32": -(2**31) + 123}


def preflight(problem: PermutationProblem, trials: int = 4, seed: int = 0) -> None:
    """A run's checks of a user's problem before any search, each a one-line MetaheurError
    (docs/problems.md, "What a run checks first"): its ``moves`` and ``sense``; its ``evaluate`` on
    ``trials`` random permutations (raising, another shape than one value a row, floats: costs are
    exact integers); with device code, its cache large enough for what ``prepare`` and the
    ``update_*`` hooks write (:func:`check_cache`)."""
    problem.check_moves()
    rng = np.random.default_rng(seed)
    problem.values(np.array([rng.permutation(problem.n) for _ in range(trials)]))
    if problem.user_code() is not None and problem.cache_entries() > 0:
        check_cache(problem, rng)


def check_cache(problem: PermutationProblem, rng: np.random.Generator) -> None:
    """``prepare`` and each ``update_*`` hook, on the CPU build for one random permutation and
    move, write no cache entry at or beyond ``cache_size`` (the entries after it, up to
    :data:`CACHE_GUARD`, are watched); else one line with the size the writes need."""
    from metaheur.search.cost_probe import random_moves

    dev, n, cs = parse_device("cpu"), problem.n, problem.cache_entries()
    code = problem.user_code()
    mod = code.module("engine/perm_eval.cu", dev)
    fields, arrays = problem.kernel_data()
    data, ws = upload(fields, arrays, dev), problem.work_entries()
    unwritten = _UNWRITTEN[problem.cache_dtype]
    guard = min(CACHE_GUARD, max(4 * cs, n * n))
    perm = dev.asarray(rng.permutation(n).astype(np.int32)[None, :])

    def watched(hook: str, kernel: str, args: tuple, cache) -> None:
        mod.kernel(kernel)(1, 1, args + data)
        beyond = np.flatnonzero(to_host(cache)[cs:] != unwritten)
        if len(beyond):
            raise MetaheurError(f"{problem.kind} problem: the cache is too small: cache_size is {cs} but {hook} "
                                f"writes cache[{cs + int(beyond[-1])}]; it needs cache_size >= "
                                f"{cs + int(beyond[-1]) + 1}")

    cache = dev.asarray(np.full(cs + guard, unwritten, dtype=problem.cache_dtype))
    watched("prepare", "perm_prepare", (perm, 1, n, cache, cs, dev.zeros((1, ws), np.int64), ws), cache)
    for move in problem.moves:
        if move != "segment" and code.has(f"update_{move}"):
            i, j = (int(x[0]) for x in random_moves(move, n, 1, rng, 3, True))
            moved = dev.asarray(apply_move(to_host(perm)[0], move, i, j)[None, :])
            mv = dev.asarray(np.array([[_TYPE[move], i, j]], dtype=np.int32))
            watched(f"update_{move}", "perm_update", (moved, mv, 1, n, cache, cs, dev.zeros((1, ws), np.int64), ws),
                    cache)

