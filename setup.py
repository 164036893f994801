"""Packages of the wheel: every package found under metaheur/, plus the design card's top-level
problems/ (a package per built-in problem) and kernels/ (a folder of sources per owner) directories
installed as metaheur.problems and metaheur.kernels with every subfolder, and the console
script's launcher module (_metaheur_launch.py; everything else is in pyproject.toml)."""

from setuptools import find_namespace_packages, find_packages, setup

MAPPED = {"metaheur.problems": "problems", "metaheur.kernels": "kernels"}
SUBFOLDERS = [f"{package}.{sub}" for package, folder in MAPPED.items()
              for sub in find_namespace_packages(folder, exclude=["*__pycache__*"])]

setup(packages=[*find_packages(include=["metaheur", "metaheur.*"]), *MAPPED, *SUBFOLDERS], package_dir=MAPPED,
      py_modules=["_metaheur_launch"])
