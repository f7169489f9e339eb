"""tools/bench.py (issue 34): the class it generates, and the CPU time it reads on a busy machine."""
from __future__ import annotations

import subprocess
import sys

import pytest

from answers import skip_module_in_handout

skip_module_in_handout()  # tools/bench.py builds its students from the answers: a hand-out leaves it out
from tools import bench  # noqa: E402


def test_the_issues_class_of_100_has_a_third_stubs(tmp_path):
    roster = bench.make_class(tmp_path, 100, mix=bench.mix_with_stubs(0.33))
    kinds = [k.split(":")[0] for k in roster.values()]
    assert len(roster) == 100 and kinds.count("stub") == 33
    assert kinds.count("correct") > kinds.count("buggy") > kinds.count("hostile") > 0  # MIX's proportions
    assert len(list(tmp_path.glob("*/exercises/ch04_sampling.py"))) == 100


BUSY_GRANDCHILD = ("import subprocess, sys, time; subprocess.run([sys.executable, '-c', "
                   "'import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.5: pass']); "
                   "print('reaped', flush=True); time.sleep(60)")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_descendants_cpu_counts_what_a_live_child_has_reaped():
    """A worker inside bubblewrap is never reaped by the judge, so its learner processes' time is read from /proc
    while it lives: here a child whose own child burnt 0.5 s of CPU and was reaped."""
    before = bench.descendants_cpu()
    child = subprocess.Popen([sys.executable, "-c", BUSY_GRANDCHILD], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "reaped"
        assert bench.descendants_cpu() - before >= 0.45
    finally:
        child.kill()
        child.wait()
