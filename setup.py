"""Packages of the wheel: every package found under metaheur/, plus the design card's top-level
problems/ (with a package per built-in problem) and kernels/ (its sources in one folder per
owner) directories installed as metaheur.problems and metaheur.kernels (everything else is in
pyproject.toml)."""

from setuptools import find_packages, setup

MAPPED = {"metaheur.problems": "problems", "metaheur.kernels": "kernels"}
PROBLEMS = [f"metaheur.problems.{name}" for name in find_packages("problems")]

setup(packages=[*find_packages(include=["metaheur", "metaheur.*"]), *MAPPED, *PROBLEMS], package_dir=MAPPED)
