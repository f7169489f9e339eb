"""exercises/ is generated from solutions/ (tools/stubs.py): the committed stubs are exactly the generated ones."""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import textwrap

import pytest
from answers import REPO, skip_module_in_handout

skip_module_in_handout()
sys.path.insert(0, str(REPO / "tools"))
import stubs  # noqa: E402

SYNTHETIC = textwrap.dedent('''\
    """Chapter 99 exercises: a module docstring the stub keeps."""
    import torch
    import torch.nn.functional as F  # SOLUTION

    SCALE = 2  # a constant learners get


    def double(x):
        """Twice x."""
        # BEGIN SOLUTION
        def helper(y):
            return y * SCALE
        return helper(x)
        # END SOLUTION


    # BEGIN SOLUTION NO PROMPT
    def _private(x):
        return F.relu(x)


    # END SOLUTION
    @torch.no_grad()  # SOLUTION
    def relu(x):
        """max(x, 0)."""
        # BEGIN SOLUTION
        return _private(x)
        # END SOLUTION


    class Square(torch.autograd.Function):
        """x squared, with your own backward."""

        @staticmethod
        def forward(ctx, x):
            # BEGIN SOLUTION
            ctx.save_for_backward(x)
            return x * x
            # END SOLUTION

        @staticmethod
        def backward(ctx, g):
            # BEGIN SOLUTION
            (x,) = ctx.saved_tensors
            return 2 * x * g
            # END SOLUTION


    # Put one letter per question.
    QUIZ = {1: "b", 2: "a"}  # SOLUTION
    # PROMPT: QUIZ = {1: None, 2: None}
''')

SYNTHETIC_STUB = textwrap.dedent('''\
    """Chapter 99 exercises: a module docstring the stub keeps."""
    import torch

    SCALE = 2  # a constant learners get


    def double(x):
        """Twice x."""
        raise NotImplementedError


    def relu(x):
        """max(x, 0)."""
        raise NotImplementedError


    class Square(torch.autograd.Function):
        """x squared, with your own backward."""

        @staticmethod
        def forward(ctx, x):
            raise NotImplementedError

        @staticmethod
        def backward(ctx, g):
            raise NotImplementedError


    # Put one letter per question.
    QUIZ = {1: None, 2: None}
''')


def test_the_committed_stubs_are_the_generated_ones():
    problems = stubs.drift()
    assert not problems, "\n".join(problems) + "\nEdit solutions/ (the one source), then: python -m tools.stubs write"
    names = {folder: {p.name for p in (REPO / folder).glob("ch*.py")} for folder in ("exercises", "solutions")}
    assert names["exercises"] == names["solutions"]


def test_every_solution_keeps_its_answers_and_runs_as_the_solution():
    """The markers are comments: the solution is still the answer (its QUIZ answered, its bodies in place)."""
    for solution, stub in stubs.pairs():
        ns: dict = {}
        exec(compile(solution.read_text(encoding="utf-8"), str(solution), "exec"), ns)
        assert ns["QUIZ"] and None not in ns["QUIZ"].values(), solution.name
        stub_quiz = ast.literal_eval(stub.read_text(encoding="utf-8").split("\nQUIZ = ", 1)[1].splitlines()[0])
        assert set(stub_quiz) == set(ns["QUIZ"]) and set(stub_quiz.values()) == {None}, stub.name


def test_a_synthetic_solution_gives_its_stub():
    assert stubs.generate(SYNTHETIC, "ch99.py") == SYNTHETIC_STUB
    ns: dict = {}
    exec(compile(SYNTHETIC, "ch99.py", "exec"), ns)  # the solution itself runs and answers
    import torch
    assert ns["double"](3) == 6 and ns["QUIZ"] == {1: "b", 2: "a"}
    assert torch.equal(ns["relu"](torch.tensor([-1.0, 2.0])), torch.tensor([0.0, 2.0]))
    x = torch.tensor([3.0], requires_grad=True)
    ns["Square"].apply(x).backward()
    assert x.grad.item() == 6.0


def test_crlf_line_endings_are_kept():
    assert stubs.generate(SYNTHETIC.replace("\n", "\r\n")) == SYNTHETIC_STUB.replace("\n", "\r\n")


