"""The interactive figures (lesson_utils/web_figures.py): their data, and what they do in a real browser.

The data checks run in Python: the explorer's embedded distribution is the course model's softmax, the scan's
logits are h · w. The browser checks open the figures in headless Chromium (Playwright, driving Debian's
`chromium`): the explorer's filters give the probabilities transformers' warpers give, ties included; dragging or
pressing an arrow key changes the 3-D picture; the scan advances on step and on play; every figure has a text
alternative; and, where axe-core is at hand, no serious or critical accessibility violation. Without Chromium the
browser tests are skipped with the reason, except under CI=true, where they fail.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from browser import drag, launch_args, require_browser, unavailable
import torch
from transformers.generation.logits_process import (MinPLogitsWarper, TemperatureLogitsWarper, TopKLogitsWarper,
                                                    TopPLogitsWarper)

from lesson_utils import load_course_model
from lesson_utils.display import token_label
from lesson_utils.web_figures import (expanded_logits, lm_head_scan, pca_3d, sampling_explorer, saved_figures,
                                      with_current_assets)

REPO = Path(__file__).resolve().parent.parent
AXE = [Path(os.environ.get("AXE_CORE_JS", "")), REPO / "site" / "node_modules" / "axe-core" / "axe.min.js"]
PROMPT = "The cat sat on the"


@pytest.fixture(scope="module")
def course():
    """The course model's tokenizer, final hidden vector h of PROMPT, head W and logits W h."""
    model, tok = load_course_model(verbose=False)
    with torch.no_grad():
        ids = tok(PROMPT, return_tensors="pt").input_ids
        h = model.model(ids).last_hidden_state[0, -1]
        logits = model(ids).logits[0, -1]
    return tok, h, model.lm_head.weight.detach(), logits


@pytest.fixture(scope="module")
def browser():
    path = require_browser()
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=path, args=launch_args())
        yield chromium
        chromium.close()


def open_page(browser, tmp_path: Path, *figures, lang: str = "en"):
    """A page holding `figures`, as the site or JupyterLab shows outputs, opened in a 1,000 px window."""
    page_file = tmp_path / "figures.html"
    page_file.write_text(f"<!doctype html><html lang='{lang}'><head><meta charset='utf-8'><title>figures</title>"
                         f"</head><body><main>{''.join(f.html for f in figures)}</main></body></html>",
                         encoding="utf-8")
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(page_file.as_uri())
    page.wait_for_selector(".course-figure[data-ready]")
    assert not errors, f"the figures' scripts failed: {errors}"
    return page


def set_controls(page, **values) -> None:
    """Move the explorer's sliders as a reader would: set the value, fire the input event."""
    for name, value in values.items():
        page.eval_on_selector(f'input[name="{name}"]', "(el, v) => { el.value = v; "
                              "el.dispatchEvent(new Event('input', {bubbles: true})); }", str(value))


def shown_probabilities(page) -> dict[str, float]:
    bars = page.query_selector_all("[data-bar]")
    return {b.get_attribute("data-bar"): float(b.get_attribute("data-p")) for b in bars}


def reference(logits: torch.Tensor, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0) -> torch.Tensor:
    """transformers' warpers in generate's order (the ones generate leaves out at their off values)."""
    warpers = [TemperatureLogitsWarper(temperature)]
    warpers += [TopKLogitsWarper(top_k)] if top_k else []
    warpers += [TopPLogitsWarper(top_p)] if top_p < 1 else []
    warpers += [MinPLogitsWarper(min_p)] if min_p else []
    scores = logits[None].clone()
    for w in warpers:
        scores = w(None, scores)
    return torch.softmax(scores[0], -1)


# ------------------------------------------------------------------------------------------------- data, in Python


def test_explorer_embeds_the_models_next_token_distribution(course):
    tok, _, _, logits = course
    fig = sampling_explorer(logits, tok, PROMPT)
    data = fig.data
    assert data["V"] == len(logits) == len(expanded_logits(data))
    probs = torch.softmax(logits.double(), -1)
    top = probs.topk(len(data["tokens"]))
    assert [t[0] for t in data["tokens"]] == [token_label(tok, i) for i in top.indices.tolist()]
    embedded = torch.softmax(expanded_logits(data), -1)[:len(top.values)]
    assert torch.allclose(embedded, top.values, rtol=2e-3), "the embedded top tokens' probabilities differ"
    assert fig.html == sampling_explorer(logits, tok, PROMPT).html, "the same inputs must give the same HTML"


def test_scan_logits_are_rows_times_h(course):
    tok, h, W, logits = course
    data = lm_head_scan(h, W, tok, PROMPT).data
    ids = [int(logits.argsort(descending=True)[r]) for r in (0, 1, 2, 3, 4, 5, 100, 1000, 10000, -1)]
    assert data["tokens"] == [token_label(tok, i) for i in ids]
    assert torch.allclose(torch.tensor(data["logits"], dtype=torch.float64), logits[ids].double(), atol=0.01)
    assert len(data["dims"]) == len(data["h"]) == len(data["W"][0]) == 24
    assert set(data["dims"]) == set(h.abs().topk(24).indices.tolist())


