"""Cases that also fail when the learner's function changes its inputs in place.

A function that returns its result must leave the caller's tensors as they were. A case's call "<call>+unchanged"
(grading/worker/calls/unchanged.py) snapshots every tensor reachable from the inputs (through lists, dicts and
nn.Module parameters and buffers) before the call and reports the ones that changed; the check here runs the
case's own check first, then names the argument that changed.
"""
from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

from ..i18n import _
from ..model import Case, Chapter, CheckFailed
from ..worker.calls.unchanged import UNCHANGED

REPO = Path(__file__).resolve().parents[2]
OBSERVED = ("call", "record_ops", "greedy")  # calls that hand the learner the case's own inputs
IN_PLACE = _("you changed an input in place (masked_fill_, x[...] = ..., x += ..., an op with out=, or a write "
             "into a model's weights): the caller's tensor changed with it. Work out of place (masked_fill, "
             "torch.where, x / t) or on a copy (x.clone()), and return a new tensor.")  # named here and in properties


@lru_cache(maxsize=None)
def argument_names(module: str) -> dict[str, list[str]]:
    """{function: [parameter names]} of the hand-out exercises/<module>.py (read with ast, never imported)."""
    path = REPO / "exercises" / f"{module}.py"
    if not path.exists():
        return {}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name: [a.arg for a in n.args.args] for n in tree.body if isinstance(n, ast.FunctionDef)}


def _readable(path: str, names: list[str]) -> str:
    """'#0[1]' -> 'local_logits[1]', '#0.model.norm.weight' -> 'model.model.norm.weight'."""
    m = re.match(r"#(\d+)", path)
    if m is None:
        return path
    i = int(m.group(1))
    return (names[i] if i < len(names) else _("argument {n}", n=i + 1)) + path[m.end():]


def _checked(check, names: list[str]):
    def unchanged_check(result, inputs):
        if not (isinstance(result, dict) and set(result) == {"out", "changed"}):
            raise CheckFailed(_("internal: unexpected result format"))
        check(result["out"], inputs)
        changed = [_readable(p, names) for p in result["changed"]]
        if changed:
            more = (_(" (and {others})", others=", ".join(f"`{c}`" for c in changed[1:4])
                                + (", ..." if len(changed) > 4 else "")) if len(changed) > 1 else "")
            raise CheckFailed(_(
                "Right result, but your function changed `{name}` in place{more}: the caller's tensor now holds other "
                "values. Leave your inputs as they were and return new tensors: use out-of-place operations (x * 2, "
                "torch.where, masked_fill, scatter) or work on a copy (x.clone()), never x.mul_, x[...] = ..., "
                "masked_fill_ or scatter_ on an argument (or on a model's weights).", name=changed[0], more=more), IN_PLACE)
    return unchanged_check


def leave_inputs_unchanged(chapter: Chapter, skip: tuple[str, ...] = ()) -> Chapter:
    """Give every case of `chapter` (but quizzes and `skip`) that calls the learner's function with the case's own
    inputs the in-place check; returns the chapter."""
    names = argument_names(chapter.module)
    for ex in chapter.exercises:
        if ex.is_quiz or ex.name in skip:
            continue
        ex.cases = [Case(c.name, c.make_inputs, _checked(c.check, names.get(ex.name, [])), c.call + UNCHANGED,
                         c.points) if c.call in OBSERVED else c for c in ex.cases]
    return chapter
