"""What lesson_utils itself prints or draws speaks the edition's language: Chinese under GRADING_LANG=zh (figures in
a CJK font, or in English where none is installed), and the very same English as before otherwise."""
from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")  # tests draw off-screen

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib import font_manager  # noqa: E402

from lesson_utils import display, embedding_demo, figure_text, geometry_plots, hub_models, lens_demo  # noqa: E402
from lesson_utils import lens_plots, lm_head_plots, sampling_plots, scale_plots, tying_demo  # noqa: E402
from test_sampling_plots import FakeTokenizer as Tok  # noqa: E402  (the same stand-ins as the sampling plots' tests)
from test_sampling_plots import _warp as warp  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Glyph")  # a pretended CJK font draws Chinese in DejaVu Sans
LOCALE_VARS = ("GRADING_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG", "JPY_SESSION_NAME")
CJK = re.compile(r"[\u4e00-\u9fff]")
# What stays as is in Chinese (notebooks/zh/TERMS.md): terms kept in English, code, commands, names, font names
KEPT_PHRASES = ("LM head", "top-k", "top-p", "min-p", "Hugging Face", "HF_HUB_OFFLINE=1", "hf download",
                "~/.cache/huggingface/hub", "load_model('/path/to/folder')", "`load_course_model()`", "gpt2",
                *figure_text.CJK_FONTS)
KEPT_WORDS = {"logit", "logits", "token", "softmax", "argmax", "FLOP", "rank"}


@pytest.fixture
def lang(monkeypatch, tmp_path):
    """lang("zh") or lang("en"): the course's language by GRADING_LANG; rcParams come back as they were."""
    for var in LOCALE_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(matplotlib.rcParams, "font.sans-serif", list(matplotlib.rcParams["font.sans-serif"]))
    monkeypatch.setitem(matplotlib.rcParams, "font.family", list(matplotlib.rcParams["font.family"]))
    monkeypatch.setattr(figure_text, "_told", False)
    yield lambda code: monkeypatch.setenv("GRADING_LANG", code)
    plt.close("all")


@pytest.fixture
def zh(lang, monkeypatch):
    """Chinese, with a CJK font (pretended where none is installed)."""
    lang("zh")
    if figure_text.cjk_font() is None:
        monkeypatch.setattr(figure_text, "installed_fonts", lambda: {"Noto Sans CJK SC"})


def texts(fig) -> list[str]:
    """Every title, axis label, tick label, text, annotation and legend entry of `fig` (colour bars included)."""
    out = []
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel(), *(t.get_text() for t in ax.texts)]
        out += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
        legend = ax.get_legend()
        if legend is not None:
            out += [legend.get_title().get_text(), *(t.get_text() for t in legend.get_texts())]
    return [re.sub(r"\$[^$]*\$", "", t) for t in out if t]  # tick labels in math text are numbers


def english_words(text: str) -> list[str]:
    for phrase in KEPT_PHRASES:
        text = text.replace(phrase, "")
    return [w for w in re.findall(r"[A-Za-z]{3,}", text) if w not in KEPT_WORDS]


FIGURES = {  # each helper on tiny inputs whose own words (tokens, groups, names) are at most two letters
    "plot_token_bars": lambda: display.plot_token_bars(["a", "b"], [0.7, 0.3], highlight=0),
    "plot_gradient_rows": lambda: embedding_demo.plot_gradient_rows(torch.tensor([[1.0, -2.0], [0.0, 0.5]]), [0, 0],
                                                                    annotate=True, row_sums=True),
    "plot_timings": lambda: embedding_demo.plot_timings(["x", "y"], [1e-5, 2e-3]),
    "plot_sparse_updates": lambda: embedding_demo.plot_sparse_updates(torch.tensor([3, 1, 0, 2]),
                                                                      torch.tensor([0.5, 0.2, 0.0, 0.4])),
    "plot_word_map": lambda: geometry_plots.plot_word_map(torch.tensor([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0]]),
                                                          [" a", " b", " c"], ["g1", "g1", "g2"]),
    "plot_token_grid": lambda: lens_plots.plot_token_grid([["a", "b"]], [[0.2, 0.9]], ["x", "y"]),
    "plot_by_layer": lambda: lens_plots.plot_by_layer({"p": [1, 2], "q": [2, 1]}, "y"),
    "plot_contributions": lambda: lm_head_plots.plot_contributions(torch.tensor([0.5, -0.25, 1.0])),
    "plot_cumulative_contributions": lambda: lm_head_plots.plot_cumulative_contributions(torch.tensor([0.5, 1.0])),
    "plot_cost_ratio": lambda: lm_head_plots.plot_cost_ratio([1, 4], [1.0, 2.0]),
    "plot_reshaped": lambda: sampling_plots.plot_reshaped(["a", "b"], [0.6, 0.4], [1.0, 0.0]),
    "plot_frequencies": lambda: sampling_plots.plot_frequencies(["a", "b"], [0.6, 0.4], [0.5, 0.5]),
    "plot_cumulative_mass": lambda: sampling_plots.plot_cumulative_mass(torch.tensor([0.5, 0.3, 0.2]), {"k2": 2}),
    "show_distribution": lambda: sampling_plots.show_distribution(torch.arange(10.0), Tok(), warp, 0.7, 0, 0.9, 5),
    "plot_path_recap": lambda: sampling_plots.plot_path_recap({"logits": "12"}),
    "plot_sampling_costs": lambda: scale_plots.plot_sampling_costs(
        {(op, v, b): 1e-3 for op in "ab" for v in (10, 20) for b in (1, 2)}, ["a", "b"], [10, 20], [1, 2])[0],
    "plot_bytes_per_token": lambda: scale_plots.plot_bytes_per_token([("m", [10, 100])], ["g1", "g2"]),
}


