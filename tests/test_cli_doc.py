"""docs/cli.md lists every option of every command and every key of every config section with
its type and default, generated from the code (metaheur/cli_doc.py): this fails when they drift."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from metaheur.cli import cli
from metaheur.cli_doc import BEGIN, END, reference, updated
from metaheur.config import SOLVE_KEYS, sections

PAGE = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def test_the_generated_reference_is_current():
    text = PAGE.read_text()
    assert updated(text) == text, "docs/cli.md is out of date: run python -m metaheur.cli_doc docs/cli.md"


def test_the_reference_names_every_option_and_key():
    block = reference()
    assert block.startswith(BEGIN) and block.endswith(END)
    for name, command in cli.commands.items():
        assert f"### metaheur {name}" in block
        for param in command.params:
            if isinstance(param, click.Option):
                for opt in param.opts:
                    assert f"`{opt}`" in block, (name, opt)
    for key in SOLVE_KEYS:
        assert f"| `{key}` |" in block
    for section, cls in sections().items():
        part = block.split(f"### [{section}]")[1].split("###")[0]
        for f in dataclasses.fields(cls):
            assert f"| `{f.name}` |" in part, (section, f.name)
    assert '| `crossover` | string | `"ux"` |' in block and "| `ls_budget` | integer (or unset) | unset |" in block
