"""A user's own permutation problem: a Python class with its data, a numpy reference and a CUDA-C
snippet of device functions (the device contract, docs/problems.md).

A subclass sets ``kind``, ``title``, ``sense``, ``moves`` and ``device_code``, calls
``super().__init__(name=..., n=...)`` and defines ``data()`` (integer arrays and scalars) and
``evaluate(perms)`` (the exact batched reference). The generic engine (kernels/engine/perm_*.cu,
metaheur/search/perm_search.py, metaheur/islands/perm_operators.py) runs its searches from that
alone. A problem without ``device_code`` runs the numpy-only route (GA and a sampled
neighbourhood on the CPU, the slow path).

Pickled (to Dask workers and loky processes) as its attributes, i.e. its arrays, and its class
by reference (the class holds the snippet); the generated kernel source is rebuilt where needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from metaheur.engine.user_source import (
    CACHE_TYPES,
    CANDIDATE_COUNT,
    CANDIDATES,
    MOVES,
    Field,
    UserCode,
    check_identifier,
    contract_functions,
)
from metaheur.errors import MetaheurError
from metaheur.problem.fingerprint import fingerprint
from metaheur.problem.interface import Problem

if TYPE_CHECKING:
    from metaheur.islands.params import IslandParams
    from metaheur.search.perm_defaults import RunBudget, SearchChoice

#: A cost bound (``value_bound``) above this is refused: a delta of two costs must fit in int64.
VALUE_LIMIT = 2**62
#: An int32 cache (``cache_dtype = "int32"``) needs a declared bound on its entries below this.
CACHE32_LIMIT = 2**31
#: A delta bound below this lets the searches scan moves in 32-bit ints (MH_USER_DELTA32).
SCAN32_LIMIT = 2**30
#: The most int64 entries of per-thread scratch (``scratch_size``): 64 KiB a thread, since a GPU
#: reserves a kernel's local memory for every thread it could hold (2,048 an SM on sm_90).
SCRATCH_LIMIT = 8192
_WIDEN = {"bool": "int32", "int8": "int32", "uint8": "int32", "int16": "int32", "uint16": "int32",
          "int32": "int32", "int64": "int64", "uint32": "int64"}
_CACHED = ("_mh_code", "_mh_fields", "_mh_arrays", "_mh_kernel_data")
#: The longest segment move a problem may declare (``segment_length``).
SEGMENT_LIMIT = 64


def _scratch_capacity(entries: int) -> int:
    """The local array behind ``d.scratch``: ``entries`` rounded up to a power of two (at least
    64), so that instances of near sizes share one compiled module; 0 without scratch."""
    return 0 if entries <= 0 else max(64, 1 << (entries - 1).bit_length())


class PermutationProblem(Problem):
    """Base class of a user's permutation problem (the contract of docs/problems.md)."""

    kind: str = "user"
    title: str = "permutation problem"
    sense: str = "min"
    moves: tuple[str, ...] = ("swap",)
    device_code: str | None = None
    cache_size: int = 0
    cache_dtype: str = "int64"
    work_size: int = 0
    scratch_size: int = 0
    #: The segment move (Or-opt): blocks of 1..segment_length consecutive elements, also reversed
    #: where segment_reverse.
    segment_length: int = 3
    segment_reverse: bool = True
    crossovers: tuple[str, ...] = ("ox", "pmx", "cx", "ux", "none")
    #: How far apart two solutions are for the GA's diversity control (:meth:`distances`).
    distance: str = "positions"

    def __init_subclass__(cls, **kwargs) -> None:
        """A subclass's ``kind`` names its kernels' symbols: a C identifier, checked when the class
        is created (one line, before any instance or kernel)."""
        super().__init_subclass__(**kwargs)
        check_identifier(cls.kind, f"{cls.__name__}: problem kind")

    def __init__(self, name: str | None = None, n: int | None = None, source: str | None = None):
        if n is None or isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
            raise MetaheurError(f"{type(self).__name__}: n must be an int >= 2, got {n!r}")
        self.name = str(name or self.kind)
        self.n = int(n)
        self.source = source

    # ------------------------------------------------------------ what a subclass defines
    def data(self) -> dict:
        """The device data: ``{name: int array or int}`` (int32/int64 arrays; smaller integer
        types are widened), in the order of the generated ``struct Data``."""
        return {}

    def evaluate(self, perms: np.ndarray) -> np.ndarray:
        """Exact int64 values of a k x n batch of permutations (the numpy reference)."""
        raise NotImplementedError(f"{type(self).__name__} must define evaluate(perms)")

    def value_bound(self) -> int | None:
        """An upper bound on |value| of any permutation (None: cannot be told)."""
        return None

    def delta_bound(self) -> int | None:
        """An upper bound on |entry| of the cache and on |delta| of any move (None: twice
        :meth:`value_bound`, the difference of two values); an int32 cache needs it below 2^31."""
        bound = self.value_bound()
        return None if bound is None else 2 * int(bound)

    def temperature_scale(self) -> float:
        """The unit of the iterated greedy's acceptance temperature (Ruiz and Stuetzle 2007: the
        mean processing time / 10 for the flow shop); default 1."""
        return 1.0

    def candidates(self) -> np.ndarray | None:
        """Candidate lists: an n x k int array, row e the k elements (distinct, not e) that moves
        should bring next to element e (e.g. its k nearest neighbours); the engine's scans then
        evaluate only such moves (granular neighbourhoods, Toth and Vigo 2003). None: every move."""
        return None

    def construction_key(self) -> np.ndarray | None:
        """NEH's key per element (inserted in decreasing key order), or None for no NEH start."""
        return None

    def insertion_tie(self, seq: np.ndarray, elem: int, pos: int) -> int:
        """The numpy reference of the device code's ``partial_insert_tie``: the tie key (smaller is
        taken) of inserting ``elem`` at ``pos`` of the partial sequence ``seq``; needed by
        ``check_problem`` where the device code defines ``partial_insert_tie``."""
        raise MetaheurError(f"{self.kind} problem: its device code defines partial_insert_tie but the class no "
                            f"insertion_tie(seq, elem, pos), its numpy reference")

    # ------------------------------------------------------------ the Problem interface
    def values(self, perms) -> np.ndarray:
        """:meth:`evaluate` checked: an int64 array of one value per row; an ``evaluate`` that
        raises, or returns another shape or floats (values are exact integers), is one line."""
        perms = np.ascontiguousarray(perms, dtype=np.int64).reshape(-1, self.n)
        try:
            out = np.asarray(self.evaluate(perms))
        except MetaheurError:
            raise
        except Exception as exc:  # the user's code: one line that names it
            raise MetaheurError(f"{self.kind} problem: evaluate raised {type(exc).__name__}: {exc}") from exc
        if out.shape != (len(perms),) or out.dtype.kind not in "iu":
            raise MetaheurError(f"{self.kind} problem: evaluate must return {len(perms)} integers (int64), got "
                                f"shape {out.shape} dtype {out.dtype}")
        return out.astype(np.int64)

    def value(self, perm) -> int:
        """The exact value of one permutation, through :meth:`values` (checked)."""
        return int(self.values(self.check_solution(perm)[None, :])[0])

    def engine_costs(self, perms: np.ndarray) -> np.ndarray:
        """``engine_sign * values(perms)`` (checked)."""
        return self.engine_sign * self.values(perms)

    def preflight(self) -> None:
        """A run's checks before any search (:func:`~metaheur.problem.permutation_check.preflight`)."""
        from metaheur.problem.permutation_check import preflight

        preflight(self)

    def distances(self, solution: np.ndarray, population: np.ndarray) -> np.ndarray:
        """How far ``solution`` is from every row of ``population`` (:meth:`distance_table`)."""
        return self.distance_table(np.asarray(solution)[None, :], population)[0]

    def distance_table(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """How far every row of ``a`` is from every row of ``b`` (len(a) x len(b), :attr:`distance`):
        with ``positions``, the positions holding different elements (an assignment's view); with
        ``displacement``, Spearman's footrule, the sum over the elements of how far apart their
        positions are (an order's view, as in Lugo, Segura and Miranda 2022 for the LOP). One row
        of ``a`` at a time, so that memory stays len(b) x n."""
        a, b = np.asarray(a), np.asarray(b)
        if self.distance == "displacement":
            a, b = np.argsort(a, axis=1), np.argsort(b, axis=1)  # positions of the elements
            return np.array([np.abs(b - row).sum(axis=1) for row in a]).reshape(len(a), len(b))
        if self.distance == "positions":
            return np.array([(b != row).sum(axis=1) for row in a]).reshape(len(a), len(b))
        raise MetaheurError(f"{self.kind} problem: distance must be 'positions' or 'displacement', "
                            f"got {self.distance!r}")

    def fingerprint(self) -> str:
        _, arrays = self.device_data()
        return fingerprint(f"{type(self).__qualname__}:{self.kind}:{self.n}:{self.sense}:{self.device_code}",
                           [np.asarray(v) for v in arrays.values()])

    def properties(self) -> dict:
        return {"kind": self.kind, "problem": self.title, "n": self.n, "sense": self.sense,
                "moves": ", ".join(self.moves), "device code": "yes" if self.device_code else "no (numpy only)"}

    # ------------------------------------------------------------ what the islands run
    def default_params(self):
        """GA islands with the order crossover (ox) when the problem's first move is an insertion
        (an order: scheduling, layout), the position-based uniform crossover (ux) otherwise (an
        assignment); the generic local search of :class:`PermSearchParams` (``auto``) with its
        budget left open: a run chooses both (:meth:`choose_search`). Without device code: the
        numpy-only route (:mod:`metaheur.islands.numpy_operators`)."""
        from metaheur.islands.params import GAParams, IslandParams

        crossover = "ox" if self.moves[0] == "insert" else "ux"
        return IslandParams(ga=GAParams(population=20, offspring=10, crossover=crossover, restart_after=30))

    def choose_search(self, params: IslandParams, budget: RunBudget) -> tuple[IslandParams, SearchChoice | None]:
        """The generic local search's method, move and budget per child where ``params`` leave them
        open (``auto``, no move, no ``ls_budget``), from the timings of the device functions when
        the run is timed (:mod:`metaheur.search.perm_defaults`, docs/decisions/perm-defaults.md),
        set in the parameters; the choice made. Without device code (the numpy-only route, nothing
        to time), no choice: its sampled descents get the ILS's usual budget where none is given."""
        from dataclasses import replace

        from metaheur.islands.perm_operators import default_perm_budget
        from metaheur.search.perm_defaults import choose_for
        from metaheur.search.perm_search import PermSearchParams

        perm, ga = params.search(PermSearchParams), params.ga
        perm.resolved(self)  # a given method or move the problem cannot run: one line, before the probe
        if self.device_code is None:
            size = default_perm_budget("ils", self.n) if ga.ls_budget is None else ga.ls_budget
            return replace(params, ga=replace(ga, ls_budget=size)), None
        defaults = self.default_params()
        own = defaults.search(PermSearchParams)  # the problem's own choice is not the user's
        given = (perm.method, perm.move, ga.ls_budget) != (own.method, own.move, defaults.ga.ls_budget)
        choice = choose_for(self, perm, ga.ls_budget, ga.population + ga.offspring, budget, given)
        chosen = replace(perm, method=choice.method, move=choice.move, sample=choice.sample)
        return replace(params, ga=replace(ga, ls_budget=choice.ls_budget)).with_search(chosen), choice

    def operators(self, device, params, ls_budget: int | None = None):
        """The generic operators (metaheur/islands/perm_operators.py), or the numpy-only ones."""
        if self.device_code is None:
            from metaheur.islands.numpy_operators import NumpyOperators

            return NumpyOperators(self, device, params, ls_budget)
        from metaheur.islands.perm_operators import PermOperators

        return PermOperators(self, device, params, ls_budget)

    @classmethod
    def island_algorithms(cls) -> dict:
        """``none`` runs continued local searches (a two-parent crossover the memetic GA)."""
        from metaheur.islands.ils import ILSIsland

        return {"none": ILSIsland}

    def local_search_island(self, params: IslandParams) -> IslandParams:
        """A chain of the generic local search beside GA islands, a generation of it being one
        child's search (:func:`~metaheur.islands.params.ls_island`); how many by default:
        :meth:`default_local_search_islands` (none unless a subclass says)."""
        from metaheur.islands.params import ls_island_params

        return ls_island_params(params, self)

    def chain_search(self, params) -> str:
        """The generic local search of ``params.perm`` (its method resolved for this problem), or the
        numpy-only route's sampled descent."""
        from metaheur.search.perm_search import METHOD_NAMES, PermSearchParams

        if self.device_code is None:
            return "sampled descent"
        return METHOD_NAMES[params.search(PermSearchParams).resolved(self)[0]]

    def gpu_chains(self, params, device) -> int:
        """Iterated-greedy chains fill a GPU: one wave of them (:func:`~metaheur.islands.balance.gpu_wave`,
        a block a chain on every multiprocessor; with ``PermSearchParams(kernel="warp")`` as many
        one-warp chains a multiprocessor as fit, :func:`~metaheur.search.perm_search.chains_per_sm`),
        each going on from where it stood; the other searches run one chain
        (docs/decisions/pfsp-method.md)."""
        from metaheur.devices import parse_device
        from metaheur.islands.balance import gpu_wave
        from metaheur.search.perm_search import PermSearchParams, chains_per_sm

        search = params.search(PermSearchParams)
        if self.device_code is None or search.resolved(self)[0] != "ig":
            return 1
        device = parse_device(device)
        if search.kernel == "classic" or not device.is_gpu:
            return gpu_wave(self, device)
        return device.cores * chains_per_sm(self, search, device)

    def precompile(self, device) -> None:
        """Build the generic kernels for ``device`` (compile errors come before the run's clock);
        without device code, the numpy-only route's one warning."""
        code = self.user_code()
        if code is None:
            from metaheur.islands.numpy_operators import warn_numpy_route

            warn_numpy_route(self)
        else:
            for kernel_file in ("engine/perm_eval.cu", "engine/perm_search.cu"):
                code.module(kernel_file, device)

    # ------------------------------------------------------------ the engine's view
    def device_data(self) -> tuple[tuple[Field, ...], dict]:
        """The validated data layout and arrays (C-contiguous int32/int64 copies, read-only),
        cached; one-line errors for a wrong name, dtype or bound."""
        if "_mh_fields" not in self.__dict__:
            raw = self.data()
            if not isinstance(raw, dict):
                raise MetaheurError(f"{self.kind} problem: data() must return a dict, got {type(raw).__name__}")
            fields, arrays = [], {}
            for key, value in raw.items():
                check_identifier(str(key), f"{self.kind} problem: data field")
                if key == "scratch":
                    raise MetaheurError(f"{self.kind} problem: data field 'scratch' is the engine's (d.scratch, "
                                        f"scratch_size); rename it")
                fields.append(self._field(str(key), value, arrays))
            bound = self.value_bound()
            if bound is not None and not 0 <= int(bound) < VALUE_LIMIT:
                raise MetaheurError(f"{self.kind} problem: value_bound() = {bound} is not below 2^62: costs and "
                                    f"deltas could overflow 64 bits")
            self._mh_fields, self._mh_arrays = tuple(fields), arrays
        return self._mh_fields, self._mh_arrays

    def _field(self, key: str, value, arrays: dict) -> Field:
        where = f"{self.kind} problem: data field {key!r}"
        if isinstance(value, (bool, np.bool_)):
            raise MetaheurError(f"{where}: a bool scalar; give an int")
        if isinstance(value, (int, np.integer)):
            if not -(2**63) <= int(value) < 2**63:
                raise MetaheurError(f"{where} = {value} does not fit int64")
            arrays[key] = int(value)
            return Field(key, "int64", False)
        a = np.asarray(value)
        if a.dtype.name not in _WIDEN:
            raise MetaheurError(f"{where}: dtype {a.dtype} is not an integer type the kernels take (int32 or "
                                f"int64; bool, int8, uint8, int16, uint16 and uint32 are widened)")
        dtype = _WIDEN[a.dtype.name]
        if a.dtype.name == "uint32" and a.size and int(a.max()) > np.iinfo(np.int64).max:
            raise MetaheurError(f"{where}: values do not fit int64")
        out = np.ascontiguousarray(a, dtype=dtype).copy()
        out.setflags(write=False)
        arrays[key] = out
        return Field(key, dtype, True)

    def kernel_data(self) -> tuple[tuple[Field, ...], dict]:
        """:meth:`device_data` and the engine's own fields: the checked candidate lists (``mh_cand``,
        ``mh_ck``) where :meth:`candidates` gives them; cached."""
        if "_mh_kernel_data" not in self.__dict__:
            fields, arrays = self.device_data()
            cand = self.candidates()
            if cand is not None:
                table = self._checked_candidates(cand)
                table.setflags(write=False)
                fields = (*fields, Field(CANDIDATES, "int32", True), Field(CANDIDATE_COUNT, "int64", False))
                arrays = {**arrays, CANDIDATES: table, CANDIDATE_COUNT: table.shape[1]}
            self._mh_kernel_data = (fields, arrays)
        return self._mh_kernel_data

    def _checked_candidates(self, cand) -> np.ndarray:
        where = f"{self.kind} problem: candidates()"
        a = np.asarray(cand)
        if a.ndim != 2 or a.shape[0] != self.n or not 1 <= a.shape[1] < self.n or a.dtype.kind not in "iu":
            raise MetaheurError(f"{where} must be an n x k int array with 1 <= k < n = {self.n}, got "
                                f"{a.dtype} {a.shape}")
        if a.min() < 0 or a.max() >= self.n:
            raise MetaheurError(f"{where}: entries must be elements 0..{self.n - 1}")
        own = np.flatnonzero((a == np.arange(self.n)[:, None]).any(axis=1))
        if len(own):
            raise MetaheurError(f"{where}: row {own[0]} lists its own element")
        ordered = np.sort(a, axis=1)
        twice = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if len(twice):
            raise MetaheurError(f"{where}: row {twice[0]} lists an element twice")
        return np.ascontiguousarray(a, dtype=np.int32)

    def user_code(self) -> UserCode | None:
        """The checked device code (None without ``device_code``): which contract functions it
        defines, with the moves and caches it declares; cached, never pickled."""
        if self.device_code is None:
            return None
        if "_mh_code" not in self.__dict__:
            check_identifier(self.kind, "problem kind")
            self._check_cache_dtype()
            functions = contract_functions(self.kind, self.device_code, self.cache_dtype)
            self._check_declared(functions)
            fields, _ = self.kernel_data()
            bound = self.delta_bound()
            self._mh_code = UserCode(self.kind, self.device_code, fields, self.engine_sign, functions,
                                     self.cache_dtype, bound is not None and 0 <= int(bound) < SCAN32_LIMIT,
                                     _scratch_capacity(self.scratch_entries()),
                                     (int(self.segment_length), bool(self.segment_reverse)))
        return self._mh_code

    def _check_cache_dtype(self) -> None:
        """``cache_dtype`` is int64 or int32; int32 only with :meth:`delta_bound` below 2^31."""
        if self.cache_dtype not in CACHE_TYPES:
            raise MetaheurError(f"{self.kind} problem: cache_dtype must be 'int64' or 'int32', "
                                f"got {self.cache_dtype!r}")
        if self.cache_dtype == "int32":
            self.device_data()  # value_bound checked first
            bound = self.delta_bound()
            if bound is None or not 0 <= int(bound) < CACHE32_LIMIT:
                raise MetaheurError(f"{self.kind} problem: cache_dtype int32 needs delta_bound() below 2^31 (cache "
                                    f"entries could overflow 32 bits), got {bound}; use cache_dtype int64")

    def check_moves(self) -> None:
        """``moves``: one or more of :data:`MOVES`; ``sense``: min or max (one line each)."""
        moves = tuple(self.moves) if isinstance(self.moves, (tuple, list)) else self.moves
        if not isinstance(moves, tuple) or not moves or any(m not in MOVES for m in moves):
            raise MetaheurError(f"{self.kind} problem: moves must be a tuple of one or more of {', '.join(MOVES)}, "
                                f"got {moves!r}")
        if self.sense not in ("min", "max"):
            raise MetaheurError(f"{self.kind} problem: sense must be 'min' or 'max', got {self.sense!r}")

    def _check_declared(self, functions: frozenset[str]) -> None:
        self.check_moves()
        moves = tuple(self.moves)
        cache, work = self.cache_entries(), self.work_entries()
        hooks = sorted(f for f in functions if f == "prepare" or f.startswith("update_"))
        if cache > 0 and "prepare" not in functions:
            raise MetaheurError(f"{self.kind} problem: cache_size is {cache} but device_code defines no prepare")
        if cache == 0 and hooks:
            raise MetaheurError(f"{self.kind} problem: device_code defines {', '.join(hooks)} but cache_size is 0")
        if min(cache, work) < 0:
            raise MetaheurError(f"{self.kind} problem: cache_size and work_size must be >= 0")
        if "segment" in moves and not (isinstance(self.segment_length, (int, np.integer))
                                       and 1 <= self.segment_length <= SEGMENT_LIMIT):
            raise MetaheurError(f"{self.kind} problem: segment_length must be an int in 1..{SEGMENT_LIMIT}, "
                                f"got {self.segment_length!r}")
        scratch = self.scratch_entries()
        if not 0 <= scratch <= SCRATCH_LIMIT:
            raise MetaheurError(f"{self.kind} problem: scratch_size is {scratch}; it must be 0..{SCRATCH_LIMIT} "
                                f"(int64 entries a thread); keep larger tables in work (work_size) or the cache")

    def cache_entries(self) -> int:
        """Cache entries per solution (``cache_size``, an int or a method; of ``cache_dtype``)."""
        return int(self.cache_size() if callable(self.cache_size) else self.cache_size)

    def work_entries(self) -> int:
        """int64 scratch entries per search (``work_size``, an int or a method; at least 1)."""
        return max(1, int(self.work_size() if callable(self.work_size) else self.work_size))

    def scratch_entries(self) -> int:
        """int64 entries of ``d.scratch``, each thread's own (``scratch_size``, an int or a method)."""
        return int(self.scratch_size() if callable(self.scratch_size) else self.scratch_size)

    def __getstate__(self) -> dict:
        """Pickled without the generated code and the validated copies (rebuilt on arrival)."""
        return {k: v for k, v in self.__dict__.items() if k not in _CACHED}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
