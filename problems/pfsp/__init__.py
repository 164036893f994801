"""The permutation flow shop (PFSP, makespan), in one package: the instance, exact makespans, its
formats and built-in instances (``problem``), its device code on the device contract of a user's
problem (``device``), Taillard's generator (``generator``), the file formats (``files``) and the
published bounds (``best_known``). It is written on the generic engine as a user's problem is."""

from metaheur.problems.pfsp.problem import (
    PFSP,
    completion_times,
    generated_pfsp,
    machine_lower_bound,
    makespans,
    random_pfsp,
    read_pfsp,
    taillard,
)

__all__ = ["PFSP", "completion_times", "generated_pfsp", "machine_lower_bound", "makespans", "random_pfsp",
           "read_pfsp", "taillard"]
