"""The kernel-variant switches (metaheur/engine/variants.py): one table of families, the default
first, and one check with one uniform message at every switch."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from metaheur.engine import variants
from metaheur.errors import MetaheurError
from metaheur.problems import clustered_tsp
from metaheur.problems.qap.params import KERNELS as TABU_KERNELS
from metaheur.problems.qap.params import TabuParams
from metaheur.problems.tsp.descent import TSPDescentBatch
from metaheur.problems.tsp.eax import EAXGenerations
from metaheur.problems.tsp.params import EAX_KERNELS, ILSParams
from metaheur.search.perm_search import KERNELS as PERM_KERNELS
from metaheur.search.perm_search import SCANS, PermSearchParams

FAMILIES = {
    "tabu kernel": ("classic", "stream"),
    "descent kernel": ("classic", "cached"),
    "several_kernel": ("classic", "dlb"),
    "eax_kernel": ("classic", "fused", "block"),
    "perm kernel": ("classic", "warp"),
    "perm scan": ("row", "warps"),
}


def _default(cls, field: str):
    return {f.name: f.default for f in dataclasses.fields(cls)}[field]


def test_every_switch_is_a_family_with_its_default_first():
    table = variants.variant_families()
    assert {name: table[name].values for name in FAMILIES} == FAMILIES
    assert all(table[name].description and "\n" not in table[name].description for name in FAMILIES)
    assert tuple(TABU_KERNELS) == variants.variants("tabu kernel")
    assert variants.variants("eax_kernel") == EAX_KERNELS
    assert tuple(PERM_KERNELS) == variants.variants("perm kernel") and tuple(SCANS) == variants.variants("perm scan")
    assert _default(TabuParams, "kernel") == table["tabu kernel"].default
    assert _default(ILSParams, "eax_kernel") == table["eax_kernel"].default
    assert _default(PermSearchParams, "kernel") == table["perm kernel"].default
    assert _default(PermSearchParams, "scan") == table["perm scan"].default
    descent = inspect.signature(TSPDescentBatch).parameters
    assert descent["kernel"].default == table["descent kernel"].default
    assert descent["several_kernel"].default == table["several_kernel"].default
    assert inspect.signature(EAXGenerations).parameters["kernel"].default == table["eax_kernel"].default


#: Each switch site: how to set it, its family, and whether every allowed value is tried (the
#: parameter classes; the searches would build kernels).
SITES = [
    (lambda v: TabuParams(kernel=v), "tabu kernel", True),
    (lambda v: ILSParams(eax_kernel=v), "eax_kernel", True),
    (lambda v: PermSearchParams(kernel=v), "perm kernel", True),
    (lambda v: PermSearchParams(scan=v), "perm scan", True),
    (lambda v: TSPDescentBatch(clustered_tsp(20, seed=1), kernel=v), "descent kernel", False),
    (lambda v: TSPDescentBatch(clustered_tsp(20, seed=1), several_kernel=v), "several_kernel", False),
    (lambda v: EAXGenerations(clustered_tsp(20, seed=1), None, None, None, 1, kernel=v), "eax_kernel", False),
]


@pytest.mark.parametrize(("make", "family", "try_allowed"), SITES)
def test_every_switch_refuses_an_unknown_value_in_one_line(make, family, try_allowed):
    for value in variants.variants(family) if try_allowed else ():
        make(value)
    with pytest.raises(MetaheurError) as info:
        make("x")
    assert str(info.value) == f"{family} must be one of {', '.join(variants.variants(family))}, got 'x'"


def test_registering_a_family():
    name = "test only variant"
    assert variants.register_variants(name, ("a", "b"), "a  test\n family") == ("a", "b")
    assert variants.register_variants(name, ("a", "b"), "again") == ("a", "b")  # a module imported twice
    assert variants.variant_families()[name].default == "a"
    with pytest.raises(ValueError, match="registered with a, b"):
        variants.register_variants(name, ("b", "a"), "the default changed")
    with pytest.raises(ValueError, match="distinct"):
        variants.register_variants("test only duplicate", ("a", "a"), "")
    assert variants.check_variant(name, "b") == "b"
    with pytest.raises(MetaheurError, match=r"^test only variant must be one of a, b, got 3$"):
        variants.check_variant(name, 3)
    with pytest.raises(KeyError):
        variants.check_variant("no such family", "a")
