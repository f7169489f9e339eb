"""The course's website, built once from the committed notebooks and read in a real browser.

`python course.py site` builds it (site/build_site.py). Here it is built into a temporary folder, served on
127.0.0.1 and opened in Debian's Chromium driven by Playwright (never a browser Playwright downloads). Every page
of both editions is visited once; the tests below check what those visits saw: no console error, no request
that leaves the site (no CDN), every internal link and anchor, every image decoded, not blank and with alt
text, math rendered, the language switch, search in both languages (compound Chinese terms too), the theme's words
in Chinese on Chinese pages, axe-core's accessibility rules at desktop and phone width, code that fits at 1366 px,
figures that fit 360 px, check() cells shown as a place to check your own code (never as a failure), the
repository link, and the three figures you can turn without a kernel.

Without Chromium, Playwright, the site extra or site/node_modules (`npm ci` in site/) the tests skip and say
which; under CI=true a skip is a failure.
"""
from __future__ import annotations

import functools
import hashlib
import http.server
import importlib.util
import json
import os
import re
import sys
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

import pytest
from browser import drag, find_browser, launch_args, unavailable

from lesson_utils import output_text

REPO = Path(__file__).resolve().parent.parent
SITE = REPO / "site"
AXE = SITE / "node_modules" / "axe-core" / "axe.min.js"
CHAPTERS = sorted(p.stem for p in (REPO / "notebooks").glob("*.ipynb"))
EDITIONS = {"en": "", "zh": "zh/"}  # each edition's folder in the site
PAGES = [prefix + name for prefix in EDITIONS.values() for name in ("index", "search", "genindex", *CHAPTERS)]
CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")
DESKTOP, PHONE = {"width": 1366, "height": 900}, {"width": 360, "height": 740}
# axe-core (seconds per chapter) reads every page of both editions at both widths, without reading the same thing
# twice: a Chinese chapter's code cells are the English chapter's (tests/test_translations.py), so there axe leaves
# them out. At phone width every page gets the rule a narrower layout can break (a region that scrolls sideways must
# be reachable by keyboard); the pages that hold the theme's phone header and the figures get every rule.
NO_CODE = {"exclude": [["div.cell_input"]]}
TRANSLATED = {f"zh/{name}" for name in CHAPTERS}
LAYOUT_RULES = ["scrollable-region-focusable"]
PHONE_AXE_PAGES = {prefix + name for prefix in ("", "zh/")
                   for name in ("index", "search", "02a_lm_head", "04a_softmax_sampling", "05b_pca_anisotropy_head")}
# Code lines too long for the column at 1366 px (about 130 characters fit): each is named by its start, and a
# code cell that scrolls sideways must hold one of them. Everything else fits without a scroll bar.
LONG_LINES = ('print(f"largest float32: {torch.finfo(torch.float32).max:.4e}',
              'print(f"smallest expected count {expected.min():.0f}; chi-square',
              'rows = {k: int(torch.linalg.vector_norm(m.grad, ord=0, dim=1)')
REPO_URL = "https://github.com/example/llm-course"  # the site is built with COURSE_REPO_URL set to this
VERDICT = re.compile(r"not attempted|\b\d+/\d+ passed in\b")  # what check()'s saved stub verdicts say
BUILD_LIMIT_S = 120  # the budget for building both editions on 2 cores; held here as CPU time, which a busy
# machine does not inflate the way it does wall time (both editions ran in 10 s, 16 s of CPU, on an idle CI machine)
# Where each interactive figure lives (the notebooks' text/html outputs, with their own script).
FIGURES = {"pca-3d": "05b_pca_anisotropy_head", "sampling-explorer": "04a_softmax_sampling",
           "lm-head-scan": "02a_lm_head"}
# Compound terms of notebooks/zh/TERMS.md, each with the chapter that is about it, for the Chinese search; the last
# two are not in the term list, so only the query's split into the index's own words finds them (site/zh_search.py).
ZH_TERMS = {"权重共享": "03a_weight_tying", "嵌入查表": "01a_embedding_lookup", "交叉熵": "07_head_at_scale",
            "核采样": "04a_softmax_sampling", "贪心解码": "04b_decoding", "余弦相似度": "05a_neighbours_analogies",
            "残差流": "06a_logit_lens", "最终归一化层": "06a_logit_lens", "解释方差": "05b_pca_anisotropy_head",
            "词表并行": "07_head_at_scale", "基底漂移": "06a_logit_lens", "反嵌入": "01b_embedding_training",
            "束搜索": "04b_decoding", "余弦近邻": "05a_neighbours_analogies"}


