"""What decides a verdict is not only the learner process's word (issue 38): the zygote's watch on inputs
(grading/worker/watched.py: copies in shared memory that a forked process changes where its parent sees it,
compared bit for bit, merged into what the learner's process reported), and the judge's own reading of the
learner's source for the techniques an exercise asks for (grading/techniques.py)."""
from __future__ import annotations

import faulthandler
import os
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from grading.checks.ch07_head_at_scale.cross_entropy import chunks_in_source
from grading.techniques import source_facts
from grading import i18n
from grading.engine import scheduler
from grading.model import PASSED, WRONG, CaseResult, ExerciseResult

from grading.engine.observed import NotWatched, with_watched
from grading.model import Case, Exercise
from grading.worker.watched import Unwatched, Watch

FORKS = pytest.mark.skipif(not hasattr(os, "fork"), reason="the zygote forks (Linux)")


def _in_child(fn) -> None:
    pid = os.fork()
    if pid == 0:
        try:
            fn()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _inputs():
    base = torch.arange(12.0).reshape(3, 4)
    head = torch.nn.Linear(4, 3, bias=False)
    return [(base.t(), {"ids": torch.tensor([1, 2])}, head), (torch.tensor([float("nan"), -0.0]),)]


@FORKS
def test_a_change_in_a_forked_process_is_seen_by_path_and_nothing_else_is():
    originals = _inputs()
    watch = Watch({"f": originals}, [{"name": "f", "protocols": ["call+unchanged", "call+unchanged"]}], {})
    ready = watch.ready["f"]
    assert ready[0][0] is not originals[0][0] and torch.equal(ready[0][0], originals[0][0])
    assert ready[0][0].stride() == originals[0][0].stride()  # a transposed view stays one

    def learner():
        ready[0][0][1, 2] = 99.0  # through the view, in place
        with torch.no_grad():
            ready[0][2].weight.add_(1)
        ready[1][0][0] = float("nan")  # the same bits: not a change

    _in_child(learner)
    assert watch.changed() == {"f": {"0": ["#0", "#2.weight"], "1": []}}
    assert torch.equal(originals[0][0], torch.arange(12.0).reshape(3, 4).t())  # the originals are untouched


@FORKS
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64, torch.bool, torch.int64,
                                   torch.uint8, torch.complex64])
def test_every_dtype_is_watched(dtype):
    x = torch.zeros(4, 3, dtype=dtype)
    watch = Watch({"f": [(x, x[1:, ::2])]}, [{"name": "f", "protocols": ["call+unchanged"]}], {})
    mine = watch.ready["f"][0]
    assert mine[1].untyped_storage().data_ptr() == mine[0].untyped_storage().data_ptr()  # still one storage
    _in_child(lambda: mine[1].fill_(1))
    assert watch.changed() == {"f": {"0": ["#0", "#1"]}}


@FORKS
def test_copies_keep_what_deepcopy_keeps_one_storage_each_and_are_watched():
    a, b = torch.zeros(3), torch.ones(2, dtype=torch.float64)
    p = torch.nn.Parameter(torch.zeros(2, 2), requires_grad=False)
    g = torch.zeros(2, requires_grad=True)
    g.grad = torch.ones(2)  # not a plain copy: deepcopy makes it (with its grad), the mapping gets it after
    watch = Watch({"f": [(a, b, p, g)]}, [{"name": "f", "protocols": ["call+unchanged"]}], {})
    ca, cb, cp, cg = watch.ready["f"][0]
    assert ca.untyped_storage().data_ptr() != cb.untyped_storage().data_ptr()  # two inputs never look like one
    assert ca.untyped_storage().nbytes() == a.untyped_storage().nbytes()
    assert type(cp) is torch.nn.Parameter and not cp.requires_grad
    assert cg.requires_grad and torch.equal(cg.grad, g.grad)
    assert (cb.dtype, cb.shape, cb.stride()) == (b.dtype, b.shape, b.stride())

    def learner():
        cb.add_(1)
        with torch.no_grad():
            cg.add_(1)

    _in_child(learner)
    assert watch.changed() == {"f": {"0": ["#1", "#3"]}}


