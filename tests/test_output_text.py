"""What the notebooks' code cells print speaks the edition's language (lesson_utils/output_text.py), their figures
carry a summary of their data (lesson_utils/figure_data.py), and the saved Chinese outputs prove both."""
from __future__ import annotations

import gettext
import json
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from lesson_utils import display, figure_data, figure_text, output_text  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import translations  # noqa: E402

CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")
ZH = sorted((REPO / "notebooks" / "zh").glob("[0-9]*.ipynb"))


class FakeCatalog(gettext.NullTranslations):
    def __init__(self, entries: dict[str, str]):
        super().__init__()
        self.entries = entries

    def gettext(self, message: str) -> str:
        return self.entries.get(message, message)


@pytest.fixture
def catalog(monkeypatch):
    entries = {"sum of probabilities = {0}, over {1} tokens": "{1} 个 token 的概率之和 = {0}",
               "probability": "概率", "kept": "保留", "a bad one {0}": "坏的 {0} {1}"}
    monkeypatch.setattr(output_text, "_catalog", lambda lang: FakeCatalog(entries))
    return entries


def test_a_template_takes_out_standalone_numbers_and_evens_out_column_gaps():
    assert output_text.template("p = -0.25 of 3,072 in float32, gpt2 v2.5.1") == (
        "p = {0} of {1} in float32, gpt2 v2.5.1", ["-0.25", "3,072"])
    assert output_text.template("torch 2.5.1 ok") == ("torch {0} ok", ["2.5.1"])
    assert output_text.template("dot      1.5    x")[0] == output_text.template("dot  11.25  x")[0] == "dot  {0}  x"
    assert output_text.fill("{1} 个 token：{0}", ["0.5", "3"]) == "3 个 token：0.5"


def test_a_printed_line_is_translated_with_its_own_numbers(catalog):
    out = []
    stream = output_text.TranslatingStream(type("S", (), {"write": lambda s, t: out.append(t),
                                                          "flush": lambda s: None})(), "zh")
    stream.write("  sum of probabilities = 1.0000, ")
    stream.write("over 5 tokens\nnot in the catalog 3\na bad one 7\npartial")
    assert "".join(out) == "  5 个 token 的概率之和 = 1.0000\nnot in the catalog 3\na bad one 7\n"
    stream.flush()
    assert out[-1] == "partial"  # a slot the translation invents falls back to the English line above
    assert output_text.translate_line("sum of probabilities = 1, over 2 tokens", "en") == (
        "sum of probabilities = 1, over 2 tokens")