def _unavailable(reason: str):
    unavailable(f"the website tests cannot run: {reason}")


def _missing() -> str | None:
    """Why the tests cannot run here, or None."""
    for module, package in (("playwright", "playwright"), ("sphinx", "sphinx"), ("myst_nb", "myst-nb"),
                            ("furo", "furo")):
        if importlib.util.find_spec(module) is None:
            return f"{package} is not installed: pip install -c constraints.txt -e \".[site]\" (python course.py setup does)"
    if find_browser() is None:
        return "no Chromium installed to read the site in: apt-get install -y chromium (or set COURSE_BROWSER)"
    try:
        _build_site().npm_packages()  # MathJax and axe-core, installed by `npm ci` in site/ if missing
    except _build_site().SiteError as error:
        return str(error)
    return None


def _build_site():
    """site/build_site.py as a module (site/ is not a package: `site` is a standard module's name)."""
    spec = importlib.util.spec_from_file_location("build_site", SITE / "build_site.py")
    module = sys.modules.get("build_site")
    if module is None:
        module = importlib.util.module_from_spec(spec)
        sys.modules["build_site"] = module
        spec.loader.exec_module(module)
    return module


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def test_a_file_given_as_the_sites_folder_is_refused_and_nothing_is_staged_beside_it(tmp_path, monkeypatch):
    """OUT's neighbours are the user's: the build's scratch (whose src/ it empties) stays in site/_build/work."""
    build_site = _build_site()
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    with pytest.raises(build_site.SiteError, match="is a file: give the folder"):
        build_site.build(a_file)
    staged = []

    class Staged(Exception):
        pass

    def stage(lang, work):
        staged.append(work)
        raise Staged  # where the build would start: enough to see where it stages

    monkeypatch.setattr(build_site, "npm_packages", lambda: None)
    monkeypatch.setattr(build_site, "stage", stage)
    with pytest.raises(Staged):
        build_site.build(tmp_path / "www")
    assert staged == [SITE / "_build" / "work"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "www"]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, float, float]:
    """The site, built once for this module: (its folder, the build's wall time and CPU time in seconds)."""
    reason = _missing()
    if reason:
        _unavailable(reason)
    work = tmp_path_factory.mktemp("site")
    start, cpu = time.perf_counter(), _cpu_seconds()
    saved = os.environ.get("COURSE_REPO_URL")
    os.environ["COURSE_REPO_URL"] = REPO_URL
    try:
        out = _build_site().build(work / "html", work / "work")
    finally:
        os.environ.pop("COURSE_REPO_URL")
        if saved is not None:
            os.environ["COURSE_REPO_URL"] = saved
    return out, time.perf_counter() - start, _cpu_seconds() - cpu


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the two Sphinx builds)."""
    used = os.times()
    return used.user + used.system + used.children_user + used.children_system


@pytest.fixture(scope="module")
def server(built) -> str:
    """The site served on 127.0.0.1 (a free port): its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(built[0]))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser(server, tmp_path_factory):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=find_browser(), args=launch_args())
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport=DESKTOP)
    yield context.new_page()
    context.close()