def test_pca_figure_checks_its_inputs_and_language():
    xyz = torch.randn(4, 3, generator=torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match=r"\[n, 3\]"):
        pca_3d(xyz, xyz[:, :2], list("abcd"), list("xxyy"), ["1", "2", "3"], ["1", "2", "3"])
    with pytest.raises(ValueError, match="lang"):
        pca_3d(xyz, xyz, list("abcd"), list("xxyy"), ["1", "2", "3"], ["1", "2", "3"], lang="fr")
    zh = pca_3d(xyz, xyz, list("abcd"), list("xxyy"), ["1", "2", "3"], ["1", "2", "3"], lang="zh").html
    assert "主成分方向" in zh and 'data-lang="zh"' in zh


# ----------------------------------------------------------------------------------------------- in a real browser


SETTINGS = [dict(temperature=0.7), dict(temperature=1.5, top_k=20), dict(top_p=0.9), dict(top_p=0.5, min_p=0.05),
            dict(temperature=0.5, top_k=50, top_p=0.8, min_p=0.1)]


def test_explorer_filters_match_transformers_on_the_real_distribution(browser, course, tmp_path):
    tok, _, _, logits = course
    fig = sampling_explorer(logits, tok, PROMPT)
    page = open_page(browser, tmp_path, fig)
    full = expanded_logits(fig.data)
    labels = [t[0] for t in fig.data["tokens"][:fig.data["shown"]]]
    for setting in SETTINGS:
        page.click('button[data-action="reset"]')
        set_controls(page, **setting)
        want = reference(full, **setting)
        got = shown_probabilities(page)
        assert list(got) == labels
        assert torch.allclose(torch.tensor(list(got.values()), dtype=torch.float64), want[:len(labels)], atol=1e-9), \
            f"{setting}: the bars differ from transformers' warpers"
        kept = int(page.get_attribute(".cf-readout", "data-kept"))
        assert kept == int((want > 0).sum()), f"{setting}: kept {kept} tokens, transformers keeps {(want > 0).sum()}"


def test_explorer_filters_keep_ties_as_transformers_does(browser, tmp_path):
    logits = torch.tensor([3.0, 2.0, 2.0, 2.0, 1.0, 1.0, 0.5, 0.0, 0.0, -1.0], dtype=torch.float64)
    fig = sampling_explorer(logits, None, "ties", exact=10, shown=10, labels=[f"t{i}" for i in range(10)])
    page = open_page(browser, tmp_path, fig)
    for setting in [dict(top_k=2), dict(top_k=5), dict(top_p=0.5), dict(top_p=0.75), dict(min_p=0.35),
                    dict(temperature=0.5, top_k=4, top_p=0.9)]:
        page.click('button[data-action="reset"]')
        set_controls(page, **setting)
        want = reference(logits, **setting)
        got = torch.tensor(list(shown_probabilities(page).values()), dtype=torch.float64)
        assert int((got > 0).sum()) == int((want > 0).sum()), f"{setting}: a different number of tokens kept"
        assert torch.allclose(got.sort().values, want.sort().values, atol=1e-9), f"{setting}: probabilities differ"


def test_moving_the_temperature_control_changes_the_bars(browser, course, tmp_path):
    tok, _, _, logits = course
    page = open_page(browser, tmp_path, sampling_explorer(logits, tok, PROMPT))
    widths = lambda: page.eval_on_selector_all("[data-bar]", "els => els.map(e => e.style.width)")
    before = widths()
    page.focus('input[name="temperature"]')
    for _ in range(6):
        page.keyboard.press("ArrowLeft")  # the keyboard moves it too: T 1.0 -> 0.7
    assert page.input_value('input[name="temperature"]') == "0.7"
    after = widths()
    assert after != before and float(after[0].rstrip("%")) > 0


def test_dragging_the_3d_figure_rotates_it(browser, tmp_path):
    g = torch.Generator().manual_seed(1)
    xyz = torch.randn(30, 3, generator=g)
    fig = pca_3d(xyz, 0.3 * torch.randn(30, 3, generator=g), [f"w{i}" for i in range(30)], ["a", "b", "c"] * 10,
                 ["PC1", "PC2", "PC3"], ["r1", "r2", "r3"])
    page = open_page(browser, tmp_path, fig)
    canvas = page.locator(".course-figure[data-figure='pca-3d'] canvas")
    first = canvas.screenshot()
    drag(page, canvas, 120, 40)
    dragged = canvas.screenshot()
    assert dragged != first, "dragging did not change the picture"
    canvas.focus()
    page.keyboard.press("ArrowRight")
    assert canvas.screenshot() != dragged, "the arrow key did not rotate the picture"
    page.click("button[data-view='random']")
    assert page.get_attribute("button[data-view='random']", "aria-pressed") == "true"
    assert canvas.screenshot() != dragged


