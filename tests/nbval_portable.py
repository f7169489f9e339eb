"""pytest plugin for the notebooks' second nbval pass, on portable CPU kernels (course.py: PORTABLE_ENV).

It leaves out the cells that only call check(): their output is not compared (NBVAL_IGNORE_OUTPUT), it does not
depend on the CPU's kernels, and the first pass runs every one of them. Each notebook's first check() starts a
grading worker, which was most of what the second pass spent beyond the first.
"""
from __future__ import annotations

import re

import pytest

# Comment and blank lines, at most `from grading import check`, then one check(...) call and nothing else.
ONLY_CHECK = re.compile(r"^(?:[ \t]*(?:#[^\n]*)?\n|from grading import check\n)*check\([^()\n]*\)\s*$")


def only_checks(source: str) -> bool:
    """Whether a code cell does nothing but call check() (and import it)."""
    return bool(ONLY_CHECK.match(source))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    dropped = [item for item in items if only_checks(getattr(getattr(item, "cell", None), "source", "") or "")]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]
