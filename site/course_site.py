"""A small Sphinx extension for the course's website.

- Every chapter page gets a flag for the template (the download link and the commands that run it).
- Every figure a notebook output shows gets alt text: the cell's own `mystnb.image.alt` metadata if it has one
  (myst-nb reads it), else which figure of which section it is (a code comment says what the code does, not what
  the picture shows, so it is not used).
- Chapter titles read alike in each edition ("Chapter 00: ...", a capital after the colon; "第 00 章：..."), whatever
  small differences the notebooks' first headings have.
- The notebooks themselves are copied into the site (notebooks/NAME.ipynb), so "download this notebook" works.
- A `check("name")` cell's saved output (the stub's verdict: "not attempted", a row of ✗) is replaced by a note
  that says what the cell does in JupyterLab and lists the cases it checks; a saved verdict is never shown.
- The test markers in code cells (nbval's `# NBVAL_...` comment lines) are left out of what the reader sees.
- A section whose title docutils cannot turn into an id (a Chinese one becomes `id1`) is anchored by its MyST slug
  (`#1-从基本原理看-softmax`); the old id stays as a second anchor, so no link breaks.
- The Chinese site's search splits the query into the index's words (zh_search.py), and its theme speaks Chinese:
  Furo ships no translations, so its gettext words are in locales/zh_CN/LC_MESSAGES/sphinx.po and the words it
  writes without gettext (labels, icon titles) are replaced here (THEME_ZH, through _templates/page.html).
"""
from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

from docutils import nodes
from markupsafe import Markup
from sphinx.application import Sphinx
from zh_search import ChineseSearch

REPO = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^[ \t]*#[ \t]*NBVAL_\w+[^\n]*(\n|$)", re.M)  # a line that is only an nbval marker
CHECK_CALL = re.compile(r"""^check\(\s*["']([\w.]+)["']""", re.M)
CASE_TITLE = re.compile(r"""<span title='([^']*)'""")
CHECK_NOTE = {
    "en": ("Check your own code here.", "In JupyterLab, running this cell grades your {name} in {file} (the "
           "judge runs it in a sandbox) and shows one ✓ or ✗ per case, with the reason for each ✗. The website "
           "shows no verdict: there is no code of yours here to check.", "The {n} cases it checks"),
    "zh": ("在这里检查你自己的代码。", "在 JupyterLab 中运行这个单元格，会评判你在 {file} 中写的 {name}（评测程序在沙箱中运行它），"
           "每个用例显示 ✓ 或 ✗，并说明每个 ✗ 的原因。网页上不显示评判结果：这里没有你的代码可查。", "它检查的 {n} 个用例"),
}
CHAPTER_NAME = {"en": "answers to chapter {name}", "zh": "第 {name} 章的全部作答"}  # check("04"): a whole chapter
FIGURE = {"en": "Figure", "zh": "图"}
IN_SECTION = {"en": "{figure} {n} of the section \u201c{title}\u201d", "zh": "\u201c{title}\u201d一节的{figure} {n}"}


def _lang(app: Sphinx) -> str:
    return "zh" if str(app.config.language).startswith("zh") else "en"


def _exercise_file(name: str) -> str:
    """The exercises/ file that defines `name`, or chapter `name`'s file ("exercises/chNN_x.py"); "" if none."""
    if name.isdigit():
        return next((f"exercises/{p.name}" for p in sorted((REPO / "exercises").glob(f"ch{name}_*.py"))), "")
    for path in sorted((REPO / "exercises").glob("ch*.py")):
        if re.search(rf"^def {re.escape(name)}\(", path.read_text(encoding="utf-8"), re.M):
            return f"exercises/{path.name}"
    return ""


def _check_note(lang: str, name: str, saved: str) -> nodes.container:
    """What a check() cell shows on the site instead of its saved verdict (see the module's docstring)."""
    title, body, cases_title = CHECK_NOTE[lang]
    file = _exercise_file(name)
    cases = [html.unescape(t) for t in CASE_TITLE.findall(saved)]
    parts = re.split(r"(\{name\}|\{file\})", body)
    paragraph = nodes.paragraph("", "", nodes.strong(title, title), nodes.Text(" "))
    for part in parts:
        if part == "{name}" and name.isdigit():
            paragraph += nodes.Text(CHAPTER_NAME[lang].format(name=name))
        elif part == "{name}":
            paragraph += nodes.literal(name, name)
        elif part == "{file}":
            paragraph += nodes.literal(file, file) if file else nodes.Text("exercises/")
        else:
            paragraph += nodes.Text(part)
    note = nodes.container("", paragraph, classes=["course-check"])
    if cases:
        items = "".join(f"<li>{html.escape(c)}</li>" for c in cases)
        summary = html.escape(cases_title.format(n=len(cases)))
        note += nodes.raw("", f"<details><summary>{summary}</summary><ul>{items}</ul></details>", format="html")
    return note


def present_cells(app: Sphinx, doctree: nodes.document) -> None:
    """Hide nbval markers from code cells; show a check() cell as a place to check your code, not as a failure."""
    lang = _lang(app)
    for cell in list(doctree.findall(nodes.container)):
        if cell.get("nb_element") != "cell_code":
            continue
        sources = [b for b in cell.findall(nodes.literal_block)
                   if isinstance(b.parent, nodes.container) and b.parent.get("nb_element") == "cell_code_source"]
        if not sources:
            continue
        code = sources[0].astext()
        shown = MARKER.sub("", code)
        if shown != code:
            sources[0].rawsource = shown
            sources[0][:] = [nodes.Text(shown)]
        call = CHECK_CALL.search(shown)
        outputs = [c for c in cell.children if isinstance(c, nodes.container)
                   and c.get("nb_element") == "cell_code_output"]
        if call is None:
            continue
        saved = "".join(r.astext() for o in outputs for r in o.findall(nodes.raw))
        for output in outputs:
            cell.remove(output)
        cell += nodes.container("", _check_note(lang, call.group(1), saved), classes=["cell_output"],
                                nb_element="cell_code_output")