def test_scan_advances_on_step_and_on_play(browser, course, tmp_path):
    tok, h, W, _ = course
    fig = lm_head_scan(h, W, tok, PROMPT)
    page = open_page(browser, tmp_path, fig)
    scan = page.locator(".course-figure[data-figure='lm-head-scan']")
    assert scan.get_attribute("data-step") == "0"
    page.click("button[data-action='step']")
    assert scan.get_attribute("data-step") == "1"
    assert f"{fig.data['logits'][0]:.2f}" in page.inner_text(".cf-readout")
    page.click("button[data-action='play']")
    page.wait_for_function("el => Number(el.getAttribute('data-step')) >= 3", arg=scan.element_handle(), timeout=5000)
    page.click("button[data-action='play']")  # pause
    paused = scan.get_attribute("data-step")
    page.wait_for_timeout(900)
    assert scan.get_attribute("data-step") == paused, "pause did not stop the scan"


def test_every_figure_has_alt_text_and_passes_axe(browser, course, tmp_path):
    tok, h, W, logits = course
    xyz = torch.randn(6, 3, generator=torch.Generator().manual_seed(2))
    figures = [pca_3d(xyz, xyz / 3, list("abcdef"), list("xxyyzz"), ["PC1", "PC2", "PC3"], ["r1", "r2", "r3"]),
               sampling_explorer(logits, tok, PROMPT), lm_head_scan(h, W, tok, PROMPT)]
    for lang, word in (("en", "temperature"), ("zh-CN", "温度")):
        page = open_page(browser, tmp_path, *figures, lang=lang)
        assert word in page.inner_text(".course-figure[data-figure='sampling-explorer'] label")
        for kind in ("pca-3d", "sampling-explorer", "lm-head-scan"):
            fig = page.locator(f".course-figure[data-figure='{kind}']")
            assert len(fig.locator("figcaption").inner_text()) > 60, f"{kind} has no real caption"
            assert not fig.locator(".cf-note").is_visible(), f"{kind}: the script did not hide the note"
            for img in fig.locator("[role='img']").all():
                assert len(img.get_attribute("aria-label") or "") > 60, f"{kind}: an image without alt text"
        for slider in page.locator("input[type='range']").all():
            assert page.locator(f"label[for='{slider.get_attribute('id')}']").count() == 1
        axe = next((p for p in AXE if p.is_file()), None)
        if axe is None:
            unavailable("axe-core is not installed: run `npm ci` in site/ (python course.py site does), or set "
                        "AXE_CORE_JS to axe.min.js")
        page.add_script_tag(path=str(axe))
        found = page.evaluate("axe.run(document.querySelector('main')).then(r => r.violations"
                              ".filter(v => ['serious', 'critical'].includes(v.impact)).map(v => v.id + ': ' + v.help))")
        assert not found, f"axe-core finds serious accessibility violations ({lang}): {found}"


def test_saved_figures_carry_the_current_scripts_and_style():
    """A figure output saved in a notebook embeds lesson_utils/web/ as it is now (the site shows these outputs):
    after changing a script, `python -m lesson_utils.web_figures NOTEBOOK...` refreshes them without a re-run."""
    found = 0
    for path in sorted((REPO / "notebooks").glob("**/*.ipynb")):
        for out in saved_figures(json.loads(path.read_text(encoding="utf-8"))):
            saved = "".join(out["data"]["text/html"])
            assert with_current_assets(saved) == saved, (
                f"{path.relative_to(REPO)}: a saved figure embeds an older lesson_utils/web/; run "
                f"python -m lesson_utils.web_figures {path.relative_to(REPO)}")
            found += 1
    assert found >= 6, f"only {found} saved figures found in the notebooks"


def test_explorer_top_k_takes_a_typed_number(browser, tmp_path):
    """The top-k slider spans 0-200, too coarse to pick a small k by mouse: a number box beside it sets it exactly."""
    logits = torch.linspace(3, -3, 300, dtype=torch.float64)
    fig = sampling_explorer(logits, None, "k", exact=300, shown=10, labels=[f"t{i}" for i in range(300)])
    page = open_page(browser, tmp_path, fig)
    box = page.locator("input.cf-number")
    assert box.get_attribute("aria-label"), "the top-k box has no label"
    box.fill("7")
    assert page.input_value('input[name="top_k"]') == "7"
    assert page.get_attribute(".cf-readout", "data-kept") == "7"
    page.click('button[data-action="reset"]')
    assert box.input_value() == "0" and page.get_attribute(".cf-readout", "data-kept") == "300"


def test_no_script_note_speaks_one_language():
    """The note a page without scripts shows is in the edition's language: English for a figure made in the English
    edition (no Chinese text left in an English output), Chinese for one made in the Chinese edition."""
    logits = torch.linspace(2, -2, 12, dtype=torch.float64)
    labels = [f"t{i}" for i in range(12)]
    for lang, present, absent in (("en", "Run this cell", "运行"), (None, "Run this cell", "运行"),
                                  ("zh", "运行此单元格", "Run this cell")):
        note = sampling_explorer(logits, None, "k", exact=12, shown=5, labels=labels, lang=lang).html
        note = note[note.index('<p class="cf-note"'):note.index("<figure>")]
        assert present in note and absent not in note, f"lang={lang!r}: the note reads {note!r}"
