"""How the islands solve a QAP: the default parameters by instance class, the kernels to build,
the memory check and the tabu islands (the decisions of :class:`~metaheur.problems.qap.QAP`'s
solving methods)."""

from __future__ import annotations

from metaheur.devices import Device, cpu_device
from metaheur.engine import load_module
from metaheur.errors import MetaheurError
from metaheur.islands.migration import MigrationParams
from metaheur.islands.params import GAParams, IslandParams
from metaheur.problems.qap.params import TabuParams
from metaheur.problems.qap.problem import QAP


def default_params(qap: QAP) -> IslandParams:
    """A small population of well-improved solutions (Misevicius' and Drezner's hybrid GAs). A
    population whose best has not improved for 30 generations has converged and restarts
    (docs/decisions/qap-restarts.md): it keeps its best, except on uniformly random instances
    (:attr:`QAP.uniformly_random`), where a GA's result is decided by the basin its population
    converges to and an independent new population is worth more than one that re-converges to
    the kept best. The tabu search has Taillard's cubic tenures floor(u^3 x 8 n), with a scale of
    4 on uniformly random instances, where the populations of GA islands converge to better
    solutions with it (docs/decisions/tabu-tenures.md)."""
    uniform = qap.uniformly_random
    ga = GAParams(population=20, offspring=10, crossover="ux", restart_after=30, restart="full" if uniform else "best")
    return IslandParams(ga=ga, tabu=TabuParams(scale=4) if uniform else TabuParams())


def default_migration(qap: QAP) -> MigrationParams:
    """Ring, best replaces worst, every epoch; none on uniformly random instances (tai*a): there
    each GA island settles in one basin within seconds, and islands kept apart end lower than
    islands that share their bests and settle in the same one (docs/decisions/migration-by-class.md)."""
    return MigrationParams(interval=0) if qap.uniformly_random else MigrationParams()


def default_tabu_islands(cpu_islands: int) -> int:
    """How many of ``cpu_islands`` QAP islands are tabu islands by default: half, rounded down, on
    every instance. On structured instances long searches with their memory pay beside the GA; on
    uniformly random ones GA islands find more on the larger instances and a tabu island on the
    smaller ones, and one of each is on average never behind two tabu islands
    (docs/decisions/tabu-islands.md)."""
    return cpu_islands // 2


def precompile(qap: QAP, device: Device) -> None:
    """The tabu search with its instance's defines (``MH_QAP_DELTA32`` included) and the GA."""
    from metaheur.problems.qap.device_data import qap_data

    load_module("qap/qap_tabu.cu", device, qap_data(qap, device).tabu_defines)
    load_module("engine/perm_ga.cu", device)


def tabu_bytes(n: int) -> int:
    """Memory of one robust tabu search of size n: the delta matrix (int64 at most) and six int32 tables."""
    return n * n * (8 + 6 * 4) + 16 * n


def check_memory(qap: QAP, devices: list[Device]) -> None:
    """Refuse up front a run whose searches cannot fit: one tabu search per island must fit its
    device (a larger batch is split at run time)."""
    one = tabu_bytes(qap.n)
    cpu_islands = sum(1 for d in devices if not d.is_gpu)
    ram = cpu_device().memory_bytes
    if ram and cpu_islands and one * cpu_islands > 0.8 * ram:
        raise MetaheurError(f"{qap.name}: one tabu search of n = {qap.n} needs {one / 2**30:.1f} GiB; "
                            f"{cpu_islands} CPU islands exceed this machine's {ram / 2**30:.0f} GiB "
                            f"(try --islands {max(1, int(0.8 * ram // one))})")
    for d in {d.name: d for d in devices if d.is_gpu}.values():
        if d.memory_bytes and one > 0.9 * d.memory_bytes:
            raise MetaheurError(f"{qap.name}: one tabu search of n = {qap.n} needs {one / 2**30:.1f} GiB, "
                                f"more than {d.name}'s {d.memory_bytes / 2**30:.0f} GiB (use --strategy "
                                "cpu-islands)")