def figure_of(drawn):
    return drawn if isinstance(drawn, matplotlib.figure.Figure) else drawn.figure


@pytest.mark.parametrize("name", list(FIGURES))
def test_every_figure_helper_labels_itself_in_chinese(zh, name):
    shown = texts(figure_of(FIGURES[name]()))
    assert any(CJK.search(t) for t in shown), shown
    assert not [w for t in shown for w in english_words(t)], shown


def test_printed_and_returned_text_is_chinese(zh, monkeypatch, capsys):
    sampling_plots.interactive_distribution(torch.arange(40.0), Tok(), warp, top=4, interactive=False)
    monkeypatch.setattr(hub_models, "model_available", lambda name: False)
    assert hub_models.try_load_model("gpt2") is None
    shown = capsys.readouterr().out.splitlines()
    shown += [tying_demo.cosine_band(c) for c in (0.9, 0.3, 0.1)]
    assert all(CJK.search(line) for line in shown if line.strip() and not line.startswith("    hf download")), shown
    assert not [w for line in shown for w in english_words(line)], shown
    assert shown[-3:] == ["高于 0.6", "0.25 到 0.6", "低于 0.25"]
    assert lens_demo.rank_band(0, 100) == "1st"  # printed inside a cell's own line: output_text translates the line


def test_english_stays_exactly_as_it_was(lang, monkeypatch, capsys):
    lang("en")
    ax = embedding_demo.plot_gradient_rows(torch.tensor([[1.0, -2.0], [0.0, 0.5]]), [0, 0], row_sums=True)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["row 0  (id used 2x)", "row 1"]
    assert ax.get_title() == "gradient of E" and " sum -1" in [t.get_text() for t in ax.texts]
    assert lm_head_plots.plot_contributions(torch.tensor([0.5, -0.25, 1.0])).get_title() == \
        "sum of the bars = logit = 1.250"
    assert FIGURES["show_distribution"]().get_title() == "T = 0.7, top-k = off, top-p = 0.9: 10 tokens kept"
    assert FIGURES["plot_cumulative_mass"]().texts[0].get_text() == "k2: 2 kept, 80%"
    assert FIGURES["plot_sampling_costs"]().get_title() == "Where sampling time goes: batch 1"
    assert FIGURES["plot_by_layer"]().get_xlabel() == "layer (0 = embedding output)"
    assert FIGURES["plot_token_bars"]().get_xlabel() == "probability"
    assert [lens_demo.rank_band(r, 100) for r in (0, 3)] == ["1st", "top 5"]
    assert tying_demo.cosine_band(0.3) == "0.25 to 0.6"
    monkeypatch.setattr(hub_models, "model_available", lambda name: False)
    hub_models.try_load_model("gpt2")
    assert capsys.readouterr().out.startswith("The model 'gpt2' is not in your Hugging Face cache and cannot be "
                                              "downloaded now (offline, or HF_HUB_OFFLINE=1).\n")


def with_fonts(monkeypatch, *names: str) -> None:
    """matplotlib's font list: only these family names (the real entries are dropped)."""
    monkeypatch.setattr(font_manager.fontManager, "ttflist", [font_manager.FontEntry(name=n) for n in names])


def test_chinese_figures_put_an_installed_cjk_font_first(lang, monkeypatch):
    lang("zh")
    with_fonts(monkeypatch, "DejaVu Sans", "SimHei", "WenQuanYi Zen Hei")
    assert figure_text.cjk_font() == "WenQuanYi Zen Hei"  # the first in CJK_FONTS' order, not the list's
    assert figure_text.use_cjk_font() and figure_text._("probability") == "概率"
    fonts = matplotlib.rcParams["font.sans-serif"]
    assert fonts[0] == "WenQuanYi Zen Hei" and fonts.count("WenQuanYi Zen Hei") == 1 and "DejaVu Sans" in fonts


def test_without_a_cjk_font_chinese_figures_fall_back_to_english(lang, monkeypatch, capsys):
    lang("zh")
    with_fonts(monkeypatch, "DejaVu Sans", "Liberation Sans")
    before = list(matplotlib.rcParams["font.sans-serif"])
    assert figure_text.cjk_font() is None and not figure_text.use_cjk_font()
    assert figure_text._("sum of the bars = logit = {value:.3f}", value=1.25) == "sum of the bars = logit = 1.250"
    assert matplotlib.rcParams["font.sans-serif"] == before
    figure_text._("probability")
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "没有安装含中文字符的字体" in out, out  # said once, in Chinese
    lang("en")
    assert figure_text.use_cjk_font() and figure_text._("probability") == "probability"
