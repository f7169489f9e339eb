"""README.zh.md, the Chinese README, stays in step with README.md: the same commands in the same order, the same
top-level sections, every message of the troubleshooting table, every Chinese notebook linked, no dead link, and
section by section the same numbers (versions, sizes, limits, timings) and inline commands.

Prose is not compared (it is translated); code blocks are compared with their comments removed, since comments
are prose too."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
README_ZH = REPO / "README.zh.md"
IN_HANDOUT = (REPO / ".course-handout").exists()  # tools/handout.py: both READMEs start with the students' part
STUDENTS_PART_END = "<!-- end of the students' part: the course's README follows -->"  # tools/handout.py's

# Each top-level (##) section of README.md and its Chinese heading, in README.md's order. A new English section
# needs its Chinese section (and a row here); README.zh.md keeps the same order.
SECTIONS = {
    "Two commands": "两条命令",
    "Chapters": "章节",
    "Exercises and the judge": "练习与评测器",
    "For teachers: from hand-out to feedback": "教师指南：从分发到反馈",
    "The course model": "课程模型",
    "Other models": "其他模型",
    "Troubleshooting": "常见问题排查",
    "How long things take": "耗时",
    "Index of terms": "术语索引",
    "For contributors": "参与贡献",
}

# Code blocks of README.md that README.zh.md deliberately leaves out: first command line -> reason. Keep it short.
OMITTED_BLOCKS: dict[str, str] = {}

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def code_blocks(text: str) -> list[tuple[str, ...]]:
    """Every fenced block as its command lines: comments removed, whitespace collapsed, empty lines dropped."""
    blocks = []
    for _lang, body in FENCE.findall(text):
        lines = (re.sub(r"(^|\s)#.*$", "", line) for line in body.splitlines())
        blocks.append(tuple(" ".join(line.split()) for line in lines if line.strip()))
    return [b for b in blocks if b]


def headings(text: str, level: int) -> list[str]:
    """The headings of one level, outside code blocks."""
    text = FENCE.sub("", text)
    return re.findall(rf"^{'#' * level} (.+?)\s*$", text, re.M)


def section(text: str, heading: str) -> str:
    """The body of the ## section with that heading, up to the next ## heading."""
    match = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"no section '## {heading}'"
    return match.group(1)


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown file (lower case, punctuation dropped, spaces -> '-')."""
    seen: dict[str, int] = {}
    found = set()
    for title in re.findall(r"^#{1,6} (.+?)\s*$", FENCE.sub("", text), re.M):
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return found


def parts(text: str) -> tuple[str, str]:
    """(the students' part a hand-out puts first, or '', the course's README)."""
    students, mark, course = text.partition(STUDENTS_PART_END)
    return (students, course) if mark else ("", text)


@pytest.fixture(scope="module")
def en() -> str:
    return parts(README.read_text(encoding="utf-8"))[1]


@pytest.fixture(scope="module")
def zh() -> str:
    assert README_ZH.exists(), "README.zh.md, the Chinese README, is missing"
    return parts(README_ZH.read_text(encoding="utf-8"))[1]


def test_a_handouts_readmes_both_start_with_the_students_part():
    en_students = parts(README.read_text(encoding="utf-8"))[0]
    zh_students = parts(README_ZH.read_text(encoding="utf-8"))[0]
    if not IN_HANDOUT:
        assert not en_students and not zh_students, "only a hand-out's READMEs have a students' part"
        return
    assert en_students and zh_students, "a hand-out's README.md and README.zh.md both start with the students' part"
    assert code_blocks(zh_students) == code_blocks(en_students)
    assert "solutions/" not in zh_students and "solutions/" not in en_students


def test_the_two_readmes_link_to_each_other(en, zh):
    assert "](README.zh.md)" in en, "README.md must link to the Chinese README: [README.zh.md](README.zh.md)"
    assert "](README.md)" in zh, "README.zh.md must link back to the English README: [README.md](README.md)"


def test_every_command_block_of_the_english_readme_is_in_the_chinese_one_in_order(en, zh):
    """The Chinese README may add blocks (the mirror setup), never lose or reorder the English ones."""
    english = [b for b in code_blocks(en) if b[0] not in OMITTED_BLOCKS]
    chinese = code_blocks(zh)
    position = 0
    for block in english:
        try:
            position = chinese.index(block, position) + 1
        except ValueError:
            shown = "\n    ".join(block)
            raise AssertionError(
                f"README.md has this code block, README.zh.md does not (or not after the previous one):\n    {shown}\n"
                "Copy it into README.zh.md's matching section (comments may be translated), or, if the Chinese "
                "README leaves it out on purpose, add its first line to OMITTED_BLOCKS with the reason.") from None


def test_omitted_blocks_still_exist_in_the_english_readme(en):
    firsts = {b[0] for b in code_blocks(en)}
    stale = [line for line in OMITTED_BLOCKS if line not in firsts]
    assert not stale, f"OMITTED_BLOCKS names blocks README.md no longer has: {stale}"


def test_sections_are_parallel(en, zh):
    english = headings(en, 2)
    unknown = [h for h in english if h not in SECTIONS]
    assert not unknown, f"README.md has sections with no Chinese counterpart in SECTIONS: {unknown}"
    expected = [SECTIONS[h] for h in english]
    chinese = [h for h in headings(zh, 2) if h in SECTIONS.values()]
    assert chinese == expected, f"README.zh.md's sections {chinese} are not README.md's, in its order: {expected}"


def test_troubleshooting_keeps_every_message_and_command(en, zh):
    """The Chinese table quotes each English message (what --lang en prints, and what pip and JupyterLab print in
    every language), and each fix's command."""
    english = section(en, "Troubleshooting")
    chinese = section(zh, SECTIONS["Troubleshooting"])
    missing = [span for span in re.findall(r"`([^`]+)`", english) if f"`{span}`" not in chinese]
    assert not missing, f"README.zh.md's troubleshooting table lacks these messages or commands: {missing}"


