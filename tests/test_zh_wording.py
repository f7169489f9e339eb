"""The Chinese notebooks' prose follows notebooks/zh/TERMS.md's conventions, and quotes the judge as a Chinese
learner sees it: a quoted message of the catalogs (a status, a mistake's name) is quoted in its Chinese."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from grading import i18n

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks" / "zh").glob("*.ipynb"))
QUOTED = re.compile(r'"([^"\n]{3,120})"|“([^”\n]{3,120})”|`([^`\n]{3,120})`')
# Wordings TERMS.md rules out in prose: the wrong form -> what TERMS.md says instead
BANNED = {"散文": "自然语言文本 (prose vs code)", "et al": "等人", "奈特（nat）": "nat", "词元": "token",
          "权重绑定": "权重共享", "评测程序": "评测器", "docstring": "文档字符串"}
# ... and in what the judge, the course and the notebooks' outputs say in Chinese (grading/locale/zh)
BANNED_IN_CATALOGS = {k: v for k, v in BANNED.items() if k in ("词元", "权重绑定", "评测程序", "docstring")}
CATALOGS = sorted((REPO / "grading" / "locale" / "zh" / "LC_MESSAGES").glob("*.po"))


def markdown(path: Path) -> list[tuple[str, str]]:
    return [(c.get("id", "?"), "".join(c["source"])) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "markdown"]


def judge_phrases() -> dict[str, str]:
    """English a learner could be quoted -> its Chinese: every msgid without placeholders, and the name of each named
    mistake (a msgid's words before its first colon, like "final norm skipped")."""
    out = {}
    for msgid, text in i18n.catalog("zh").items():
        if "{" not in msgid and re.search(r"[A-Za-z]{2,} [A-Za-z]", msgid):
            out[msgid.lower()] = text
        head, colon, _ = msgid.partition(":")
        if colon and "{" not in head and len(head.split()) >= 2:
            out.setdefault(head.lower(), text.split("：")[0])
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_prose_quotes_the_judge_in_chinese(path):
    phrases = judge_phrases()
    found = []
    for cid, text in markdown(path):
        for match in QUOTED.finditer(text):
            quoted = next(g for g in match.groups() if g).strip().lower()
            chinese = phrases.get(quoted)
            if chinese and chinese not in text:  # the English beside its Chinese is fine
                found.append(f"cell {cid}: {quoted!r} -> quote what the learner sees: {chinese!r}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_prose_follows_the_term_list(path):
    found = [f"cell {cid}: {wrong!r} (TERMS.md: {right})" for cid, text in markdown(path)
             for wrong, right in BANNED.items() if wrong in text]
    nai = [cid for cid, text in markdown(path) if "奈特" in text]
    if path.stem != "03b_tying_gradients":  # the unit's one introduction (TERMS.md)
        found += [f"cell {cid}: 奈特 (TERMS.md: write nats; 03b introduces the name)" for cid in nai]
    assert not found, "\n".join(found)


def test_the_tuned_lens_is_introduced_with_its_chinese_name_at_first_use():
    texts = [text for path in NOTEBOOKS for _cid, text in markdown(path) if "tuned lens" in text]
    first, named = texts[0], "tuned lens（调校透镜）"
    assert first[first.index("tuned lens"):][:len(named)] == named, "TERMS.md: introduce it as " + named


def test_the_checks_would_catch_the_old_wording():
    phrases = judge_phrases()
    assert phrases["not attempted"] == "未作答"
    assert phrases["final norm skipped"].startswith("跳过了最终归一化层")


@pytest.mark.parametrize("path", CATALOGS, ids=lambda p: p.stem)
def test_catalogs_follow_the_term_list(path):
    from babel.messages.pofile import read_po

    with path.open("rb") as f:
        catalog = read_po(f)
    found = [f"{m.id[:60]!r}: {wrong!r} (TERMS.md: {right})" for m in catalog if m.id and isinstance(m.string, str)
             for wrong, right in BANNED_IN_CATALOGS.items() if wrong in m.string and m.string != m.id]
    assert not found, "\n".join(found)
