"""Cost-only variants of two problems (device code of ``cost`` alone: every move is evaluated by
``cost`` after it), for the defaults that follow the cost (metaheur/search/perm_defaults.py): the
single-machine total weighted tardiness (an O(n) cost) and the linear ordering problem (an O(n^2)
cost, the expensive case)."""

from __future__ import annotations

from perm_problems import Tardiness, random_tardiness

from metaheur.problem.permutation import PermutationProblem
from metaheur.problems.lop import LOP
from metaheur.problems.lop.generator import random_lop

WT_COST = r"""
__device__ ll cost(const Data &d, const int *perm) {
  ll t = 0, c = 0;
  for (int q = 0; q < d.n; ++q) {
    const int e = perm[q];
    t += d.p[e];
    if (t > d.due[e]) c += (ll)d.w[e] * (t - d.due[e]);
  }
  return c;
}
"""

LOP_COST = r"""
__device__ ll cost(const Data &d, const int *perm) {
  ll v = 0;
  for (int i = 0; i + 1 < d.n; ++i)
    for (int j = i + 1; j < d.n; ++j) v += d.m[(ll)perm[i] * d.n + perm[j]];
  return v;
}
"""


class CostOnlyTardiness(Tardiness):
    """The weighted tardiness with ``cost`` alone (O(n) a move)."""

    kind = "wtcost"
    device_code = WT_COST


class CostOnlyLOP(LOP):
    """The linear ordering problem with ``cost`` alone (O(n^2) a move), under the generic defaults
    of a user problem (not the LOP's own)."""

    kind = "lopcost"
    device_code = LOP_COST

    def default_params(self):
        return PermutationProblem.default_params(self)


def cost_only_tardiness(n: int, seed: int) -> CostOnlyTardiness:
    pb = random_tardiness(n, seed)
    return CostOnlyTardiness(pb.p, pb.w, pb.due, name=f"wtcost{n}")


def cost_only_lop(n: int, seed: int) -> CostOnlyLOP:
    return CostOnlyLOP(random_lop(n, seed).matrix, name=f"lopcost{n}")