def test_unwatched_calls_get_no_copy_and_shared_objects_are_not_copied():
    E = torch.ones(5, 2)
    watch = Watch({"f": [(E, torch.zeros(2))]}, [{"name": "f", "protocols": ["call+unchanged"]}], {id(E): E})
    assert watch.ready["f"][0][0] is E  # the course's shared E: the learner process's word, as documented
    other = Watch({"g": [(torch.zeros(2),)]}, [{"name": "g", "protocols": ["seeded"]}], {})
    assert other.ready["g"] == [None] and other.changed() == {}


def _exercise(*calls: str) -> Exercise:
    return Exercise("f", "", [Case(f"case {i}", tuple, lambda r, i: None, call) for i, call in enumerate(calls)], "")


def test_what_the_zygote_saw_is_added_to_what_the_process_reported():
    ex = _exercise("call+unchanged", "each", "seeded")
    raw = [{"name": "case 0", "output": {"out": 1, "changed": []}},
           {"name": "case 1", "output": [{"out": 1, "changed": []}, {"error": "x", "changed": ["#1"]}]},
           {"name": "case 2", "output": {"draws": []}}]
    got = with_watched(ex, raw, {"changed": {"0": ["#0"], "1": ["#0[1][0]", "#0[0][2][1]"]}})
    assert got[0]["output"]["changed"] == ["#0"]
    assert got[1]["output"][0]["changed"] == ["#2[1]"] and got[1]["output"][1]["changed"] == ["#1", "#0"]
    assert with_watched(ex, raw, None) is raw  # spawn: nothing watched from outside


def test_inputs_that_were_to_be_watched_and_were_not_are_not_graded():
    with pytest.raises(RuntimeError, match="not watched: boom"):
        Unwatched("boom").changed()
    with pytest.raises(NotWatched, match="zygote"):
        with_watched(_exercise("call+unchanged"), [], {"error": "RuntimeError: the zygote ended"})
    assert with_watched(_exercise("seeded"), [], {"error": "x"}) == []  # no case needed watching


# ---------------------------------------------------------------- the judge's own reading of the source

TECHNIQUES = """
import torch
from torch.nn.functional import one_hot as oh
from torch.utils.checkpoint import checkpoint

def _block(h, W, t):
    return torch.nn.functional.cross_entropy(h @ W.T, t, reduction="sum")

def chunked(h, W, t, chunk):
    return sum(checkpoint(_block, h[i:i + chunk], W, t[i:i + chunk]) for i in range(0, len(h), chunk))

def one_shot(h, W, t, chunk):
    return torch.nn.functional.cross_entropy(h @ W.T, t)

def looped_no_checkpoint(h, W, t, chunk):
    total = 0
    for i in range(0, len(h), chunk):
        total = total + _block(h[i:i + chunk], W, t[i:i + chunk])
    return total

def onehot(E, ids):
    return oh(ids, E.shape[0]).to(E.dtype) @ E

class Lookup(torch.autograd.Function):
    @staticmethod
    def forward(ctx, E, ids):
        return E[ids]
    @staticmethod
    def backward(ctx, g):
        return g, None

def custom(E, ids):
    return Lookup.apply(E, ids)
"""


def test_the_source_shows_what_each_function_reaches_through_helpers_and_aliases():
    facts = source_facts(TECHNIQUES, ["chunked", "one_shot", "looped_no_checkpoint", "onehot", "custom", "absent"])
    assert {"checkpoint", "loop", "@"} <= facts["chunked"]  # the product is in the helper it names
    assert "loop" not in facts["one_shot"] and "checkpoint" not in facts["looped_no_checkpoint"]
    assert {"one_hot", "@"} <= facts["onehot"]  # `oh` is one_hot
    assert {"autograd.Function", "apply"} <= facts["custom"]
    assert facts["absent"] == frozenset() and source_facts("def (:", ["x"]) == {}
    assert chunks_in_source(facts["chunked"], "backward") == ""
    assert chunks_in_source(facts["looped_no_checkpoint"], "record_ops") == ""
    assert chunks_in_source(facts["looped_no_checkpoint"], "backward") and chunks_in_source(facts["one_shot"],
                                                                                              "record_ops")