@pytest.mark.parametrize("broken, says", [
    (SYNTHETIC.replace("        # END SOLUTION\n\n\n# Put", "\n\n# Put", 1), "no '# END SOLUTION'"),
    (SYNTHETIC.replace("    # BEGIN SOLUTION\n    def helper", "    def helper", 1), "without a '# BEGIN SOLUTION'"),
    (SYNTHETIC.replace("    # BEGIN SOLUTION\n    return _private", "    return _private", 1)
     .replace("    return _private(x)\n    # END SOLUTION\n", "    return _private(x)\n", 1),
     "relu (line "),
    (SYNTHETIC.replace("# PROMPT: QUIZ", "# PROMPT:QUIZ"), "one space after the colon"),
    (SYNTHETIC.replace("  # SOLUTION\n", "  # SOLUTIONS\n", 1), "a marker the generator does not know"),
    (SYNTHETIC.replace("    return helper(x)\n", "    # BEGIN SOLUTION\n", 1), "inside the block opened"),
    (SYNTHETIC.replace("# BEGIN SOLUTION NO PROMPT", "# BEGIN SOLUTION"), "raises outside a function"),
], ids=["unclosed", "end_without_begin", "forgotten_marker", "prompt_spacing", "unknown_marker", "nested",
        "module_level"])
def test_broken_markers_are_refused_with_the_place(broken, says):
    with pytest.raises(stubs.StubError, match="ch99.py") as caught:
        stubs.generate(broken, "ch99.py")
    assert says in str(caught.value), caught.value


def test_an_edited_stub_or_solution_is_drift_and_write_repairs_it(tmp_path):
    solutions, exercises = tmp_path / "solutions", tmp_path / "exercises"
    shutil.copytree(REPO / "solutions", solutions, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "exercises", exercises, ignore=shutil.ignore_patterns("__pycache__"))
    assert stubs.drift(solutions=solutions, exercises=exercises) == []
    stub = exercises / "ch04_sampling.py"
    stub.write_text(stub.read_text(encoding="utf-8").replace("0 <= p <= 1.", "0 < p <= 1."), encoding="utf-8")
    solution = solutions / "ch06_logit_lens.py"
    solution.write_text(solution.read_text(encoding="utf-8").replace("The last entry is exactly 0.",
                                                                     "The last entry is 0."), encoding="utf-8")
    problems = stubs.drift(solutions=solutions, exercises=exercises)
    assert [p.split(" ", 1)[0] for p in problems] == ["exercises/ch04_sampling.py", "exercises/ch06_logit_lens.py"]
    assert "-    logits:  [..., V];  0 < p <= 1." in problems[0]
    assert "+    logits:  [..., V];  0 <= p <= 1." in problems[0]
    assert stubs.drift(["06"], solutions=solutions, exercises=exercises) == problems[1:]
    assert stubs.write(solutions=solutions, exercises=exercises) == [stub, exercises / "ch06_logit_lens.py"]
    assert stubs.drift(solutions=solutions, exercises=exercises) == []
    assert stub.read_bytes() == (REPO / "exercises" / "ch04_sampling.py").read_bytes()


def test_the_command_line_checks_and_explains():
    done = subprocess.run([sys.executable, "-m", "tools.stubs", "check"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    helped = subprocess.run([sys.executable, "-m", "tools.stubs", "--help"], cwd=REPO, capture_output=True, text=True)
    assert helped.returncode == 0 and "# BEGIN SOLUTION NO PROMPT" in helped.stdout
    wrong = subprocess.run([sys.executable, "-m", "tools.stubs", "check", "42"], cwd=REPO, capture_output=True,
                           text=True)
    assert wrong.returncode == 2 and "no solution file for chapter(s) 42" in wrong.stderr


def test_a_crlf_checkout_is_no_drift(tmp_path):
    """git on Windows (core.autocrlf) checks both folders out with CRLF line endings: still equal."""
    for folder in ("solutions", "exercises"):
        (tmp_path / folder).mkdir()
        for name in ("ch00_pipeline.py", "ch05_embedding_geometry.py"):
            data = (REPO / folder / name).read_bytes()
            (tmp_path / folder / name).write_bytes(data.replace(b"\n", b"\r\n"))
    assert stubs.drift(solutions=tmp_path / "solutions", exercises=tmp_path / "exercises") == []
