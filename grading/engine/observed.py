"""What the zygote saw the learner's process change in its inputs (grading/worker/watched.py), added to what that
process reported itself: a change it left out of its own report (learner code can rewrite the report, or write the
frames itself) still fails the case. No verdict on an input left unchanged rests on the learner process's word
alone where a zygote watched it (the fork backend)."""
from __future__ import annotations

from ..model import Exercise
from ..worker.watched import EACH_PATH
from ..worker.watched import watched as is_watched


class NotWatched(Exception):
    """The inputs of a case that must leave them unchanged were to be watched from outside the learner's process,
    and were not (the process that watches them failed): nothing is passed on the learner process's word alone."""


def _merge(report: object, paths: list[str]) -> None:
    if isinstance(report, dict) and isinstance(report.get("changed"), list):
        report["changed"] = report["changed"] + [p for p in paths if p not in report["changed"]]


def with_watched(ex: Exercise, raw: object, watched: dict | None) -> object:
    """`raw` (the learner process's results for `ex`) with the input paths the zygote saw change in each case
    (grading/worker/watched.py) added to those the process reported itself: a change it left out of its own report
    still fails the case. `watched`: the worker's {"changed": case -> paths} or {"error": why}, None where the
    backend watches nothing from outside (spawn). Raises NotWatched when watching failed."""
    if watched is None or not any(is_watched(c.call) for c in ex.cases):
        return raw
    if "error" in watched or not isinstance(watched.get("changed"), dict):
        raise NotWatched(str(watched.get("error", "no report")))
    if not isinstance(raw, list):
        return raw
    for key, paths in watched["changed"].items():
        i = int(key)
        if not (paths and i < len(raw) and isinstance(raw[i], dict) and "output" in raw[i]):
            continue
        out = raw[i]["output"]
        if ex.cases[i].call == "each" and isinstance(out, list):
            for path in paths:
                m = EACH_PATH.match(path)
                if m and int(m.group(1)) < len(out):
                    _merge(out[int(m.group(1))], [f"#{m.group(2)}{m.group(3)}"])
        else:
            _merge(out, paths)
    return raw
