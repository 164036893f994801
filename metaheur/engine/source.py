"""Kernel sources: reading ``kernels/<folder>/*.cu``, inlining the project's headers, parsing
signatures.

A kernel file is named by its path under ``kernels/`` (``qap/qap_tabu.cu``): the engine's own in
``kernels/engine/``, a problem's in ``kernels/<problem>/``. Headers included with ``#include
"name.cuh"`` are looked up next to the including file, then in ``kernels/engine/`` (the shared
headers), then by their name under ``kernels/`` (``"qap/qap_delta.cuh"``: how a kernel file
outside ``kernels/``, e.g. an experiment's, includes a problem's header), and inlined (once each)
with ``#line`` directives, so that (1) the source string handed to NVRTC or the host compiler is
self-contained and CuPy's cache key, which sees only that string, covers every header, and (2)
compiler messages still name the original file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from metaheur.errors import MetaheurError

_DEFINE = re.compile(r"^\s*#\s*define\s+(MH_\w+)\s+(.*?)\s*(?:/\*.*)?$")
_INT_VALUE = re.compile(r"^\(?\s*(-?\d+)(?:LL)?\s*(?:<<\s*(\d+)\s*)?\)?$")
_BOUNDS = re.compile(r'extern\s+"C"\s+__global__\s+(?:void\s+)?__launch_bounds__\s*\(\s*(\w+)[^)]*\)\s*'
                     r'(?:void\s+)?(\w+)\s*\(')
_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$')
_KERNEL = re.compile(
    r'extern\s+"C"\s+__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+'
    r'(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(([^)]*)\)', re.S
)

#: CUDA's largest block (compute capability >= 3.0).
MAX_THREADS = 1024

#: C parameter types a kernel may take, with their numpy dtype names.
C_TYPES = {
    "char": "int8",
    "signed char": "int8",
    "unsigned char": "uint8",
    "short": "int16",
    "unsigned short": "uint16",
    "int": "int32",
    "unsigned int": "uint32",
    "unsigned": "uint32",
    "long long": "int64",
    "long long int": "int64",
    "unsigned long long": "uint64",
    "unsigned long long int": "uint64",
    "float": "float32",
    "double": "float64",
}


def kernel_dir() -> Path:
    """Folder of the kernel sources (the installed ``metaheur.kernels`` package)."""
    return Path(str(resources.files("metaheur.kernels")))


def engine_dir() -> Path:
    """Folder of the engine's kernels and the headers every kernel may include."""
    return kernel_dir() / "engine"


@dataclass(frozen=True)
class Param:
    """One kernel parameter: ``name``, numpy ``dtype`` name (``"void"``: a ``void *`` array of any
    dtype), pointer or not, const pointee or not."""

    name: str
    dtype: str
    pointer: bool
    const: bool
    ctype: str

    def describe(self) -> str:
        return f"{'const ' if self.const else ''}{self.ctype}{'*' if self.pointer else ''} {self.name}"


@dataclass(frozen=True)
class KernelSource:
    """A kernel file with its headers inlined, the signature of every kernel in it, and the most
    threads a block of each kernel may have (its ``__launch_bounds__``, else CUDA's 1024)."""

    name: str
    text: str
    signatures: dict[str, tuple[Param, ...]]
    max_threads: dict[str, int]


def _project_name(path: Path) -> str | None:
    """A project kernel file's name, its path under ``kernels/`` (``qap/qap_tabu.cu``); None for
    another file."""
    try:
        return path.resolve().relative_to(kernel_dir().resolve()).as_posix()
    except ValueError:
        return None


def _label(path: Path) -> str:
    """How compiler messages name a file: ``kernels/qap/qap_tabu.cu`` for the project's own."""
    name = _project_name(path)
    return f"kernels/{name}" if name else str(path)


def _inline(path: Path, seen: set[str], virtual: dict[str, str]) -> list[str]:
    label = _label(path)
    out = [f'#line 1 "{label}"']
    for number, line in enumerate(path.read_text().splitlines(), 1):
        m = _INCLUDE.match(line)
        if m and m.group(1) in virtual:
            out.append(virtual[m.group(1)])
            out.append(f'#line {number + 1} "{label}"')
            continue
        found = m and next((d / m.group(1) for d in (path.parent, engine_dir(), kernel_dir())
                            if (d / m.group(1)).is_file()), None)
        if found:
            if str(found.resolve()) not in seen:
                seen.add(str(found.resolve()))
                out.extend(_inline(found, seen, virtual))
            out.append(f'#line {number + 1} "{label}"')
            continue
        out.append(line)
    return out


