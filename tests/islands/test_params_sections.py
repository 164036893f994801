"""What the framework learns from the problems' declarations, not from their names: the local
searches' parameters by section (``IslandParams``, ``search_sections``), the island algorithm each
crossover runs with the sizes it needs (``crossover_islands``, ``with_crossover``), and the kernel
tables (``kernel_tables``)."""

from __future__ import annotations

import dataclasses
import json
from typing import ClassVar

import pytest

import metaheur
from metaheur.checkpoint import load_checkpoint, params_from_dict, params_to_dict
from metaheur.engine.catalogue import ENGINE, kernel_tables
from metaheur.errors import InputFormatError, MetaheurError
from metaheur.islands.ils import ILSIsland
from metaheur.islands.memetic import MemeticIsland
from metaheur.islands.params import (
    GAParams,
    IslandParams,
    crossover_island,
    crossover_islands,
    search_sections,
    with_crossover,
)
from metaheur.problems import QAP, TSP, random_qap, uniform_tsp
from metaheur.problems.qap import TabuParams
from metaheur.problems.qap.tabu_island import TabuIsland
from metaheur.problems.tsp import EAXParams, ILSParams
from metaheur.problems.tsp.eax_island import EAXIsland
from metaheur.search.perm_search import PermSearchParams


def test_sections_are_the_problems_declarations_and_the_engines():
    """By name (the configuration file's order, the result's)."""
    assert list(search_sections().items()) == [("eax", EAXParams), ("ils", ILSParams), ("perm", PermSearchParams),
                                               ("tabu", TabuParams)]
    assert QAP.search_params == (TabuParams,) and TSP.search_params == (ILSParams, EAXParams)


def test_island_params_by_section_name_or_by_class():
    tabu, ils = TabuParams(scale=4), ILSParams(neighbours=16)
    by_name = IslandParams(GAParams(), tabu=tabu, ils=ils)
    assert by_name == IslandParams(GAParams(), (ils, tabu))  # one value, whatever the order given
    assert by_name.search(TabuParams) is tabu and by_name.tabu is tabu and by_name.ils is ils
    assert by_name.perm == PermSearchParams() == by_name.search(PermSearchParams)  # a section not given
    assert IslandParams(tabu=TabuParams()) == IslandParams()  # the defaults are not kept apart
    assert hash(IslandParams(tabu=TabuParams())) == hash(IslandParams())
    changed = dataclasses.replace(by_name, tabu=TabuParams(scale=2))  # as a dataclass field
    assert changed.tabu.scale == 2 and changed.ils is ils
    assert by_name.with_search(TabuParams(scale=2)) == changed


def test_island_params_refuse_what_is_not_a_section():
    with pytest.raises(MetaheurError, match="tabu takes TabuParams, got ILSParams"):
        IslandParams(tabu=ILSParams())
    with pytest.raises(MetaheurError, match="searches is a sequence of local searches' parameters"):
        IslandParams(GAParams(), TabuParams())  # the fields of old: (ga, tabu, ils, perm)
    with pytest.raises(MetaheurError, match="GAParams is not the parameters of a local search"):
        IslandParams(GAParams(), (GAParams(),))
    with pytest.raises(AttributeError, match="no attribute or search section 'walk'"):
        _ = IslandParams().walk


def test_checkpointed_params_keep_every_section_and_refuse_unknown_ones():
    params = IslandParams(GAParams(population=7), tabu=TabuParams(scale=4))
    sections = search_sections()
    saved = json.loads(json.dumps(params_to_dict(params, sections)))
    assert list(saved) == ["ga", "eax", "ils", "perm", "tabu"]
    assert params_from_dict(saved, sections) == params
    assert params_from_dict({"ga": saved["ga"]}, sections) == IslandParams(GAParams(population=7))  # defaults
    with pytest.raises(ValueError, match="unknown parameter section"):
        params_from_dict({**saved, "walk": {}}, sections)
    assert params_from_dict({**saved, "walk": {}}, sections, strict=False) == params


def test_a_checkpoint_of_an_earlier_version_has_its_moved_keys_read_into_their_new_section():
    """Before the [eax] section the EAX islands' keys were the GA's: an old checkpoint's
    parameters hold them in ``ga``, and they are read into ``eax``."""
    sections = search_sections()
    saved = params_to_dict(IslandParams(GAParams(crossover="eax", population=0, offspring=1)), sections)
    old = {"ga": {**saved["ga"], "tries": 7, "starts": "random", "init_share": 0.5, "ils_kicks": None},
           "tabu": saved["tabu"], "ils": saved["ils"], "perm": saved["perm"]}
    params = params_from_dict(old, sections)
    assert params.search(EAXParams) == EAXParams(tries=7, starts="random", init_share=0.5)
    assert params.ga == GAParams(crossover="eax", population=0, offspring=1)