def test_chapter_table_links_every_chinese_notebook(en, zh):
    table = section(zh, SECTIONS["Chapters"])
    linked = set(LINK.findall(table))
    from lesson_utils.edition import course_notebooks

    for notebook in course_notebooks(REPO / "notebooks" / "zh"):  # a learner's -mine copy is not in the table
        assert f"notebooks/zh/{notebook.name}" in linked, f"README.zh.md's chapter table does not link {notebook.name}"
    for target in LINK.findall(section(en, "Chapters")):
        if target.startswith("notebooks/") and target.endswith(".ipynb"):
            zh_target = target.replace("notebooks/", "notebooks/zh/", 1)
            assert zh_target in linked, f"README.md's chapters link {target}, README.zh.md's do not link {zh_target}"


def test_every_link_of_the_chinese_readme_exists(en, zh):
    own = {"": anchors(zh), "README.zh.md": anchors(zh), "README.md": anchors(en)}
    for target in LINK.findall(zh):
        if re.match(r"[a-z]+:", target):
            continue  # a web address: not checked offline
        path, _, anchor = target.partition("#")
        if path:
            assert (REPO / path).exists(), f"README.zh.md links {target}, which does not exist"
        if anchor:
            assert path in own, f"README.zh.md links an anchor in {path}; only README anchors are checked"
            assert anchor in own[path], f"README.zh.md links {target}: {path or 'README.zh.md'} has no such heading"


def test_anchor_rule_matches_github():
    """The anchors above follow GitHub's rule, Chinese headings included."""
    text = "## For teachers: from hand-out to feedback\n## 网络较慢时：通过 PyPI 镜像安装\n## Chapters\n## Chapters\n"
    assert anchors(text) == {"for-teachers-from-hand-out-to-feedback", "网络较慢时通过-pypi-镜像安装",
                             "chapters", "chapters-1"}