def test_print_table_translates_cells_and_aligns_by_display_width(catalog, monkeypatch, capsys):
    monkeypatch.setenv("GRADING_LANG", "zh")
    display.print_table([("good", "0.5", "kept"), ("bad", "0.25", "no")], ["token", "probability", "kept"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["token", "概率", "保留"] and lines[2].split() == ["good", "0.5", "保留"]
    third = [output_text.display_width(line[:line.rindex(line.split()[2])]) for line in lines]
    assert len(set(third)) == 1, lines  # the third column starts at one screen column on every line


def test_catalog_entries_take_lines_and_the_cells_of_tables():
    text = ("mean over 3 seeds: 0.5\n"
            "token  probability\n-----  -----------\ngood          0.50\nshortest row here: 2\n")
    assert output_text.catalog_entries(text) == ["mean over {0} seeds: {1}", "token", "probability", "good",
                                                 "shortest row here: {0}"]


def _figure(title: str, ys, size=(4, 3)):
    fig, ax = plt.subplots(figsize=size)
    ax.bar(["a", "b"], ys)
    ax.plot([0, 1], ys, label=title)
    ax.fill_between([0, 1], [0, 0], ys)
    ax.scatter([0, 1], ys)
    ax.set_title(title)
    ax.legend()
    ax.annotate(title, xy=(0, ys[0]), xytext=(0.5, 1), arrowprops={"arrowstyle": "->"})
    return fig


def test_a_figure_summary_sees_the_data_not_the_words_or_the_size():
    english = figure_data.figure_summary(_figure("probability of the next token", [0.7, 0.3]))
    chinese = figure_data.figure_summary(_figure("下一个 token 的概率", [0.7, 0.3], size=(6, 4)))
    rounding = figure_data.figure_summary(_figure("probability of the next token", [0.7 + 1e-7, 0.3]))
    changed = figure_data.figure_summary(_figure("probability of the next token", [0.7, 0.31]))
    plt.close("all")
    assert english == chinese and figure_data.same_data(english, rounding)
    assert not figure_data.same_data(english, changed) and not figure_data.same_data(english, english[:-1])


def test_a_figures_words_and_category_labels_are_translated(catalog, monkeypatch):
    monkeypatch.setitem(matplotlib.rcParams, "font.sans-serif", list(matplotlib.rcParams["font.sans-serif"]))
    monkeypatch.setitem(matplotlib.rcParams, "font.family", list(matplotlib.rcParams["font.family"]))
    monkeypatch.setattr(figure_text, "installed_fonts", lambda: {"Noto Sans CJK SC"})
    catalog.update({"kept share": "保留的份额", "sum of probabilities = {0}": "概率之和 = {0}"})
    fig, ax = plt.subplots()
    ax.bar(["kept share", "b"], [1, 2], label="kept share")
    ax.set_title("sum of probabilities = 0.75")
    ax.set_ylabel("kept")
    ax.legend()
    assert [t.get_text() for t in figure_text.figure_strings(fig)] == ["sum of probabilities = 0.75", "kept",
                                                                        "kept share"]
    assert figure_text.figure_words(fig)[-1:] == ["kept share"]  # a category label with words is recorded too
    summary = figure_data.figure_summary(fig)
    figure_text.translate_figure(fig, "zh")
    assert (ax.get_title(), ax.get_ylabel(), ax.get_legend().get_texts()[0].get_text()) == (
        "概率之和 = 0.75", "保留", "保留的份额")
    fig.canvas.draw()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["保留的份额", "b"]  # and translated at every draw
    assert [t.get_text() for t in ax.get_yticklabels()][:2] == ["0.00", "0.25"]  # numbers are left alone
    assert figure_data.figure_summary(fig) == summary
    plt.close(fig)


def test_a_translated_figure_must_record_the_english_figures_data():
    def figure(png: str, summary: list[float] | None) -> dict:
        return {"output_type": "display_data", "data": {"image/png": png, "text/plain": "<Figure>"},
                "metadata": {} if summary is None else {figure_data.KEY: summary}}

    assert translations.same_numbers([figure("iVBOR1", [2.0, 0.5])], [figure("iVBOR2", [2.0, 0.5000001])])
    assert not translations.same_numbers([figure("iVBOR1", [2.0, 0.5])], [figure("iVBOR2", [2.0, 0.51])])
    assert not translations.same_numbers([figure("iVBOR1", None)], [figure("iVBOR2", None)])
    assert translations.same_numbers([figure("iVBOR1", None)], [figure("iVBOR1", None)])


def _stdout(cell: dict) -> str:
    return "".join("".join(out["text"]) for out in cell.get("outputs", []) if out.get("name") == "stdout")


def test_the_chinese_notebooks_print_what_the_catalog_says():
    """Executed in Chinese: no saved line or table cell is one the catalog translates, left in English (a stale
    output); every printed line of three English words or more, every English table cell and every English word a
    figure drew is one the catalog keeps as it is (code, tokens, data); every other text output (check() results,
    interactive figures' descriptions) has Chinese in it."""
    catalog = gettext.translation(output_text.DOMAIN, REPO / "grading" / "locale", languages=["zh"])
    problems = []
    for path in ZH:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code" or "show_quiz(" in "".join(cell["source"]):  # the quiz: test_translations.py
                continue
            drawn = [w for out in cell.get("outputs", []) for w in out.get("metadata", {}).get(figure_text.KEY, [])]
            for unit in output_text.catalog_entries(_stdout(cell)) + drawn:
                if catalog.gettext(unit) != unit:
                    problems.append(f"{path.name} {cell['id']}: left in English: {unit!r}")
                elif not CJK.search(unit) and unit not in catalog._catalog and (unit in drawn or _english(unit)
                                                                                or " " not in unit):
                    problems.append(f"{path.name} {cell['id']}: English the catalog does not know: {unit!r}")
            for out in cell.get("outputs", []):
                text = "".join(out.get("data", {}).get("text/plain", ""))
                if "image/png" not in out.get("data", {}) and _english(text) and not CJK.search(text):
                    problems.append(f"{path.name} {cell['id']}: an English {out['output_type']}: {text[:80]!r}")
    assert not problems, "\n".join(problems[:40])


def _english(text: str) -> bool:
    return len(output_text.WORD.findall(output_text.QUOTED.sub("", text))) >= 3


def test_every_chinese_figure_records_its_data():
    cells = [(path, cell) for path in ZH for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]]
    missing = [f"{path.name} {cell['id']}" for path, cell in cells for out in cell.get("outputs", [])
               if "image/png" in out.get("data", {}) and figure_data.KEY not in out.get("metadata", {})]
    assert not missing, missing
