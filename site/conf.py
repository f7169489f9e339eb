"""Sphinx configuration of the course's website: one file for both editions.

site/build_site.py runs Sphinx twice with this folder as the configuration folder: once for the English notebooks
and once for the Chinese ones (COURSE_SITE_LANG=en or zh). The notebooks are read with their committed outputs;
nothing is executed (nb_execution_mode = "off").
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

LANG = os.environ.get("COURSE_SITE_LANG", "en")


def _repo_url() -> str:
    """The course repository's web address: COURSE_REPO_URL, else this clone's `origin` remote (as https), else ""."""
    url = os.environ.get("COURSE_REPO_URL", "").strip()
    if not url:
        try:
            url = subprocess.run(["git", "-C", str(HERE.parent), "remote", "get-url", "origin"], capture_output=True,
                                 text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            url = ""
        url = re.sub(r"^git@([^:]+):", r"https://\1/", url)  # git@github.com:owner/name.git
        url = url if url.startswith("https://") else ""
    return re.sub(r"\.git$", "", url.rstrip("/"))


REPO_URL = _repo_url()


def _colab_base(url: str) -> str:
    """Where Colab opens this repository's notebooks (a GitHub repository only), or ""."""
    m = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+)", url)
    return f"https://colab.research.google.com/github/{m.group(1)}/{m.group(2)}/blob/main/" if m else ""


COLAB_BASE = _colab_base(REPO_URL)
EDITIONS = {
    "en": {"language": "en", "title": "From hidden state to next token", "other": "zh", "other_name": "Chinese",
           "other_label": "中文版", "other_prefix": "zh/", "copyright": "the course's authors, Apache-2.0"},
    "zh": {"language": "zh_CN", "title": "从隐藏状态到下一个 token", "other": "en", "other_name": "英文版",
           "other_label": "English", "other_prefix": "../", "copyright": "本课程的作者，Apache-2.0 许可"},
}
EDITION = EDITIONS[LANG]

project = EDITION["title"]
author = "the course's authors"
copyright = EDITION["copyright"]
language = EDITION["language"]
# The theme's words in Chinese (Furo ships none): build_site.py copies site/locales into the source folder, where
# Sphinx compiles its .po.
locale_dirs = ["locales"]
# Chinese words are split with jieba (pinned in the site extra), the query the same way (zh_search.py)
html_search_language = "zh" if LANG == "zh" else "en"
root_doc = "index"

extensions = ["myst_nb", "course_site"]
templates_path = [str(HERE / "_templates")]
html_static_path = [str(HERE / "_static")]
html_css_files = ["course.css"]
html_js_files = ["course.js"]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "TERMS.md"]

# The notebooks are committed executed: the site shows those outputs and never runs a cell.
nb_execution_mode = "off"
nb_ipywidgets_js = {}  # no widget manager from a CDN: the course's figures are plain HTML and script
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

# MathJax from npm (site/node_modules, copied once to the site's _mathjax/ by build_site.py), never a CDN.
mathjax_path = ("../" if LANG == "en" else "../../") + "_mathjax/tex-chtml.js"

html_theme = "furo"
html_title = EDITION["title"]
html_favicon = str(HERE / "_static" / "favicon.svg")  # also stops the browser asking for /favicon.ico
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
html_theme_options = {
    "announcement": "language switch",  # replaced by the switch in _templates/page.html
    "top_of_page_buttons": [],
}
html_context = {
    "course_lang": LANG,
    "course_other": EDITION["other"],
    "course_other_name": EDITION["other_name"],
    "course_other_label": EDITION["other_label"],
    "course_other_prefix": EDITION["other_prefix"],
    "course_repo_url": REPO_URL,
    "course_colab_base": COLAB_BASE,
}

if LANG == "zh":  # jieba splits the Chinese search index; its start-up messages are not warnings
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
