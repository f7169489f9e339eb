"""Search on the Chinese site: the query is split into words the way the index was.

Sphinx splits a Chinese page into words with jieba (sphinx/search/zh.py), but in the browser it splits the query
only at spaces and punctuation, so 核采样 stays one word that the index does not have (jieba cut the page's text
into 核 and 采样), and the search finds nothing. Three things make the index and the query agree:

- jieba learns the course's terms (the Chinese column of notebooks/zh/TERMS.md), so 核采样, 交叉熵 and 权重共享 are
  words of the index as they are of the course; jieba's search mode also keeps their parts (采样, 交叉).
- A single Chinese character that jieba leaves alone (熵, 核, 束) is indexed too; Sphinx drops every one-letter word.
- The query is split in the browser (zh_search.js) into the index's own words: the fewest words, longest first,
  so whatever jieba did to a phrase on a page, the same words are asked for.

It also works around a Sphinx 9.0 bug: Chinese search stems the Latin words of a Chinese page with the English
stemmer, but Sphinx writes `window.Stemmer = ChineseStemmer;`, a class that does not exist, so the search page stops
with a script error; naming the stemmer English makes it `EnglishStemmer`, which english-stemmer.js defines.
"""
from __future__ import annotations

import re
from pathlib import Path

import jieba
from sphinx.search.zh import SearchChinese

HERE = Path(__file__).resolve().parent
TERMS = HERE.parent / "notebooks" / "zh" / "TERMS.md"
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,6}")  # a term, not a whole explanation


def course_terms(path: Path = TERMS) -> list[str]:
    """The Chinese words of the course's term list: runs of 2 to 6 Chinese characters in its 中文 column."""
    words: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 2 and not set(cells[0]) <= set("-: "):
            words += [w for w in HAN_RUN.findall(cells[1]) if w not in words]
    return words


class ChineseSearch(SearchChinese):
    """Sphinx's Chinese search, with the course's terms, single characters, and a query split like the index."""

    language_name = "English"  # the stemmer's name in the page's script (see the module's docstring)
    js_splitter_code = (HERE / "zh_search.js").read_text(encoding="utf-8")

    def __init__(self, options: dict[str, str]) -> None:
        super().__init__(options)
        for word in course_terms():
            jieba.add_word(word)

    def word_filter(self, stemmed_word: str) -> bool:
        return len(stemmed_word) > 1 or bool(HAN.fullmatch(stemmed_word))
