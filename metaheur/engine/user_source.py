"""Kernel sources for a user's own permutation problem (docs/problems.md, the device contract).

A generic kernel file (``kernels/engine/perm_*.cu``) includes the virtual header
``mh_user_problem.cuh``; :class:`UserCode` generates it from a problem's ``device_code`` snippet
and its data fields: ``MH_SENSE`` (+1 minimise, -1 maximise), one ``MH_USER_HAS_<FUNCTION>`` per
contract function the snippet defines, then ``namespace user { struct Data {...}; typedef ...
cache_t; <snippet> }`` (``cache_t``: the cache's entry type, ``long long`` or ``int`` by the
problem's ``cache_dtype``) with a ``#line 1 "<KIND problem>"`` directive so that the compilers'
messages give the snippet's own line numbers. The data fields become explicit kernel parameters
at ``/*@DATA_PARAMS@*/`` and fill the kernel's ``user::Data D`` at ``/*@DATA_INIT@*/``, and a
kernel's cache parameter, written ``/*@CACHE_T@*/long long *caches``, takes the cache's C type,
so the loader's argument checks cover them. A problem that declares scratch memory gets
``long long *scratch`` in ``Data``, pointing at a local array of the kernel, so each thread has its
own. (kernels/engine/mh_user_problem.cuh is a stand-in that lets the generic kernels compile alone.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from metaheur.devices import Device, parse_device
from metaheur.engine.module import Kernel, KernelModule, load_module
from metaheur.engine.source import KernelSource, load_source
from metaheur.errors import MetaheurError
from metaheur.suggest import did_you_mean

HEADER = "mh_user_problem.cuh"
DATA_PARAMS, DATA_INIT = "/*@DATA_PARAMS@*/", "/*@DATA_INIT@*/"

_PAIR = ("const Data&", "const int*", "const cache_t*", "int", "int")
_ROW = ("const Data&", "const int*", "const cache_t*", "int", "ll*", "ll*")
_UPDATE = ("const Data&", "const int*", "cache_t*", "int", "int", "ll*")
#: The contract's functions: name -> (return type, parameter types).
CONTRACT: dict[str, tuple[str, tuple[str, ...]]] = {
    "cost": ("ll", ("const Data&", "const int*")),
    "swap_delta": ("ll", _PAIR),
    "insert_delta": ("ll", _PAIR),
    "reverse_delta": ("ll", _PAIR),
    "segment_delta": ("ll", ("const Data&", "const int*", "const cache_t*", "int", "int", "int", "int")),
    "swap_row": ("void", _ROW),
    "insert_row": ("void", _ROW),
    "reverse_row": ("void", _ROW),
    "segment_row": ("void", ("const Data&", "const int*", "const cache_t*", "int", "int", "int", "ll*", "ll*")),
    "partial_insert_row": ("void", ("const Data&", "const int*", "int", "int", "ll*", "ll*")),
    "partial_insert_tie": ("ll", ("const Data&", "const int*", "int", "int", "int", "const ll*")),
    "prepare": ("void", ("const Data&", "const int*", "cache_t*", "ll*")),
    "update_swap": ("void", _UPDATE),
    "update_insert": ("void", _UPDATE),
    "update_reverse": ("void", _UPDATE),
}
MOVES = ("swap", "insert", "reverse", "segment")
#: A cache's entry type (``cache_dtype``) -> the C type ``user::cache_t`` stands for.
CACHE_TYPES = {"int64": "ll", "int32": "int"}
CACHE_PARAM = "/*@CACHE_T@*/long long"
#: The engine's own data fields of a problem with candidate lists: the n x k candidates and k
#: (a launch may pass k = 0: no granular scans). Users' field names cannot start with mh_.
CANDIDATES, CANDIDATE_COUNT = "mh_cand", "mh_ck"

_CPP_WORDS = frozenset("""
    alignas alignof and asm auto bool break case catch char class const constexpr continue decltype
    default delete do double else enum explicit extern false float for friend goto if inline int
    long mutable namespace new noexcept not nullptr operator or private protected public register
    return short signed sizeof static struct switch template this throw true try typedef typename
    union unsigned using virtual void volatile while
