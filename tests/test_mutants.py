"""The mutant proof (tools/mutants.py): the format parses, every exercise has enough mutants, one chapter end to end."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from grading import catalog, model
from tools import mutants

REPO = Path(__file__).resolve().parent.parent


def test_every_mutant_file_parses_and_names_its_exercise():
    found = mutants.discover()
    assert len(found) >= 100
    chapters = {c.module: c for c in catalog.load_chapters()}
    for m in found:
        if m.chapter_module in chapters:
            assert m.exercise in {e.name for e in chapters[m.chapter_module].exercises}, m.label
        assert m.mistake.strip() and (m.expect is None or m.expect.strip()), m.label


def test_every_exercise_has_at_least_five_mutants():
    counts = mutants.counts()
    short = {name: n for name, n in counts.items() if n < mutants.MIN_PER_EXERCISE}
    assert not short, f"exercises with fewer than {mutants.MIN_PER_EXERCISE} mutants: {short}"
    assert not any(name.startswith("quiz") for name in counts)  # quizzes are not exercises here


@pytest.mark.parametrize("body, problem", [
    ("MISTAKE = 'x'\nEXPECT = None\ndef lookup(E, ids): pass\n", "missing header"),
    ("EXERCISE = 'lookup'\nMISTAKE = 'x'\nEXPECT = None\n", "defines no function"),
    ("EXERCISE = 'other'\nMISTAKE = 'x'\nEXPECT = None\ndef other(): pass\n", "file name must start"),
    ("EXERCISE = 'lookup'\nMISTAKE = ''\nEXPECT = None\ndef lookup(E, ids): pass\n", "MISTAKE"),
    ("EXERCISE = 'lookup'\nMISTAKE = 'x'\nEXPECT = str(1)\ndef lookup(E, ids): pass\n", "plain literal"),
    ("EXERCISE = 'lookup\nMISTAKE = 'x'\n", "not valid Python"),
])
def test_malformed_mutants_are_refused(tmp_path, body, problem):
    path = tmp_path / "ch01_embeddings" / "lookup__bad.py"
    path.parent.mkdir()
    path.write_text(body, encoding="utf-8")
    with pytest.raises(mutants.MutantFormatError, match=problem):
        mutants.parse(path)


def test_a_mutant_calls_the_reference_of_another_exercise(tmp_path):
    """In a round file, a mutant that calls a helper exercise gets the correct reference, not that round's mutant."""
    d = tmp_path / "ch04_sampling"
    d.mkdir()
    (d / "softmax__broken.py").write_text("EXERCISE = 'softmax'\nMISTAKE = 'x'\nEXPECT = None\n"
                                         "def softmax(logits, dim=-1):\n    return logits * 0\n", encoding="utf-8")
    (d / "min_p_filter__uses_softmax.py").write_text(
        "EXERCISE = 'min_p_filter'\nMISTAKE = 'x'\nEXPECT = None\n"
        "def min_p_filter(logits, min_p):\n    return softmax(logits)\n", encoding="utf-8")
    ms = mutants.discover(tmp_path)
    source = mutants.round_source((REPO / "solutions" / "ch04_sampling.py").read_text(encoding="utf-8"), ms)
    ns: dict = {}
    exec(compile(source, "round", "exec"), ns)
    import torch

    x = torch.tensor([1.0, 2.0])
    assert torch.equal(ns["softmax"](x), torch.zeros(2))  # the round's softmax is the mutant
    assert torch.allclose(ns["min_p_filter"](x, 0.1), torch.softmax(x, -1))  # but min_p's helper is the reference


def test_rounds_hold_one_mutant_per_exercise():
    plans = mutants.rounds(mutants.discover())
    for plan in plans:
        for ms in plan.values():
            names = [m.exercise for m in ms]
            assert len(names) == len(set(names))
    assert len(plans) == max(mutants.counts().values())


