"""The answers (solutions/, mutants/) for the tests that need them; a student hand-out leaves them out.

The hand-out builder (tools/handout.py) writes HANDOUT_MARKER at the hand-out's top. There, the tests that need
the answers skip and say why; in the course repository a missing answer file is an error, never a skip.
"""
from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HANDOUT_MARKER = ".course-handout"
IN_HANDOUT = (REPO / HANDOUT_MARKER).exists()
REASON = (f"a student hand-out ({HANDOUT_MARKER} is present): it leaves out solutions/ and mutants/, "
          "which this test needs; it runs in the course repository")

needs_answers = pytest.mark.skipif(IN_HANDOUT, reason=REASON)


def skip_module_in_handout() -> None:
    """Call at the top of a test module that needs the answers to be imported at all."""
    if IN_HANDOUT:
        pytest.skip(REASON, allow_module_level=True)


def solution_source(module: str) -> str:
    """solutions/<module>.py as text (skipping the calling module in a hand-out)."""
    skip_module_in_handout()
    return (REPO / "solutions" / f"{module}.py").read_text(encoding="utf-8")