""".split())  # noqa: SIM905
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_FUNCTION = re.compile(
    r"__device__\s+((?:(?:__forceinline__|__noinline__|inline|static)\s+)*)"
    r"([A-Za-z_][\w\s\*&:]*?)\s*\b([A-Za-z_]\w*)\s*\(([^)]*)\)\s*\{"
)
_TYPE_WORDS = frozenset({"const", "int", "long", "ll", "Data", "cache_t", "unsigned", "char", "short", "void"})


def check_identifier(name: str, what: str) -> None:
    """A one-line error unless ``name`` can be a C++ field name of the generated code."""
    if not _IDENT.match(name) or name in _CPP_WORDS or name.startswith(("mh_", "MH_", "__")) or name == "n":
        raise MetaheurError(
            f"{what} {name!r} is not usable as a C identifier (letters, digits, _; not a C++ "
            f"keyword, not n, not starting with mh_ or __)"
        )


def _normal_type(text: str) -> str:
    """A parameter's type without its name, spaced as ``const int*``, ``long long`` as ``ll``."""
    text = re.sub(r"\blong\s+long(\s+int)?\b", "ll", text.replace("__restrict__", " "))
    words = re.findall(r"[A-Za-z_]\w*|[*&]", text)
    if len(words) > 1 and words[-1] not in ("*", "&") and words[-1] not in _TYPE_WORDS:
        words = words[:-1]  # the parameter's name
    out = ""
    for w in words:
        out += w if w in ("*", "&") else (" " if out and out[-1] not in "*&" else "") + w
    return out.replace(" *", "*").replace(" &", "&").strip()


def device_functions(snippet: str) -> dict[str, tuple[str, tuple[str, ...], int]]:
    """``{name: (return type, parameter types, line)}`` of the ``__device__`` functions defined in
    ``snippet`` (comments ignored)."""
    clean = _COMMENTS.sub(lambda m: "\n" * m.group(0).count("\n"), snippet)
    out = {}
    for m in _FUNCTION.finditer(clean):
        params = tuple(_normal_type(p) for p in m.group(4).split(",") if p.strip() and p.strip() != "void")
        out[m.group(3)] = (_normal_type(m.group(2)), params, clean.count("\n", 0, m.start()) + 1)
    return out


def _same_type(want: str, got: str, cache_ctype: str) -> bool:
    """Whether parameter type ``got`` is the contract's ``want``; a cache may be written as
    ``cache_t`` or as the C type it stands for."""
    return got == want or ("cache_t" in want and got == want.replace("cache_t", cache_ctype))


def contract_functions(kind: str, snippet: str, cache_dtype: str = "int64") -> frozenset[str]:
    """The contract functions ``snippet`` defines, checked: ``cost`` present, every contract name
    with its signature (a cache as ``cache_t`` or the C type of ``cache_dtype``), no function named
    near a contract name (a misspelling) unless it starts with ``kind_``; one-line errors."""
    found = device_functions(snippet)
    where = f"{kind} problem"
    ctype = CACHE_TYPES[cache_dtype]
    for name, (ret, params, line) in found.items():
        if name in CONTRACT:
            want_ret, want = CONTRACT[name]
            if ret != want_ret or len(params) != len(want) or not all(
                _same_type(w, g, ctype) for w, g in zip(want, params, strict=True)
            ):
                raise MetaheurError(
                    f"{where}, line {line}: {name} must be `__device__ {want_ret} {name}("
                    f"{', '.join(want)})`, got `{ret} {name}({', '.join(params)})`"
                )
        elif not name.startswith(f"{kind}_"):  # a helper named with the problem's prefix is the user's own
            hint = did_you_mean(name, CONTRACT)
            if hint:
                raise MetaheurError(
                    f"{where}, line {line}: __device__ function {name!r} is not a contract "
                    f"function{hint} (rename a helper of your own, e.g. with the problem's prefix)"
                )
    if "cost" not in found:
        raise MetaheurError(
            f"{where}: device_code defines no `__device__ ll cost(const Data &d, const int *perm)` "
            f"(the one function every problem needs)"
        )
    return frozenset(n for n in found if n in CONTRACT)