def test_a_case_passed_on_the_processs_word_fails_without_the_source_and_only_then():
    ex = _exercise("record_ops", "call")
    ex.source_check = lambda facts, call: "" if call != "record_ops" or "one_hot" in facts else "no one_hot"
    res = ExerciseResult("01", "f", PASSED, [CaseResult("case 0", True), CaseResult("case 1", True)])
    got = scheduler.by_source(ex, res, frozenset({"matmul"}))
    assert got.status == WRONG and [c.passed for c in got.cases] == [False, True]
    assert got.cases[0].message == "no one_hot"
    ok = ExerciseResult("01", "f", PASSED, [CaseResult("case 0", True), CaseResult("case 1", True)])
    assert scheduler.by_source(ex, ok, frozenset({"one_hot"})).status == PASSED


FORGED_OPS = """
import sys
_ch01 = sys.modules.get("grading.worker.calls.ch01")
_seen = []

class _Forged:  # what the process reports: E in a matrix product, which never ran
    def __enter__(self):
        self.calls = []
        return self
    def __exit__(self, *exc):
        E = _seen[-1]
        self.calls = [("one_hot", []), ("matmul", [[1, E.shape[0]], list(E.shape)])]
        return False

if _ch01 is not None:
    _ch01.RecordOps = _Forged

def lookup_onehot(E, ids):
    _seen.append(E)
    return E[ids].clone()
"""


def _failed_by_the_source_alone(tmp_path: Path, module: str, appended: str, exercise: str) -> None:
    """The reference solution of `module` with `appended` after it fails `exercise`, every failed case on the judge's
    own reading of the source."""
    sys.path.insert(0, str(Path(__file__).parent))
    from answers import solution_source

    folder = tmp_path / "exercises"
    folder.mkdir()
    (folder / f"{module}.py").write_text(solution_source(module) + textwrap.dedent(appended))
    r = i18n.localize(scheduler.grade(folder, exercise)[0], "en")
    assert r.status == WRONG, r
    failed = [c for c in r.cases if not c.passed]
    assert failed and all("judge's own reading of your file" in c.message for c in failed), r


@FORKS
def test_forged_operations_do_not_pass_a_case_that_asks_for_a_technique(tmp_path):
    _failed_by_the_source_alone(tmp_path, "ch01_embeddings", FORGED_OPS, "lookup_onehot")


HIDDEN_TIE = """
def tie_weights(embedding, head):  # a real tie, so the process reports one, through a path no reading shows
    vars(head)["_param" + "eters"].update(weight=embedding.weight)
"""


def test_tying_needs_the_assignment_in_the_source():
    code = textwrap.dedent("""
        def assigned(embedding, head):
            head.weight = embedding.weight
        def copied(embedding, head):
            head.weight.data = embedding.weight.data.clone()
        def new_parameter(embedding, head):
            head.weight = torch.nn.Parameter(embedding.weight)
        def untie(model):
            model.lm_head.weight = nn.Parameter(model.lm_head.weight.detach().clone())
            model.config.update({"tie_word_embeddings": False})
    """)
    facts = source_facts(code, ["assigned", "copied", "new_parameter", "untie"])
    assert ".weight =" in facts["assigned"] and ".weight =" not in facts["copied"] | facts["new_parameter"]
    assert {"tie_word_embeddings", "Parameter"} <= facts["untie"]


@FORKS
def test_a_tie_the_process_reports_does_not_pass_without_the_assignment_in_the_source(tmp_path):
    _failed_by_the_source_alone(tmp_path, "ch03_weight_tying", HIDDEN_TIE, "tie_weights")


LINUX_ZYGOTE = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the zygote and sealed memfds (Linux)")


def _mapping_of(t: torch.Tensor) -> tuple[str, str]:
    """(permissions, what is mapped) of the mapping that holds `t`'s data in this process."""
    for line in Path("/proc/self/maps").read_text().splitlines():
        parts = line.split(maxsplit=5)
        start, end = (int(x, 16) for x in parts[0].split("-"))
        if start <= t.data_ptr() < end:
            return parts[1], parts[5] if len(parts) == 6 else ""
    raise AssertionError("not mapped")


