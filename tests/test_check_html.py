"""check()'s table in a notebook wraps its failure text at a laptop's width, measured in a real browser.

The HTML that check() shows in JupyterLab is rendered by headless Chromium in a 1,100 px window (the page puts
it where JupyterLab puts an output, after the prompt column); a script in the page measures whether any
preformatted block, or the page itself, is wider than the window. Without Chromium the test is skipped with the
reason, except under CI=true, where it fails: CI installs Debian's `chromium` package.
"""
from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path

import pytest
from browser import launch_args, require_browser

from grading import model
from grading.notebook import CheckResult

WIDTH = 1100  # a laptop's browser window, in CSS pixels
MISTAKE = ("Likely mistake: a rank whose whole slice of a row is -inf: shifting by that rank's OWN max gives "
           "exp(-inf - (-inf)) = NaN. Shift every rank by the global max (or give such a rank a sum of 0).")
MESSAGE = ("loss per position: 1 of 4 values differ. First at index [1]: expected 4.1240234375, got nan. Max abs "
           "error over finite values 3.4 (tolerance atol=0.0001, rtol=1e-05). Your result contains NaN.\n  " + MISTAKE
           + "\n  shapes seen: " + "x".join(["[49152, 576]"] * 30))  # one long unbroken token too

MEASURE = """<script>
window.addEventListener('load', () => {
  const blocks = [...document.querySelectorAll('pre')].map(p => [p.scrollWidth, p.clientWidth]);
  document.body.setAttribute('data-measured', JSON.stringify({blocks: blocks,
    page: document.documentElement.scrollWidth, window: window.innerWidth}));
});
</script>"""


def _result() -> CheckResult:
    cases = [model.CaseResult("the docstring's example", True),
             model.CaseResult("a rank whose whole slice of a row is -inf (rank 1, row 1)", False, 0.01, MESSAGE)]
    return CheckResult([model.ExerciseResult("07", "vocab_parallel_cross_entropy", model.WRONG, cases)],
                       target="vocab_parallel_cross_entropy", seconds=1.2, isolation="bubblewrap")


def _measure(fragment: str, tmp_path: Path) -> dict:
    """Render `fragment` as JupyterLab shows an output (after a 70 px prompt column) in a WIDTH px window."""
    browser = require_browser()
    page = tmp_path / "check.html"
    page.write_text("<!doctype html><html><head><meta charset='utf-8'></head><body style='margin:0;font: 13px "
                    "monospace'><div style='display:flex'><div style='flex:0 0 70px'>[1]:</div>"
                    f"<div style='flex:1 1 auto;min-width:0;padding:0 8px'>{fragment}</div></div>{MEASURE}"
                    "</body></html>", encoding="utf-8")
    args = [browser, "--headless", "--disable-gpu", "--no-first-run", f"--window-size={WIDTH},900",
            f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()]
    args[1:1] = launch_args()
    dom = subprocess.run(args, capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'data-measured="([^"]*)"', dom)
    assert found, f"Chromium did not run the measuring script; its output began: {dom[:300]!r}"
    return json.loads(html.unescape(found.group(1)))


def test_failure_text_wraps_at_a_laptops_width(tmp_path):
    shown = _result()._repr_html_()
    assert html.escape(MISTAKE) in shown  # the line that matters is in the HTML at all
    measured = _measure(shown, tmp_path)
    assert measured["blocks"], "no preformatted block was rendered"
    for scroll, client in measured["blocks"]:
        assert scroll <= client, f"a block is {scroll} px wide in a {client} px column: it scrolls sideways"
    assert measured["page"] <= measured["window"], f"the page is {measured['page']} px wide at {WIDTH} px"


def test_the_measure_sees_a_block_that_does_not_wrap(tmp_path):
    """The same text in a plain <pre> (how check() showed it before) overflows: the measure can fail."""
    measured = _measure(f"<pre>{html.escape(MESSAGE)}</pre>", tmp_path)
    (scroll, client), = measured["blocks"]
    assert scroll > client