@dataclass(frozen=True)
class Field:
    """One entry of a problem's ``data()``: an int32 or int64 array, or an int64 scalar."""

    name: str
    dtype: str  # "int32" or "int64"
    array: bool

    @property
    def ctype(self) -> str:
        return "int" if self.dtype == "int32" else "long long"

    def member(self) -> str:
        return f"const {self.ctype} *{self.name};" if self.array else f"long long {self.name};"

    def param(self) -> str:
        return f"const {self.ctype} *mh_d_{self.name}" if self.array else f"long long mh_d_{self.name}"


@dataclass(frozen=True)
class UserCode:
    """A user problem's device code and data layout: what the generated header is built from."""

    kind: str
    snippet: str
    fields: tuple[Field, ...]
    sense: int = 1
    functions: frozenset[str] = field(default=frozenset())
    cache_dtype: str = "int64"
    delta32: bool = False
    scratch: int = 0  # int64 entries of each thread's d.scratch (a power of two, 0: none)
    segment: tuple[int, bool] = (3, True)  # the longest segment move, whether it may be reversed

    def has(self, name: str) -> bool:
        return name in self.functions

    @cached_property
    def header(self) -> str:
        """The text of the virtual header ``mh_user_problem.cuh``."""
        scratch = ["long long *scratch;"] if self.scratch else []
        members = " ".join(["int n;", *(f.member() for f in self.fields), *scratch])
        lines = [f'#line 1 "<generated {HEADER}>"', f"#define MH_SENSE ({self.sense})"]
        lines += [f"#define MH_USER_HAS_{name.upper()} 1" for name in sorted(self.functions)]
        lines += ["#define MH_USER_DELTA32 1"] if self.delta32 else []
        lines += [f"#define MH_SEG_K {int(self.segment[0])}", f"#define MH_SEG_REV {int(self.segment[1])}"]
        lines += ["#define MH_USER_HAS_CANDIDATES 1"] if any(f.name == CANDIDATES for f in self.fields) else []
        lines += [
            "namespace user {",
            f"struct Data {{ {members} }};",
            f"typedef {CACHE_TYPES[self.cache_dtype]} cache_t;",
            f'#line 1 "<{self.kind} problem>"',
            self.snippet,
            "}  // namespace user",
        ]
        return "\n".join(lines)

    @cached_property
    def placeholders(self) -> dict[str, str]:
        params = "".join(", " + f.param() for f in self.fields)
        init = " ".join(f"D.{f.name} = mh_d_{f.name};" for f in self.fields)
        if self.scratch:  # each thread's own: a local array of the kernel (docs/problems.md, scratch_size)
            init += f" long long mh_scratch[{self.scratch}]; D.scratch = mh_scratch;"
        cache = "int" if self.cache_dtype == "int32" else "long long"
        return {DATA_PARAMS: params, DATA_INIT: init, CACHE_PARAM: cache}

    def source(self, kernel_file: str) -> KernelSource:
        """``kernels/<kernel_file>`` with this problem's code substituted (cached per process)."""
        key = (kernel_file, self)
        found = _SOURCES.get(key)
        if found is None:
            found = load_source(kernel_file, {HEADER: self.header}, self.placeholders, label=kernel_file)
            _SOURCES[key] = found
        return found

    def module(
        self, kernel_file: str, device: str | Device = "cpu", defines=None, *, sim: bool = False
    ) -> KernelModule:
        """The generated source of ``kernel_file`` compiled for ``device`` (cached by its text)."""
        return load_module(self.source(kernel_file), device, defines, sim=sim)


_SOURCES: dict[tuple, KernelSource] = {}


def upload(fields: tuple[Field, ...], data: dict, device: str | Device) -> tuple:
    """The data arguments of a generated kernel, in field order: arrays on ``device`` (flattened,
    of the field's dtype), scalars as ints."""
    dev = parse_device(device)
    return tuple(
        dev.asarray(np.ascontiguousarray(data[f.name], dtype=f.dtype).ravel()) if f.array else int(data[f.name])
        for f in fields
    )


def launch(kernel: Kernel, grid, block, args: tuple, data_args: tuple) -> None:
    """``kernel(grid, block, args + data_args)``: a generated kernel with the data appended."""
    kernel(grid, block, tuple(args) + tuple(data_args))
