"""One way to build a chapter's cases: named input builders, a check, and the learner-side call that runs them.

    cases(SOFTMAX_INPUTS, _check_softmax)                 # {name: () -> inputs}: one Case per entry
    cases(OFFSET_INPUTS, _check_offset, constant=True)     # {name: inputs}: the values themselves
    case_with_reference(name, build, check)                # build() -> (inputs, judge-only reference data)

Inputs are built in the judge's process only; they travel to the learner's process pickled
(grading/worker/transport.py). A check gets (learner output, inputs) and raises CheckFailed.
"""
from __future__ import annotations

from typing import Any, Callable

from ..model import Case

Check = Callable[[Any, tuple], None]


def cases(inputs: dict[str, Any], check: Check, call: str = "call", constant: bool = False) -> list[Case]:
    """One Case per entry of `inputs` (name -> a builder of the inputs, or the inputs when constant=True)."""
    if constant:
        return [Case(name, (lambda v=v: v), check, call) for name, v in inputs.items()]
    return [Case(name, make, check, call) for name, make in inputs.items()]


def case_with_reference(name: str, build: Callable[[], tuple[tuple, Any]],
                        check: Callable[[Any, tuple, Any], None], call: str = "call") -> Case:
    """A case whose builder returns (the learner's inputs, judge-only reference data); the check gets the reference
    as a third argument. Both are built in the judge's process, together, once per build of the case's inputs (a
    course-model forward pass is not run again for every student); checks read the reference and never change it,
    as they never change the inputs."""
    built: dict[str, Any] = {}

    def make_inputs() -> tuple:
        inputs, built["reference"] = build()
        return inputs

    def checked(out: Any, inputs: tuple) -> None:
        if "reference" not in built:
            make_inputs()
        check(out, inputs, built["reference"])

    return Case(name, make_inputs, checked, call)
