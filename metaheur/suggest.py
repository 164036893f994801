"""Suggestions for a mistyped name (a config key, an instance): the nearest valid ones by
difflib's similarity ratio, as click does for options."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.6  # difflib's default: below it a name is not similar enough to be suggested
BAND = 0.05  # names within this ratio of the nearest one are suggested beside it
LIMIT = 4


def nearest(word: str, choices: Iterable[str], limit: int = LIMIT) -> list[str]:
    """The choices nearest to ``word`` (case-insensitive), best first: every one within
    :data:`BAND` of the best ratio, at most ``limit``; none when nothing reaches :data:`CUTOFF`."""
    by_lower: dict[str, str] = {}
    for choice in choices:
        by_lower.setdefault(choice.lower(), choice)
    word = word.lower()
    scored = sorted(((difflib.SequenceMatcher(None, word, c).ratio(), c) for c in by_lower),
                    key=lambda rc: (-rc[0], rc[1]))
    if not scored or scored[0][0] < CUTOFF:
        return []
    best = scored[0][0]
    return [by_lower[c] for r, c in scored[:limit] if r >= max(CUTOFF, best - BAND)]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean a or b?)`` for the nearest choices, or an empty string."""
    found = nearest(word, choices)
    if not found:
        return ""
    return f" (did you mean {', '.join(found[:-1]) + ' or ' if len(found) > 1 else ''}{found[-1]}?)"