def _write_ends_the_process(t: torch.Tensor, view: torch.Tensor) -> None:
    """In forked children: making `t`'s page writable is refused, and a write through `view` is SIGSEGV."""
    def mprotect():
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        page = ctypes.c_void_p(t.data_ptr() & ~4095)
        os._exit(3 if libc.mprotect(page, 4096, 3) == 0 else 4)  # PROT_READ | PROT_WRITE

    for fn, expected in [(mprotect, 4 << 8), (lambda: view.data.mul_(2), 11)]:  # exit 4; killed by SIGSEGV
        pid = os.fork()
        if pid == 0:
            try:
                faulthandler.disable()  # pytest's: no traceback printed for the expected fault
                fn()
            finally:
                os._exit(0)
        assert os.waitpid(pid, 0)[1] == expected


@LINUX_ZYGOTE
def test_sealed_tensors_keep_values_and_sharing_and_a_write_ends_the_process():
    from grading.worker.readonly import seal

    base = torch.arange(12.0).reshape(3, 4)
    tied = torch.nn.Parameter(base[1:])  # a view: one storage for both
    assert seal([base, tied]) and seal([base]) == 0  # moved once
    assert torch.equal(base, torch.arange(12.0).reshape(3, 4)) and tied.data_ptr() == base[1:].data_ptr()
    assert _mapping_of(base) == ("r--s", "/memfd:course-fixtures (deleted)")  # copied into the sealed memfd
    _write_ends_the_process(base, tied)
    assert torch.equal(base, torch.arange(12.0).reshape(3, 4))


@LINUX_ZYGOTE
def test_tensors_loaded_from_a_file_are_mapped_from_it_read_only_unless_changed(tmp_path):
    from safetensors import safe_open
    from safetensors.torch import save_file

    from grading.worker.readonly import seal

    save_file({"a": torch.arange(4096.0), "b": torch.ones(4096)}, tmp_path / "w.safetensors")
    with safe_open(tmp_path / "w.safetensors", framework="pt") as f:
        a, b = f.get_tensor("a"), f.get_tensor("b")
    assert _mapping_of(a)[0] == "rw-p"  # safetensors maps the file privately
    b[0] = 7.0  # changed in this process: its bytes are no longer the file's
    seal([a, b])
    assert _mapping_of(a) == ("r--s", str(tmp_path / "w.safetensors"))  # the file itself, shared and read-only
    assert _mapping_of(b)[0] == "r--s" and "memfd" in _mapping_of(b)[1]  # a sealed copy, the change kept
    assert torch.equal(a, torch.arange(4096.0)) and b[0] == 7.0 and torch.equal(b[1:], torch.ones(4095))
    _write_ends_the_process(a, a[1:])


FORGED_UNCHANGED = """
import sys
_unchanged = sys.modules.get("grading.worker.calls.unchanged")
if _unchanged is not None:
    _unchanged.changed_inputs = lambda before: []  # the process reports that nothing changed

_right = logit_lens

def logit_lens(model, input_ids):
    head = model.get_output_embeddings().weight
    with torch.no_grad():
        head.mul_(2)  # a write into the model's weights (undone below: the values come back bit for bit)
        head.div_(2)
    return _right(model, input_ids)
"""


@LINUX_ZYGOTE
def test_a_write_into_the_course_model_fails_whatever_the_process_reports(tmp_path):
    sys.path.insert(0, str(Path(__file__).parent))
    from answers import solution_source

    folder = tmp_path / "exercises"
    folder.mkdir()
    source = solution_source("ch06_logit_lens") + textwrap.dedent(FORGED_UNCHANGED)
    (folder / "ch06_logit_lens.py").write_text(source)
    r = i18n.localize(scheduler.grade(folder, "logit_lens")[0], "en")
    line = source.splitlines().index("        head.mul_(2)  # a write into the model's weights (undone below: the "
                                     "values come back bit for bit)") + 1
    assert r.status != PASSED and "read-only while you are graded" in r.message, r
    assert f"at line {line} of your file (head.mul_(2)" in r.message, r.message
