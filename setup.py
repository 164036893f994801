"""Packages of the wheel: every package found under metaheur/, plus the design card's top-level
problems/ and kernels/ directories installed as metaheur.problems and metaheur.kernels
(everything else is in pyproject.toml)."""

from setuptools import find_packages, setup

MAPPED = {"metaheur.problems": "problems", "metaheur.kernels": "kernels"}

setup(packages=[*find_packages(include=["metaheur", "metaheur.*"]), *MAPPED], package_dir=MAPPED)