# What one visit of a page reads, in the page: math, images (decoded, blank or not, alt text), links, anchors,
# the language switch, the figures.
READ_PAGE = """async () => {
  if (window.MathJax && MathJax.startup) { await MathJax.startup.promise; }
  const images = [];
  for (const img of document.querySelectorAll('img')) {
    if (!img.complete) { await new Promise(r => { img.onload = img.onerror = r; }); }
    let distinct = 0;
    if (img.naturalWidth > 0) {
      const c = document.createElement('canvas');
      c.width = Math.min(img.naturalWidth, 400); c.height = Math.min(img.naturalHeight, 400);
      const g = c.getContext('2d'); g.drawImage(img, 0, 0, c.width, c.height);
      const px = g.getImageData(0, 0, c.width, c.height).data; const seen = new Set();
      for (let i = 0; i < px.length && seen.size < 3; i += 4 * 7) { seen.add(px.slice(i, i + 4).join()); }
      distinct = seen.size;
    }
    images.push({src: img.getAttribute('src'), width: img.naturalWidth, distinct, alt: img.getAttribute('alt')});
  }
  const article = document.querySelector('article') || document.body;
  return {
    images,
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    ids: [...document.querySelectorAll('[id]')].map(e => e.id).concat(
      [...document.querySelectorAll('a[name]')].map(a => a.name)),
    math: document.querySelectorAll('.math').length,
    mathUnrendered: [...document.querySelectorAll('.math')].filter(m => !m.querySelector('mjx-container')).length,
    rawDollars: article.innerText.includes('$$'),
    bareSectionIds: [...document.querySelectorAll('article section[id]')].map(s => s.id)
      .filter(id => /^id\\d+$/.test(id)),
    switchHref: (document.querySelector('a[data-course-lang-switch]') || {}).href || null,
    repoHref: (document.querySelector('a[data-course-repo]') || {}).href || null,
    colabHref: (document.querySelector('a[data-course-colab]') || {}).href || null,
    scrolling: [...document.querySelectorAll('div.cell_input pre')].filter(p => p.scrollWidth > p.clientWidth + 1)
      .map(p => p.innerText.split('\\n').reduce((a, b) => b.length > a.length ? b : a, '').trim()),
    checkNotes: document.querySelectorAll('div.cell .course-check').length,
    checkTables: document.querySelectorAll('div.cell:has(.course-check) table').length,
    checkText: [...document.querySelectorAll('div.cell:has(.course-check)')].map(c => c.innerText).join('\\n'),
    text: article.innerText,
    prose: (() => {  // the prose: no code, outputs, formulas, interactive figures or a term list's English column
      const hidden = [...article.querySelectorAll('div.cell, pre, code, .math, .course-figure')];
      for (const table of article.querySelectorAll('table')) {
        const column = [...table.querySelectorAll('th')].findIndex(th => th.textContent.trim() === 'English');
        if (column >= 0) { hidden.push(...table.querySelectorAll(`td:nth-child(${column + 1})`)); }
      }
      const display = hidden.map(e => e.style.display);
      hidden.forEach(e => { e.style.display = 'none'; });
      const text = article.innerText;
      hidden.forEach((e, i) => { e.style.display = display[i]; });
      return text;
    })(),
    lang: document.documentElement.lang,
    figures: [...document.querySelectorAll('.course-figure')].map(f => ({
      kind: f.dataset.figure,
      named: Boolean((f.getAttribute('aria-label') || '').trim() || f.getAttribute('aria-labelledby')
        || (f.querySelector('figcaption') || {}).textContent
        || [...f.querySelectorAll('canvas,svg')].every(c => (c.getAttribute('aria-label') || '').trim()))})),
  };
}"""

AXE_RUN = """async ([context, rules]) => {
  const result = await axe.run(context || document, rules ? {resultTypes: ['violations'], runOnly: rules}
                                                          : {resultTypes: ['violations']});
  return result.violations.filter(v => ['serious', 'critical'].includes(v.impact))
    .map(v => `${v.id} (${v.impact}): ${v.help}; e.g. ${v.nodes[0].target.join(' ')}`);
}"""


# At phone width: each figure's box, and anything inside it wider than the figure (which would hide part of it).
PHONE_FIT = """() => {
  const width = document.documentElement.clientWidth;
  return [...document.querySelectorAll('.course-figure')].map(f => {
    const box = f.getBoundingClientRect();
    const clipped = [...f.querySelectorAll('.cf-scan, .cf-bars, .cf-controls, canvas')]
      .filter(e => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > box.right + 1)
      .map(e => e.className || e.tagName);
    return {kind: f.dataset.figure, left: box.left, right: box.right, width, clipped};
  });
}"""