def test_setup_variables_documented_in_the_chinese_readme_are_read_by_course_py(zh):
    """A variable the mirror section tells you to set (other than pip's own PIP_*) must be one course.py reads."""
    mirror = zh[zh.index("### 网络较慢时"):]
    mirror = mirror[:mirror.index("\n## ")]
    course = (REPO / "course.py").read_text(encoding="utf-8")
    for name in sorted(set(re.findall(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)=", mirror))):
        if not name.startswith("PIP_"):
            assert name in course, f"README.zh.md tells you to set {name}, which course.py never reads"


# A number: 2.13.0, 98,362,432, 0.11, 1/3 (two numbers); not part of a word (03b, ch04, Q4_1) nor a dimension (3-D).
NUMBER = re.compile(r"(?<![\w.])\d+(?:[,.]\d+)*(?![\w]|-D)")
# An inline command: `python judge.py doctor`, `pip install ...`, `make test`.
COMMAND = re.compile(r"`((?:python|make|pip|git|npm|conda|jupyter|hf) [^`]*)`")
GLOSSARY = re.compile(r"<!-- glossary index: start -->.*?<!-- glossary index: end -->", re.S)
# English sections the Chinese one summarises with a link instead of copying: there the Chinese numbers must be
# the English ones (nothing stale or invented), but not all of them.
SUMMARISED = {"How long things take": "README.md#how-long-things-take"}
# Numbers a Chinese section states that its English section does not, each with why (keep it short).
ZH_ONLY_NUMBERS = {"Two commands": {"20": "course.py's --timeout for PyTorch's CPU index (the mirror section)"}}


def numbers(text: str) -> set[str]:
    """The numbers of a README section outside the generated glossary index, link targets left out."""
    text = GLOSSARY.sub("", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    return set(NUMBER.findall(text))


def drift(en: str, zh: str) -> list[str]:
    """What README.zh.md's sections lack of README.md's numbers and inline commands, or state that it does not."""
    problems = []
    for heading, zh_heading in SECTIONS.items():
        english, chinese = section(en, heading), section(zh, zh_heading)
        extra = numbers(chinese) - numbers(english) - set(ZH_ONLY_NUMBERS.get(heading, ()))
        problems += [f"'{zh_heading}' states {n}, which '{heading}' does not" for n in sorted(extra)]
        if heading in SUMMARISED:
            if f"]({SUMMARISED[heading]})" not in chinese:
                problems.append(f"'{zh_heading}' summarises '{heading}' but does not link {SUMMARISED[heading]}")
            continue
        problems += [f"'{zh_heading}' lacks {n}, which '{heading}' states" for n in
                     sorted(numbers(english) - numbers(chinese))]
        problems += [f"'{zh_heading}' lacks the command `{c}` of '{heading}'" for c in
                     dict.fromkeys(COMMAND.findall(english)) if f"`{c}`" not in chinese]
    return problems


def test_numbers_and_commands_are_the_english_readmes(en, zh):
    """A version, size, limit, timing or inline command changed in README.md must change in README.zh.md too."""
    problems = drift(en, zh)
    assert not problems, "README.zh.md has drifted from README.md:\n  " + "\n  ".join(problems)


def test_the_drift_check_catches_an_edited_number_and_a_lost_command(en, zh):
    assert "799 秒" in zh and "`python judge.py doctor`" in zh
    assert any("798" in p for p in drift(en, zh.replace("799 秒", "798 秒")))
    assert any("134,515,008" in p for p in drift(en, zh.replace("134,515,008", "134,515,000")))
    assert any("python judge.py doctor" in p for p in drift(en, zh.replace("`python judge.py doctor`", "doctor")))


def test_zh_only_numbers_are_still_true():
    course = (REPO / "course.py").read_text(encoding="utf-8")
    assert '"--timeout", "20"' in course, "update ZH_ONLY_NUMBERS: course.py's torch index timeout changed"
