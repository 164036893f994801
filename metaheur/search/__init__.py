"""Batched local searches on a device: robust tabu search for the QAP, 2-opt/Or-opt iterated
local search for the TSP. One kernel block runs one search; a batch runs many at once."""
