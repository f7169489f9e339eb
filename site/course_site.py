"""A small Sphinx extension for the course's website.

- Every chapter page gets a flag for the template (the download link and the commands that run it).
- Every figure a notebook output shows gets alt text: the cell's own `mystnb.image.alt` metadata if it has one
  (myst-nb reads it), else the first comment line of the cell's code, else the section it appears in.
- The notebooks themselves are copied into the site (notebooks/NAME.ipynb), so "download this notebook" works.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.search.zh import SearchChinese

FIGURE = {"en": "Figure", "zh": "图"}
IN_SECTION = {"en": "{figure} {n} of the section \u201c{title}\u201d", "zh": "\u201c{title}\u201d一节的{figure} {n}"}


def _lang(app: Sphinx) -> str:
    return "zh" if str(app.config.language).startswith("zh") else "en"


def _cell_code(node: nodes.Node) -> str:
    """The source code of the notebook cell that an output node belongs to ("" if none is found)."""
    parent = node.parent
    while parent is not None and not (isinstance(parent, nodes.container) and parent.get("nb_element") == "cell_code"):
        parent = parent.parent
    if parent is None:
        return ""
    blocks = [b for b in parent.findall(nodes.literal_block)
              if isinstance(b.parent, nodes.container) and b.parent.get("nb_element") == "cell_code_source"]
    return blocks[0].astext() if blocks else ""


def _comment(code: str) -> str:
    """The first comment line of a cell, without the '#' (the cell's own caption), or ""."""
    for line in code.splitlines():
        text = line.strip()
        if text.startswith("#") and not text.startswith("#!") and "NBVAL" not in text and len(text) > 8:
            return text.lstrip("#").strip()
    return ""


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
        caption = _comment(_cell_code(image))
        image["alt"] = caption or IN_SECTION[lang].format(figure=FIGURE[lang], n=counts[title], title=title)


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


class _ChineseSearch(SearchChinese):
    """Sphinx 9.0's Chinese search with its JavaScript stemmer named right.

    Chinese search stems the Latin words of a Chinese page with the English stemmer, but Sphinx 9.0 writes
    `window.Stemmer = ChineseStemmer;`, a class that does not exist, so the search page stops with a script error.
    """

    language_name = "English"


def setup(app: Sphinx) -> dict:
    app.add_search_language(_ChineseSearch)
    app.connect("doctree-resolved", add_alt_text)
    app.connect("html-page-context", page_context)
    app.connect("build-finished", copy_notebooks)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