def test_a_result_lists_every_section():
    result = metaheur.solve(random_qap(10, 3), generations=1, params=metaheur.SolveParams(
        strategy="cpu-serial", sync=True, searches={"tabu": TabuParams(scale=3)}))
    assert [k for k in result.parameters if k in search_sections()] == ["eax", "ils", "perm", "tabu"]
    assert result.parameters["tabu"]["scale"] == 3 and result.parameters["ils"] == dataclasses.asdict(ILSParams())


def test_solve_takes_a_section_of_its_class_only():
    with pytest.raises(MetaheurError, match="tabu takes TabuParams, got ILSParams"):
        metaheur.SolveParams(searches={"tabu": ILSParams()})
    with pytest.raises(MetaheurError, match="GAParams is not the parameters of a local search"):
        metaheur.SolveParams(searches=[GAParams()])
    with pytest.raises(MetaheurError, match="searches takes a mapping"):
        metaheur.SolveParams(searches=42)


def test_solve_params_take_sections_by_mapping_sequence_or_the_earlier_keywords():
    tabu, ils = TabuParams(scale=3), ILSParams(neighbours=12)
    by_mapping = metaheur.SolveParams(searches={"tabu": tabu, "ils": ils})
    assert by_mapping == metaheur.SolveParams(searches=[ils, tabu])
    assert by_mapping.search(TabuParams) is tabu and by_mapping.tabu is tabu and by_mapping.eax is None
    with pytest.warns(DeprecationWarning, match="searches="):
        earlier = metaheur.SolveParams(tabu=tabu, ils=ils)
    assert earlier == by_mapping
    with pytest.warns(DeprecationWarning, match="ls_islands"):
        assert metaheur.SolveParams(tabu_islands=1).ls_islands == 1
    assert dataclasses.replace(by_mapping, islands=2).searches == by_mapping.searches
    with pytest.raises(AttributeError, match="no attribute or search section 'walk'"):
        _ = by_mapping.walk


@dataclasses.dataclass(frozen=True)
class ShakeParams:
    """A search's parameters of an unregistered problem's own."""

    section: ClassVar[str] = "shake"
    kicks: int = 1


class ShakenQAP(QAP):
    """A QAP subclass, not registered (``--problem module:Class``), declaring a search of its own."""

    search_params = (TabuParams, ShakeParams)

    def default_params(self) -> IslandParams:
        return super().default_params().with_search(ShakeParams(kicks=5))


def test_an_unregistered_problems_own_section_reaches_its_islands_result_and_checkpoint(tmp_path):
    base = random_qap(10, 3)
    qap = ShakenQAP(base.name, base.flow, base.distance)
    assert list(search_sections(qap)) == ["eax", "ils", "perm", "tabu", "shake"]
    path = tmp_path / "run.npz"
    result = metaheur.solve(qap, generations=1, checkpoint=path, params=metaheur.SolveParams(
        strategy="cpu-serial", sync=True))
    assert result.parameters["shake"] == {"kicks": 5}
    saved = load_checkpoint(path)
    assert saved.params[0]["shake"] == {"kicks": 5}
    assert saved.island_params(qap)[0].search(ShakeParams) == ShakeParams(kicks=5)
    with pytest.raises(InputFormatError, match="damaged checkpoint: unknown parameter section"):
        saved.island_params(base)  # the plain QAP knows no such section


def test_each_crossover_runs_the_island_its_problems_name():
    islands = crossover_islands()
    assert islands["eax"] is EAXIsland and islands["none"] is ILSIsland and islands["ux"] is MemeticIsland
    assert crossover_island("none", random_qap(6)) is TabuIsland  # the QAP's own
    assert crossover_island("ox", uniform_tsp(8)) is MemeticIsland


def test_with_crossover_sizes_by_the_island_kind():
    automatic = GAParams(population=0, offspring=1, crossover="eax")
    assert (with_crossover(automatic, "ox").population, with_crossover(automatic, "ox").offspring) == (30, 10)
    chains = with_crossover(automatic, "none")
    assert (chains.population, chains.offspring, chains.restart_after) == (1, 1, 0)
    ga = GAParams(population=12, offspring=6)
    assert with_crossover(ga, "eax") == dataclasses.replace(ga, crossover="eax", population=0, offspring=1)
    assert with_crossover(ga, "none", random_qap(6)).population == 1  # the QAP's tabu island alike
    with pytest.raises(MetaheurError, match=r"population must be at least 1 \(0, automatic, with eax\)"):
        GAParams(population=0, crossover="ux")


def test_kernel_tables_are_the_engines_and_each_problems():
    table = kernel_tables()
    assert set(ENGINE.variants) < set(table.variants)
    assert set(QAP.kernel_table().variants) | set(TSP.kernel_table().variants) | set(ENGINE.variants) == set(
        table.variants)
    assert ("qap/qap_tabu.cu", "qap_tabu_run") in table.launches
    assert table.not_launched == frozenset()  # the package launches every kernel of its files