@pytest.fixture(scope="module")
def visits(browser, server) -> dict[str, dict]:
    """Every page of both editions, visited once at 1366 px and then resized to 360 px: what READ_PAGE saw, plus
    console errors, requests that left the site or failed, axe-core's serious and critical violations at both
    widths, and how the figures fit the phone's width."""
    seen = {}
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    for name in PAGES:
        problems, outside = [], []
        page.on("console", lambda m, p=problems: p.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e, p=problems: p.append(f"script error: {e}"))
        page.on("requestfailed", lambda r, p=problems: p.append(f"request failed: {r.url}"))
        page.on("response", lambda r, p=problems: p.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
        page.on("request", lambda r, o=outside: o.append(r.url) if not r.url.startswith((server, "data:")) else None)
        page.set_viewport_size(DESKTOP)
        page.goto(server + name + ".html", wait_until="load")
        record = page.evaluate(READ_PAGE)
        page.add_script_tag(path=str(AXE))
        record["axe"] = page.evaluate(AXE_RUN, [NO_CODE if name in TRANSLATED else None, None])
        page.set_viewport_size(PHONE)  # the same visit on a phone: the figures fit, and axe again
        page.wait_for_timeout(100)
        record["phone"] = page.evaluate(PHONE_FIT)
        phone = page.evaluate(AXE_RUN, [NO_CODE, None] if name in PHONE_AXE_PAGES else [None, LAYOUT_RULES])
        record["axe"] += [f"at {PHONE['width']} px: {v}" for v in phone]
        page.wait_for_timeout(50)  # late console messages
        record["problems"], record["outside"] = problems, outside
        seen[name] = record
        page.close()  # a fresh page for each visit, with its own listeners
        page = context.new_page()
    context.close()
    return seen


def test_both_editions_build_within_the_budget(built):
    out, seconds, cpu = built
    assert cpu <= BUILD_LIMIT_S, (f"building both editions took {cpu:.0f} s of CPU ({seconds:.0f} s); the budget is "
                                  f"{BUILD_LIMIT_S} s on 2 cores")
    for prefix in EDITIONS.values():
        for name in ("index", *CHAPTERS):
            assert (out / f"{prefix}{name}.html").exists(), f"the site has no {prefix}{name}.html"


def test_each_home_page_lists_every_chapter(visits, server):
    for prefix in EDITIONS.values():
        links = set(visits[prefix + "index"]["links"])
        missing = [name for name in CHAPTERS if f"{server}{prefix}{name}.html" not in links]
        assert not missing, f"{prefix}index.html does not link these chapters: {missing}"


def test_every_page_loads_without_console_errors(visits):
    bad = {name: v["problems"] for name, v in visits.items() if v["problems"]}
    assert not bad, f"pages with console errors, script errors or failed requests: {bad}"


def test_nothing_is_loaded_from_outside_the_site(visits):
    """No CDN, no web fonts, no analytics: the site works offline and behind a slow network."""
    bad = {name: v["outside"] for name, v in visits.items() if v["outside"]}
    assert not bad, f"pages that load something from outside the site: {bad}"


def test_every_internal_link_and_anchor_resolves(visits, built, server):
    out, broken = built[0], []
    ids = {server + name + ".html": set(v["ids"]) for name, v in visits.items()}
    for name, v in visits.items():
        for href in v["links"]:
            if not href.startswith(server):
                continue
            url, fragment = urldefrag(href)
            path = unquote(urlsplit(url).path).lstrip("/")
            target = out / path if path else out / "index.html"
            if target.is_dir():
                target, url = target / "index.html", url.rstrip("/") + "/index.html"
            if not target.is_file():
                broken.append(f"{name}: {href} (no such file)")
            elif fragment and url in ids and unquote(fragment) not in ids[url]:
                broken.append(f"{name}: {href} (no such anchor)")
    assert not broken, "broken links:\n" + "\n".join(broken[:30])


def test_every_image_decodes_is_not_blank_and_has_alt_text(visits):
    bad = []
    for name, v in visits.items():
        for img in v["images"]:
            alt = (img["alt"] or "").strip()
            if img["width"] == 0:
                bad.append(f"{name}: {img['src']} does not decode")
            elif img["distinct"] < 2:
                bad.append(f"{name}: {img['src']} is blank (one colour)")
            if len(alt) < 8 or alt.endswith((".png", ".svg", ".jpg")) or "/" in alt:
                bad.append(f"{name}: {img['src']} has no meaningful alt text ({alt!r})")
    assert not bad, "\n".join(bad[:30])
    assert sum(len(v["images"]) for v in visits.values()) > 50, "the chapters' figures are missing from the site"


def test_math_is_rendered(visits):
    assert not [n for n, v in visits.items() if v["rawDollars"]], "raw $$ left on a page: math not parsed"
    unrendered = {n: v["mathUnrendered"] for n, v in visits.items() if v["mathUnrendered"]}
    assert not unrendered, f"math that MathJax did not render (elements per page): {unrendered}"
    assert sum(v["math"] for v in visits.values()) > 20, "no math found: did dollarmath stop parsing $...$?"


def test_sections_have_readable_anchors(visits):
    """A Chinese heading gets an anchor from its words (#1-从基本原理看-softmax), not a bare #id1."""
    bad = {name: v["bareSectionIds"] for name, v in visits.items() if v["bareSectionIds"]}
    assert not bad, f"sections anchored by a bare idN: {bad}"


def test_every_page_switches_to_the_same_page_in_the_other_language(visits, server):
    for name, v in visits.items():
        other = name[3:] if name.startswith("zh/") else "zh/" + name
        assert v["switchHref"] == server + other + ".html", f"{name}: the language switch goes to {v['switchHref']}"
        assert v["lang"] == ("zh-CN" if name.startswith("zh/") else "en"), f"{name}: <html lang={v['lang']!r}>"


def test_the_language_switch_lands_on_the_same_chapter(page, server):
    page.goto(server + "04a_softmax_sampling.html")
    page.click("a[data-course-lang-switch]")
    page.wait_for_load_state()
    assert page.url == server + "zh/04a_softmax_sampling.html"
    assert "softmax" in page.locator("h1").first.inner_text()
    page.click("a[data-course-lang-switch]")
    page.wait_for_load_state()
    assert page.url == server + "04a_softmax_sampling.html"


@pytest.mark.parametrize("prefix, term", [("", "temperature"), ("zh/", "温度")], ids=["en", "zh"])
def test_search_finds_the_chapter(page, server, prefix, term):
    page.goto(f"{server}{prefix}search.html?q={term}")
    results = page.locator("ul.search li a")
    results.first.wait_for(timeout=15_000)
    found = [results.nth(i).get_attribute("href") for i in range(results.count())]
    assert any("04a_softmax_sampling" in href for href in found), f"searching {term!r} found {found}"
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    # Sphinx lists a result first and fetches its summary afterwards: wait for one rather than race it
    context = page.locator("ul.search li p.context")
    try:
        context.first.wait_for(timeout=15_000)
    except PlaywrightTimeout:
        pytest.fail("search results without a summary")
    summaries = context.all_inner_texts()
    for boilerplate in ("Download this notebook", "下载本章", "\\(", "\\mathrm", "Run this cell to interact"):
        assert not [t for t in summaries if boilerplate in t], f"a search summary shows {boilerplate!r}: {summaries}"
    switch = unquote(page.locator("a[data-course-lang-switch]").get_attribute("href"))
    assert switch.endswith(f"search.html?q={term}"), f"the language switch drops the search words: {switch}"


SEARCH_DONE = "() => ((document.querySelector('#search-results p.search-summary') || {}).innerText || '').trim()"
SEARCH_SPLIT = """t => splitQuery(t).map(w => [w, Object.hasOwn(Search._index.terms, w)
                                          || Object.hasOwn(Search._index.titleterms, w)])"""


def test_chinese_search_finds_compound_terms(page, server, built):
    """The index is split into words by jieba, and so is the query (by the index's own words): 核采样 is found."""
    listed = (REPO / "notebooks" / "zh" / "TERMS.md").read_text(encoding="utf-8")
    assert sum(term in listed for term in ZH_TERMS) >= 10, "fewer than ten of ZH_TERMS are in notebooks/zh/TERMS.md"
    missing = []
    for term, chapter in ZH_TERMS.items():
        on_page = (built[0] / "zh" / f"{chapter}.html").read_text(encoding="utf-8")
        assert term in on_page, f"{term} is not on zh/{chapter}.html: ZH_TERMS names the wrong chapter"
        page.goto(f"{server}zh/search.html?q={term}")
        status = page.wait_for_function(SEARCH_DONE, timeout=15_000).json_value()
        links = page.locator("ul.search li a").evaluate_all("links => links.map(a => a.href)")
        found = [re.split(r"[?#]", href)[0] for href in links]
        if f"{server}zh/{chapter}.html" not in found:
            missing.append(f"{term}: split into {page.evaluate(SEARCH_SPLIT, term)} ([word, in the index]), "
                           f"found {[f.rsplit('/', 1)[-1] for f in found]}, not {chapter} ({status})")
        assert "Search" not in status and re.search(r"[\u4e00-\u9fff]", status), f"the search says {status!r}"
    assert not missing, "the Chinese search misses chapters:\n" + "\n".join(missing)


def _theme_strings() -> set[str]:
    """The English words of the Furo theme's templates: what they pass through gettext (a `{{ variable }}` cut out),
    their fixed labels and icon titles, and the one fixed word of the footer ("@pradyunsg's Furo")."""
    import furo

    found = {"@pradyunsg</a>'s"}
    for template in (Path(furo.__file__).parent / "theme" / "furo").rglob("*.html"):
        text = template.read_text(encoding="utf-8")
        messages = re.findall(r"""_\(\s*["']([^"']+)["']\s*\)""", text)
        messages += re.findall(r"{%-?\s*trans\b[^%]*%}(.*?){%-?\s*endtrans", text, re.S)
        messages += re.findall(r'aria-label="([^"{]+)"', text) + re.findall(r"<title>([^<{]+)</title>", text)
        for message in messages:
            for part in re.split(r"{{.*?}}|%\(\w+\)s", message):
                part = " ".join(part.split())
                if set(re.findall(r"[A-Za-z]{2,}", re.sub(r"<[^>]*>?", " ", part))) - {"Sphinx", "Furo"}:
                    found.add(part)
    return found


def test_the_theme_speaks_chinese_on_chinese_pages(built):
    """Furo ships no translations: its words come from site/locales/zh_CN (gettext) and course_site.THEME_ZH."""
    strings = _theme_strings()
    assert {"On this page", "Back to top", "Next", "Previous", "Search"} <= strings, "Furo's templates changed"
    english = {}
    for path in sorted((built[0] / "zh").glob("*.html")):
        html = " ".join(re.sub(r"<script\b.*?</script>", "", path.read_text(encoding="utf-8"), flags=re.S).split())
        for text in strings:
            word = re.escape(text)
            if re.search(rf"[>\"] ?{word} ?[<\"]" if re.fullmatch(r"[\w ./]+", text) else word, html):
                english.setdefault(path.name, []).append(text)
    assert not english, f"the theme's English words on Chinese pages: {english}"
    assert "On this page" in (built[0] / "04a_softmax_sampling.html").read_text(encoding="utf-8")


def test_a_chinese_page_has_no_english_sentence(visits):
    """Each zh page's prose as a reader sees it (code, formulas, interactive figures and the English column of a
    term list aside): no line of three English words or more without Chinese. The saved outputs on these pages are
    the notebooks', which tests/test_output_text.py checks line by line."""
    english = {}
    for name, record in visits.items():
        if not name.startswith("zh/"):
            continue
        for line in record["prose"].splitlines():
            words = re.sub(r"\w*_\w*|(?<=\w)-(?=\w)", "", output_text.QUOTED.sub("", line))  # no identifiers;
            if len(output_text.WORD.findall(words)) >= 3 and not CJK.search(line):  # log-sum-exp is one term
                english.setdefault(name, []).append(line.strip()[:100])
    assert not english, f"English lines on Chinese pages: {english}"


def test_no_serious_or_critical_accessibility_violation_at_desktop_or_phone_width(visits):
    bad = {name: v["axe"] for name, v in visits.items() if v["axe"]}
    assert not bad, f"axe-core's serious and critical violations: {bad}"


def test_every_chapter_offers_its_notebook_and_the_commands(visits, built, server):
    out = built[0]
    for prefix, folder in (("", "notebooks"), ("zh/", "notebooks/zh")):
        for name in CHAPTERS:
            link = f"{server}{prefix}notebooks/{name}.ipynb"
            assert link in visits[prefix + name]["links"], f"{prefix}{name}: no 'download this notebook' link"
            served = (out / prefix / "notebooks" / f"{name}.ipynb").read_bytes()
            committed = (REPO / folder / f"{name}.ipynb").read_bytes()
            assert hashlib.sha256(served).digest() == hashlib.sha256(committed).digest(), f"{link} is not the committed notebook"
            html = (out / prefix / f"{name}.html").read_text(encoding="utf-8")
            assert f"python course.py lab {folder}/{name}.ipynb" in html, f"{prefix}{name}: no command to run it"


def test_every_figure_has_a_name(visits):
    unnamed = [f"{n}: {f['kind']}" for n, v in visits.items() for f in v["figures"] if not f["named"]]
    assert not unnamed, f"interactive figures with no text alternative (aria-label or figcaption): {unnamed}"


def _figure(page, server, prefix: str, kind: str):
    page.goto(f"{server}{prefix}{FIGURES[kind]}.html")
    figure = page.locator(f'.course-figure[data-figure="{kind}"]')
    assert figure.count() == 1, (f"{prefix}{FIGURES[kind]}.html has {figure.count()} figures data-figure={kind!r}; "
                                 f"the notebook needs one text/html output <div class=\"course-figure\" "
                                 f"data-figure=\"{kind}\"> with its own script")
    figure.scroll_into_view_if_needed()
    return figure


@pytest.mark.parametrize("prefix", EDITIONS.values(), ids=EDITIONS.keys())
def test_dragging_the_3d_pca_rotates_it(page, server, prefix):
    canvas = _figure(page, server, prefix, "pca-3d").locator("canvas").first
    before = canvas.screenshot()
    drag(page, canvas, 80, 30)
    page.wait_for_timeout(100)
    dragged = canvas.screenshot()
    assert dragged != before, "dragging the 3-D figure did not change what it shows"
    canvas.focus()
    page.keyboard.press("ArrowLeft")
    page.wait_for_timeout(100)
    assert canvas.screenshot() != dragged, "the arrow keys do not rotate the 3-D figure"


OVERPRINT = """f => { const ls = f.courseLabels(), bad = [];
  ls.forEach((a, i) => ls.slice(i + 1).forEach(b => {
    if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h) bad.push(a.word + ' / ' + b.word); }));
  return bad; }"""


@pytest.mark.parametrize("prefix", EDITIONS.values(), ids=EDITIONS.keys())
def test_the_3d_word_map_labels_never_overprint_and_zoom(page, server, prefix):
    figure = _figure(page, server, prefix, "pca-3d")
    canvas = figure.locator("canvas").first
    root = figure.element_handle()
    words = lambda: [label["word"] for label in root.evaluate("f => f.courseLabels()")]
    first = words()
    assert 3 <= len(first) < len(root.evaluate("f => f.coursePoints()")), f"labels shown: {first}"
    assert not root.evaluate(OVERPRINT), f"labels that overprint: {root.evaluate(OVERPRINT)}"
    box, size = canvas.bounding_box(), root.evaluate("f => [f.querySelector('canvas').width, f.querySelector('canvas').height]")
    unlabelled = [p for p in root.evaluate("f => f.coursePoints()")
                  if root.evaluate(f"f => JSON.parse(f.querySelector('.cf-data').textContent).words[{p['i']}]") not in first]
    target = unlabelled[0]
    page.mouse.move(box["x"] + target["x"] * box["width"] / size[0], box["y"] + target["y"] * box["height"] / size[1])
    word = root.evaluate(f"f => JSON.parse(f.querySelector('.cf-data').textContent).words[{target['i']}]")
    assert word in words(), f"pointing at {word!r} did not show its label"
    assert not root.evaluate(OVERPRINT), f"labels that overprint: {root.evaluate(OVERPRINT)}"
    before = canvas.screenshot()
    page.mouse.wheel(0, -400)
    page.wait_for_timeout(100)
    zoomed = float(figure.get_attribute("data-zoom"))
    assert zoomed > 1 and canvas.screenshot() != before, "the wheel did not zoom the 3-D figure"
    canvas.focus()
    page.keyboard.press("+")
    assert float(figure.get_attribute("data-zoom")) > zoomed, "the + key did not zoom in"
    page.keyboard.press("-")
    page.keyboard.press("-")
    assert float(figure.get_attribute("data-zoom")) < zoomed, "the - key did not zoom out"
    assert not root.evaluate(OVERPRINT), f"labels that overprint after zooming: {root.evaluate(OVERPRINT)}"


@pytest.mark.parametrize("prefix", EDITIONS.values(), ids=EDITIONS.keys())
def test_the_temperature_control_changes_the_bars(page, server, prefix):
    figure = _figure(page, server, prefix, "sampling-explorer")
    for control in ("temperature", "top_k", "top_p", "min_p"):
        assert figure.locator(f'input[type="range"][name="{control}"]').count() == 1, f"no {control} slider"
    widths = "els => els.map(e => e.getBoundingClientRect().width)"
    bars = figure.locator("[data-bar]")
    before = bars.evaluate_all(widths)
    assert len(before) >= 2, "the explorer shows no bars"
    slider = figure.locator('input[name="temperature"]')
    high = slider.get_attribute("max") or "2"
    slider.fill(high)
    page.wait_for_timeout(100)
    after = bars.evaluate_all(widths)
    assert after != before, f"moving the temperature to {high} left the bars as they were: {before}"


@pytest.mark.parametrize("prefix", EDITIONS.values(), ids=EDITIONS.keys())
def test_the_lm_head_scan_plays(page, server, prefix):
    figure = _figure(page, server, prefix, "lm-head-scan")
    before = figure.screenshot()
    figure.locator("button").first.click()
    page.wait_for_timeout(600)
    assert figure.screenshot() != before, "pressing play did not change the LM-head scan"


def test_code_fits_the_column_at_desktop_width(visits):
    """No code line needs a sideways scroll at 1366 px, except the few named in LONG_LINES."""
    bad = {name: [line for line in v["scrolling"] if not line.startswith(LONG_LINES)] for name, v in visits.items()}
    bad = {name: lines for name, lines in bad.items() if lines}
    assert not bad, f"code cells that scroll sideways at {DESKTOP['width']} px (longest line of each): {bad}"
    scrolling = sum(len(v["scrolling"]) for v in visits.values())
    assert scrolling <= 2 * len(LONG_LINES), f"{scrolling} code cells scroll; LONG_LINES names {len(LONG_LINES)}"


def test_every_figure_fits_a_phone(visits):
    bad = [f"{name}: {f}" for name, v in visits.items() for f in v["phone"]
           if f["left"] < 0 or f["right"] > f["width"] or f["clipped"]]
    assert not bad, f"figures wider than a {PHONE['width']} px phone, or with a part cut off:\n" + "\n".join(bad)
    assert sum(len(v["phone"]) for v in visits.values()) >= 2 * len(FIGURES), "the interactive figures are missing"


def _check_cells(folder: Path) -> int:
    return sum(bool(re.search(r"^check\(", "".join(c["source"]), re.M))
               for nb in folder.glob("*.ipynb") for c in json.loads(nb.read_text(encoding="utf-8"))["cells"]
               if c["cell_type"] == "code")


def test_check_cells_are_a_place_to_check_your_code_not_failures(visits):
    """The notebooks save check()'s verdict on the stubs ("not attempted", ✗); the site shows a note instead, and
    no nbval marker."""
    for prefix, folder in (("", REPO / "notebooks"), ("zh/", REPO / "notebooks" / "zh")):
        chapters = {name: visits[prefix + name] for name in CHAPTERS}
        notes = sum(v["checkNotes"] for v in chapters.values())
        cells = _check_cells(folder)
        assert notes == cells > 30, f"{prefix or 'en'}: {notes} check() notes for {cells} check() cells"
        for name, v in chapters.items():
            assert not v["checkTables"], f"{prefix}{name}: a check() cell still shows its saved table"
            verdict = VERDICT.search(v["checkText"])
            assert verdict is None, f"{prefix}{name} shows a saved verdict: {verdict.group(0)!r}"
            assert "NBVAL" not in v["text"], f"{prefix}{name} shows an nbval marker"
    note = visits["04a_softmax_sampling"]["checkText"]
    assert "exercises/ch04_sampling.py" in note and "cases it checks" in note


def test_every_page_links_the_repository(visits, built):
    bad = [name for name, v in visits.items() if v["repoHref"] != REPO_URL]
    assert not bad, f"pages without the link to the course's repository ({REPO_URL}): {bad}"
    for prefix in EDITIONS.values():
        html = (built[0] / f"{prefix}02a_lm_head.html").read_text(encoding="utf-8")
        assert f"git clone {REPO_URL} llm-course" in html, f"{prefix}02a_lm_head: git clone without the repository"


def test_every_chapter_opens_in_colab_without_showing_the_colab_cell(visits):
    """Each chapter page of both editions links its own notebook on Colab; the Colab set-up cell (tagged
    remove-cell) is not on the page."""
    for prefix, folder in (("", "notebooks/"), ("zh/", "notebooks/zh/")):
        for name in CHAPTERS:
            v = visits[prefix + name]
            want = f"https://colab.research.google.com/github/example/llm-course/blob/main/{folder}{name}.ipynb"
            assert v["colabHref"] == want, f"{prefix}{name}: Colab link {v['colabHref']!r}, want {want}"
            assert "Only on Google Colab" not in v["text"] and "lesson_utils.colab" not in v["text"], prefix + name


def test_colab_links_only_for_a_github_repository():
    spec = importlib.util.spec_from_file_location("course_site_conf_colab", SITE / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    assert conf._colab_base("https://github.com/o/n") == "https://colab.research.google.com/github/o/n/blob/main/"
    assert conf._colab_base("https://gitlab.com/o/n") == conf._colab_base("") == ""


def test_the_repository_address_comes_from_the_environment_or_the_clone(monkeypatch):
    """COURSE_REPO_URL wins; else the clone's `origin` remote as https; else none (pages then say so)."""
    spec = importlib.util.spec_from_file_location("course_site_conf", SITE / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    monkeypatch.setenv("COURSE_SITE_LANG", "en")
    spec.loader.exec_module(conf)
    monkeypatch.setenv("COURSE_REPO_URL", "https://github.com/owner/course.git/")
    assert conf._repo_url() == "https://github.com/owner/course"
    monkeypatch.delenv("COURSE_REPO_URL")
    for remote, url in (("git@github.com:owner/course.git\n", "https://github.com/owner/course"),
                        ("https://gitlab.com/owner/course\n", "https://gitlab.com/owner/course"),
                        ("/srv/git/course.git\n", ""), ("", "")):
        monkeypatch.setattr(conf.subprocess, "run", lambda *a, out=remote, **k: type("Done", (), {"stdout": out}))
        assert conf._repo_url() == url, remote
    html = (SITE / "_templates" / "page.html").read_text(encoding="utf-8")
    assert "no COURSE_REPO_URL" in html, "a build without the address must say why the page has no link"