def _parse_param(kernel: str, text: str) -> Param:
    words = text.replace("*", " * ").split()
    pointer = words.count("*")
    if pointer > 1:
        raise MetaheurError(f"kernel {kernel}: parameter {text.strip()!r}: pointers to pointers are not supported")
    const = "const" in words
    name = words[-1]
    base = " ".join(w for w in words[:-1] if w not in ("const", "*", "__restrict__", "volatile"))
    if base == "void" and pointer:  # an array of any dtype (a kernel whose element type is a define)
        return Param(name, "void", True, const, base)
    if base not in C_TYPES:
        raise MetaheurError(f"kernel {kernel}: parameter {text.strip()!r} has an unsupported type {base!r}")
    return Param(name, C_TYPES[base], bool(pointer), const, base)


def parse_signatures(text: str) -> dict[str, tuple[Param, ...]]:
    """``{kernel name: parameters}`` for every ``extern "C" __global__ void`` kernel in ``text``."""
    out = {}
    for m in _KERNEL.finditer(text):
        params = [p for p in _COMMENT.sub(" ", m.group(2)).split(",") if p.strip() and p.strip() != "void"]
        out[m.group(1)] = tuple(_parse_param(m.group(1), p) for p in params)
    return out


def _source_path(name: str) -> Path:
    """``kernels/<name>`` (``qap/qap_tabu.cu``), else ``name`` as a path of its own (a test's file)."""
    path = kernel_dir() / name
    if Path(name).is_absolute() or not path.is_file():
        path = Path(name)
    if not path.is_file():
        raise MetaheurError(f"no kernel source {name!r} in {kernel_dir()}")
    return path


def load_source(name: str, virtual: dict[str, str] | None = None,
                placeholders: dict[str, str] | None = None, label: str | None = None) -> KernelSource:
    """The kernel file ``kernels/<name>`` (or a path to another ``.cu`` file, e.g. a test's) with
    its headers inlined; headers are looked up next to the file, then in ``kernels/engine/``, then
    by their name under ``kernels/``.

    ``virtual``: generated headers, ``{include name: text}``, inlined in place of an
    ``#include`` of that name (metaheur/engine/user_source.py); ``placeholders``: ``{marker:
    text}`` substituted in the inlined text (``/*@DATA_PARAMS@*/``); ``label``: the source's name
    in messages (default: the file's)."""
    path = _source_path(name)
    text = "\n".join(_inline(path, set(), virtual or {})) + "\n"
    for marker, value in (placeholders or {}).items():
        text = text.replace(marker, value)
    signatures = parse_signatures(text)
    bounds = launch_bounds(text)
    return KernelSource(label or _project_name(path) or path.name, text, signatures,
                        {k: bounds.get(k, MAX_THREADS) for k in signatures})


def shim_text() -> str:
    """The CPU shim header (kernels/engine/mh_cpu_shim.h) with a ``#line`` directive."""
    return '#line 1 "kernels/engine/mh_cpu_shim.h"\n' + (engine_dir() / "mh_cpu_shim.h").read_text() + "\n"


@cache
def kernel_constants(name: str) -> dict[str, int]:
    """The integer ``#define MH_* value`` lines of kernel file ``kernels/<name>`` (or a path; its
    own text, not its headers; a value is an integer literal or ``(a << b)``), so that Python reads
    sizes and column indices from the kernel instead of copying them. A name defined twice (under
    ``#if``) is left out: its value depends on the build's defines."""
    values: dict[str, list[int]] = {}
    for name_, value in _int_defines(_source_path(name).read_text()):
        values.setdefault(name_, []).append(value)
    return {key: vals[0] for key, vals in values.items() if len(vals) == 1}


def _int_defines(text: str):
    for line in text.splitlines():
        m = _DEFINE.match(line)
        v = m and _INT_VALUE.match(m.group(2))
        if v:
            yield m.group(1), int(v.group(1)) << int(v.group(2) or 0)


def kernel_constant(name: str, constant: str) -> int:
    """One value of :func:`kernel_constants` (a missing one is a programming error)."""
    values = kernel_constants(name)
    if constant not in values:
        raise KeyError(f"kernels/{name} defines no integer {constant}")
    return values[constant]


def launch_bounds(text: str) -> dict[str, int]:
    """``{kernel: most threads a block may have}`` of the kernels in ``text`` declared with
    ``__launch_bounds__(threads[, blocks per SM])``; ``threads`` is a literal or an ``MH_*``
    define of the text. Kernels without launch bounds are absent (any block up to 1024)."""
    defines = dict(_int_defines(text))
    out = {}
    for m in _BOUNDS.finditer(text):
        value = m.group(1)
        out[m.group(2)] = int(value) if value.isdigit() else defines[value]
    return out