TITLE_FORMS = {
    "en": [(re.compile(r"^(\d\d) · "), lambda m: f"Chapter {m.group(1)}: "),
           (re.compile(r"^(Chapter \d\d, part \d of \d: )([a-z])"), lambda m: m.group(1) + m.group(2).upper())],
    "zh": [(re.compile(r"^(\d\d) · "), lambda m: f"第 {m.group(1)} 章："),
           (re.compile(r"^(第 \d\d 章) · "), lambda m: m.group(1) + "，")],
}


def uniform_title(app: Sphinx, doctree: nodes.document) -> None:
    """Write a chapter's title in the edition's one form (see the module's docstring)."""
    title = next(iter(doctree.findall(nodes.title)), None)
    if title is None or not title.children or not isinstance(title[0], nodes.Text):
        return
    text = str(title[0])
    for pattern, form in TITLE_FORMS[_lang(app)]:
        text = pattern.sub(form, text)
    title[0] = nodes.Text(text)


def readable_anchors(app: Sphinx, doctree: nodes.document) -> None:
    """Put a section's heading slug first among its ids where docutils gave it a bare `idN` (see the docstring)."""
    for section in doctree.findall(nodes.section):
        ids, slug = section["ids"], section.get("slug")
        if slug and ids and re.fullmatch(r"id\d+", ids[0]) and slug in ids:
            ids.remove(slug)
            ids.insert(0, slug)


def _section_title(node: nodes.Node) -> str:
    parent = node.parent
    while parent is not None and not isinstance(parent, nodes.section):
        parent = parent.parent
    if parent is None or not parent.children or not isinstance(parent[0], nodes.title):
        return ""
    return parent[0].astext()


def add_alt_text(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Give every image without alt text one that says what it shows (see the module's docstring)."""
    lang, counts = _lang(app), {}
    for image in doctree.findall(nodes.image):
        if image.get("alt", "").strip():
            continue
        title = _section_title(image) or app.env.titles[docname].astext()
        counts[title] = counts.get(title, 0) + 1
        image["alt"] = IN_SECTION[lang].format(figure=FIGURE[lang], n=counts[title], title=title)


def page_context(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """course_chapter: whether this page is a chapter notebook (the template then adds its download box)."""
    context["course_chapter"] = pagename in app.env.found_docs and app.env.doc2path(pagename).suffix == ".ipynb"


def copy_notebooks(app: Sphinx, exception: Exception | None) -> None:
    """Put every chapter notebook into the site, next to its page's folder, for the download link."""
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "notebooks"
    target.mkdir(exist_ok=True)
    for notebook in Path(app.srcdir).glob("*.ipynb"):
        shutil.copyfile(notebook, target / notebook.name)


# The theme's words that Furo writes into its templates without gettext (the others: locales/zh_CN/.../sphinx.po),
# each with enough of its markup around it that no text of a chapter can match.
THEME_ZH = {
    'aria-label="Toggle site navigation sidebar"': 'aria-label="显示或隐藏导航栏"',
    'aria-label="Toggle table of contents sidebar"': 'aria-label="显示或隐藏本页目录"',
    'aria-label="Toggle Light / Dark / Auto color theme"': 'aria-label="切换浅色、深色或跟随系统的配色"',
    "<title>Contents</title>": "<title>目录</title>",
    "<title>Menu</title>": "<title>菜单</title>",
    "<title>Expand</title>": "<title>展开</title>",
    "<title>Light mode</title>": "<title>浅色模式</title>",
    "<title>Dark mode</title>": "<title>深色模式</title>",
    "<title>Auto light/dark, in light mode</title>": "<title>跟随系统配色（现为浅色）</title>",
    "<title>Auto light/dark, in dark mode</title>": "<title>跟随系统配色（现为深色）</title>",
    "@pradyunsg</a>'s": "@pradyunsg</a> 的",
}


def theme_zh(html_text: str) -> Markup:
    """The page's markup with the theme's untranslatable words in Chinese (the template filter course_theme_zh)."""
    for english, chinese in THEME_ZH.items():
        html_text = html_text.replace(english, chinese)
    return Markup(html_text)


def add_template_filters(app: Sphinx) -> None:
    """Give the HTML templates the filter course_theme_zh (theme_zh)."""
    if hasattr(app.builder, "templates") and hasattr(app.builder.templates, "environment"):
        app.builder.templates.environment.filters["course_theme_zh"] = theme_zh


def setup(app: Sphinx) -> dict:
    app.add_search_language(ChineseSearch)  # Chinese queries split like the index (zh_search.py)
    app.connect("doctree-read", present_cells)
    app.connect("doctree-read", readable_anchors, priority=400)
    app.connect("doctree-read", uniform_title, priority=400)  # before the page's title is recorded  # before the table of contents reads the ids
    app.connect("doctree-resolved", add_alt_text)
    app.connect("html-page-context", page_context)
    app.connect("build-finished", copy_notebooks)
    app.connect("builder-inited", add_template_filters)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
