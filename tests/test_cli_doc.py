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


def test_every_key_of_every_section_says_what_it_means():
    """Issue 70: each config key's row has a meaning: [solve]'s from its option's help, a
    section's from its parameter class's docstring (``key``: text), and no two keys of a
    section share one unless the docstring introduces them together (``a``/``b``:)."""
    block = reference()
    for section in ["solve", *sections()]:
        part = block.split(f"### [{section}]")[1].split("###")[0]
        rows = [line for line in part.splitlines() if line.startswith("| `")]
        keys = SOLVE_KEYS if section == "solve" else [f.name for f in dataclasses.fields(sections()[section])]
        assert len(rows) == len(keys), section
        for row in rows:
            cells = [cell.strip() for cell in row.strip().strip("|").split(" | ")]
            assert len(cells) == 4 and len(cells[3].split()) >= 2, (section, row)  # key, type, default, meaning


def test_key_meanings_read_the_docstring_rule():
    from metaheur.cli_doc import key_meanings

    @dataclasses.dataclass
    class Made:
        """Title.

        ``a``: the first, with :func:`~x.y.helper` and ``code``; ``b``/``c``: two together;
        ``None``: not a key, text of c - ``d``: last (see :attr:`Shown <x.y>`).

        ``a``: a later mention is no meaning.
        """

        a: int = 0
        b: int = 0
        c: int = 0
        d: int = 0
        e: int = 0

    assert key_meanings(Made) == {"a": "the first, with `helper` and `code`.", "b": "two together; `None`: not a "
                                  "key, text of c.", "c": "two together; `None`: not a key, text of c.",
                                  "d": "last (see `Shown`)."}