def test_end_to_end_a_surviving_mutant_is_reported(tmp_path):
    """Chapter 01's embedding_backward: the real mutants fail as declared; a correct 'mutant' and a wrong EXPECT
    are both reported as problems."""
    root = tmp_path / "mutants"
    d = root / "ch01_embeddings"
    d.mkdir(parents=True)
    for m in mutants.discover():
        if m.exercise == "embedding_backward" and m.slug in ("overwrite", "averaged"):
            (d / m.path.name).write_text(m.path.read_text(encoding="utf-8"), encoding="utf-8")
    (d / "embedding_backward__actually_right.py").write_text(textwrap.dedent('''
        EXERCISE = "embedding_backward"
        MISTAKE = "none: this is the reference written differently"
        EXPECT = None

        import torch


        def embedding_backward(grad_out, ids, vocab_size):
            d = grad_out.shape[-1]
            g = torch.zeros(vocab_size, d, dtype=grad_out.dtype)
            g.index_put_((ids.reshape(-1),), grad_out.reshape(-1, d), accumulate=True)
            return g
    '''), encoding="utf-8")
    (d / "embedding_backward__wrong_expect.py").write_text(textwrap.dedent('''
        EXERCISE = "embedding_backward"
        MISTAKE = "overwrites, but declares a message the judge does not give"
        EXPECT = "no judge says this"

        import torch


        def embedding_backward(grad_out, ids, vocab_size):
            d = grad_out.shape[-1]
            g = torch.zeros(vocab_size, d, dtype=grad_out.dtype)
            g[ids.reshape(-1)] = grad_out.reshape(-1, d)
            return g
    '''), encoding="utf-8")
    results, _ = mutants.prove("embedding_backward", root=root)
    by_slug = {r.mutant.slug: r for r in results}
    assert by_slug["overwrite"].ok and by_slug["averaged"].ok
    assert not by_slug["actually_right"].ok and "PASSES" in by_slug["actually_right"].problem
    assert not by_slug["wrong_expect"].ok and "no judge says this" in by_slug["wrong_expect"].problem
    assert len(mutants.problems(results)) == 2


def _judged(name: str, expect: str | None, named: str, ok: bool = True) -> mutants.MutantResult:
    m = mutants.Mutant("ch07_head_at_scale", "shard_range", "a mistake", expect, Path(f"shard_range__{name}.py"))
    return mutants.MutantResult(m, model.WRONG, ok, "", named)


def test_a_mutant_told_another_mutants_mistake_is_reported():
    results = [_judged("ceil", "padded layout", "each rank got ceil(V / world) rows (Megatron's padded layout)"),
               _judged("le", "rank < V % world", "each rank got ceil(V / world) rows (Megatron's padded layout)"),
               _judged("same", "padded layout", "each rank got ceil(V / world) rows (Megatron's padded layout)"),
               _judged("unnamed", None, "")]
    mutants.cross_check(results)
    assert [r.ok for r in results] == [True, False, True, True]  # a shared EXPECT is a shared observable
    assert "names another mutant's mistake: 'padded layout'" in results[1].problem


def test_a_mistake_is_named_only_when_the_evidence_singles_it_out():
    import torch

    from grading import i18n
    from grading.checks import compare

    def named_mistake(*args, **kwargs) -> tuple[str, str]:  # (the mistake named, the causes listed), in English
        diagnosis = compare.named_mistake(*args, **kwargs)
        return diagnosis.mistake, i18n.render(diagnosis.text, "en")

    POSSIBLE_MARK = compare.POSSIBLE_MARK
    got, right = torch.tensor([1.0, 2.0]), torch.tensor([1.0, 3.0])
    one = [("A", got.clone()), ("B", torch.tensor([0.0, 0.0]))]
    assert named_mistake(got, one, expected=right) == ("A", "")
    two = [("A", got.clone()), ("B", got.clone())]
    named, both = named_mistake(got, two, expected=right)
    assert not named and POSSIBLE_MARK in both and "Likely mistake" not in both and "A" in both and "B" in both
    harmless = [("A", right.clone()), ("B", got.clone())]  # A gives the right answer here: it explains nothing
    assert named_mistake(got, harmless, expected=right) == ("B", "")
    nan = torch.tensor([float("nan")] * 2)
    assert named_mistake(nan, [("A", nan.clone())], expected=right)[0] == ""  # NaN everywhere: weak evidence
    failed = compare.named_mistake(got, one, expected=right).fail("x: wrong.")
    assert (failed.message, failed.mistake) == ("x: wrong.", "A") and i18n.render(str(failed), "en") == (
        "x: wrong.\n  Likely mistake: A")  # as the learner reads it
