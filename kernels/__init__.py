"""CUDA-C kernel sources (``*.cu``, ``*.cuh``) and the CPU shim header; no Python logic.

Installed as ``metaheur.kernels`` so that :mod:`metaheur.engine` finds the sources next to it.
"""
