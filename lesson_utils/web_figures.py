"""Figures you can turn without a Python kernel: self-contained HTML with inline JavaScript and CSS.

Each function returns a `WebFigure`; a notebook cell shows it (`_repr_html_`), and the same HTML works on the
course website, in any browser, offline: no external library, no WebGL, only a 2-D canvas and plain elements.

- `pca_3d`: words in 3-D, PCA directions or random ones; drag or use the arrow keys to rotate.
- `sampling_explorer`: temperature, top-k, top-p and min-p over a real next-token distribution.
- `lm_head_scan`: logits = h Wᵀ, one row of W at a time, animated.

Every figure is a `<div class="course-figure" data-figure="...">` holding a `<figure>` with a `<figcaption>` (its
text alternative), and a note for readers whose page does not run scripts (JupyterLab does not run the scripts of
an untrusted notebook's saved outputs; running the cell does). The script hides that note.

Language: with `lang=None` the labels follow the page: Chinese where the page (its `lang` attribute) is Chinese
or the notebook runs from `notebooks/zh/`, English otherwise. Code cells are identical in both editions of the
course, so the choice cannot be an argument the cell passes. `lang="en"` or `"zh"` forces one.

The HTML is identical for identical inputs (the element id is a hash of the content; numbers are rounded here),
so re-running a cell leaves the notebook unchanged.
"""
from __future__ import annotations

import hashlib
import html
import json
import re
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Sequence

import torch

from .display import token_label
from .edition import EDITIONS, notebook_language

NOTE = {"en": "Run this cell to interact (a saved notebook does not run its figures' scripts); the static figures "
              "next to it show the same data.",
        "zh": "运行此单元格即可交互（保存的笔记本不会运行图中的脚本）；旁边的静态图展示的是同样的数据。"}


PLAIN = {"en": "[interactive figure {kind}: {alt}]", "zh": "[交互图 {kind}：{alt}]"}  # what a text viewer shows


def _note(mode: str) -> str:
    """The note for pages that do not run the script: Chinese for a figure made in the Chinese edition, English
    otherwise (an "auto" figure's page may be either, but the script that would choose is what does not run)."""
    lang = "zh" if mode == "zh" else "en"
    return f'<p class="cf-note" lang="{lang}">{html.escape(NOTE[lang])}</p>'


@dataclass
class WebFigure:
    """One interactive figure: `html` is the whole fragment; `data` is what its script reads (for tests)."""

    kind: str
    html: str
    data: dict
    alt: str
    lang: str = "en"

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        """What a plain-text viewer shows instead: the figure's text alternative, in the figure's language."""
        return PLAIN[self.lang].format(kind=self.kind, alt=self.alt)


def _asset(name: str) -> str:
    return resources.files("lesson_utils").joinpath("web", name).read_text(encoding="utf-8")


def _lang(lang: str | None) -> str:
    """"en", "zh", or "auto" (the page decides; a notebook run from notebooks/zh/ means Chinese)."""
    if lang is None:
        return "zh" if notebook_language() == "zh" else "auto"
    if lang not in EDITIONS:
        raise ValueError(f"lang must be one of {EDITIONS} or None (follow the page), got {lang!r}")
    return lang


def _figure(kind: str, data: dict, text: dict[str, dict[str, str]], body: str, lang: str | None) -> WebFigure:
    """Wrap `body` (HTML whose translatable elements carry data-t="key") into a complete figure."""
    mode = _lang(lang)
    data = {**data, "text": text}
    payload = json.dumps(data, ensure_ascii=True, sort_keys=True, separators=(",", ":")).replace("</", "<\\/")
    fid = "cf-" + hashlib.sha1(f"{kind}|{mode}|{payload}".encode()).hexdigest()[:12]
    words = text["zh" if mode == "zh" else "en"]
    body = body.replace("{id}", fid)
    for key, value in words.items():
        body = body.replace("{t:" + key + "}", html.escape(value))
    page = (f'<div class="course-figure" data-figure="{kind}" id="{fid}" data-lang="{mode}">'
            f"<style>{_asset('figures.css')}</style>"
            f"{_note(mode)}"
            f"<figure>{body}</figure>"
            f'<script type="application/json" class="cf-data">{payload}</script>'
            f"<script>{_script(kind, fid)}</script></div>")
    return WebFigure(kind, page, data, words["alt"], "zh" if mode == "zh" else "en")


def _script(kind: str, fid: str) -> str:
    """The figure's script: common.js and KIND.js, run with `root` = the figure's element."""
    return (f"(function(){{var root=document.getElementById({json.dumps(fid)});\n{_asset('common.js')}\n"
            f"{_asset(kind + '.js')}\n}})();")


SAVED = re.compile(r'<div class="course-figure" data-figure="([\w-]+)" id="(cf-[0-9a-f]+)"')


def with_current_assets(saved: str) -> str:
    """A saved figure's HTML (a notebook output) with this version's figures.css, scripts and notes; data and text
    as saved.

    The style and the script are the same for every figure of a kind, so a notebook's figure outputs can follow a
    change to lesson_utils/web/ without re-running the notebook (`python -m lesson_utils.web_figures NOTEBOOK...`).
    """
    found = SAVED.match(saved)
    if found is None or "<style>" not in saved or not saved.endswith("</script></div>"):
        raise ValueError("not the HTML of a course figure (a <div class=\"course-figure\"> from this module)")
    kind, fid = found.groups()
    styled = re.sub(r"<style>.*?</style>", lambda _: f"<style>{_asset('figures.css')}</style>", saved, count=1,
                    flags=re.S)
    mode = re.search(r'data-lang="(\w+)"', saved).group(1)
    styled = re.sub(r'</style><p class="cf-note"[^>]*>.*?</p>', lambda _: f"</style>{_note(mode)}", styled,
                    count=1, flags=re.S)
    return styled[:styled.rindex("<script>")] + f"<script>{_script(kind, fid)}</script></div>"


def saved_figures(notebook: dict) -> list[dict]:
    """The outputs of a notebook (its JSON) that hold a course figure's HTML."""
    return [out for cell in notebook["cells"] for out in cell.get("outputs", [])
            if "".join(out.get("data", {}).get("text/html", "")).startswith('<div class="course-figure"')]


def refresh_notebook(path: Path) -> bool:
    """Give the figure outputs saved in the notebook at `path` this version's style and scripts; True if it changed.

    The file is written as Jupyter writes it (one-space indent, sorted keys), so nothing else in it changes.
    """
    text = path.read_text(encoding="utf-8")
    notebook = json.loads(text)
    for out in saved_figures(notebook):
        fresh = with_current_assets("".join(out["data"]["text/html"]))
        out["data"]["text/html"] = fresh.splitlines(keepends=True)
    new = json.dumps(notebook, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def _round(values: torch.Tensor | Sequence[float], digits: int) -> list:
    """Nested lists of floats rounded to `digits` decimals, -0.0 turned into 0.0 (stable, short JSON)."""
    t = torch.as_tensor(values, dtype=torch.float64)
    return (torch.round(t * 10**digits) / 10**digits + 0.0).tolist()


# ---------------------------------------------------------------------------------------------------------------
# 1. Rotatable 3-D word map


PCA_TEXT = {
    "en": {"title": "{n} words in 3-D: drag or use the arrow keys to rotate",
           "alt": "A rotatable 3-D scatter plot of {n} words coloured by group ({groups}). With PCA directions the "
                  "groups lie further apart; on three random directions, drawn at the same scale, the cloud is much "
                  "smaller and the groups overlap more.",
           "pca": "PCA directions", "random": "random directions", "reset": "reset view",
           "view": "Directions", "hint": "Drag the picture or focus it and press the arrow keys."},
    "zh": {"title": "三维中的 {n} 个词：拖动或用方向键旋转",
           "alt": "可旋转的三维散点图，{n} 个词按组着色（{groups}）。用主成分方向时各组分得更开；在三个随机方向上（同一比例尺），"
                  "点云小得多，各组重叠得更多。",
           "pca": "主成分方向", "random": "随机方向", "reset": "重置视角",
           "view": "方向", "hint": "拖动图片，或选中图片后按方向键。"},
}


def pca_3d(pca_xyz: torch.Tensor, random_xyz: torch.Tensor, words: Sequence[str], groups: Sequence[str],
           pca_axes: Sequence[str], random_axes: Sequence[str], lang: str | None = None) -> WebFigure:
    """Words at 3-D coordinates on PCA directions and on random ones ([n, 3] each), one colour per group.

    Both views share one scale (the PCA view's largest distance from the centre), so the random view shows how
    little of the spread random directions see. The axis labels say what each direction is (e.g. its share of
    the variance).
    """
    if pca_xyz.shape != random_xyz.shape or pca_xyz.shape[1:] != (3,) or len(words) != len(pca_xyz):
        raise ValueError(f"need two [n, 3] tensors for n = {len(words)} words, got {list(pca_xyz.shape)} and "
                         f"{list(random_xyz.shape)}")
    scale = float(pca_xyz.double().norm(dim=1).max())
    names = list(dict.fromkeys(groups))
    data = {"words": [w.strip() for w in words], "group": [names.index(g) for g in groups], "groups": names,
            "views": {"pca": {"xyz": _round(pca_xyz.double() / scale, 3), "axes": list(pca_axes)},
                      "random": {"xyz": _round(random_xyz.double() / scale, 3), "axes": list(random_axes)}}}
    text = {lang_: {k: v.format(n=len(words), groups=", ".join(names)) for k, v in t.items()}
            for lang_, t in PCA_TEXT.items()}
    body = ('<div class="cf-controls" role="group" aria-labelledby="{id}-view">'
            '<span id="{id}-view" data-t="view">{t:view}</span> '
            '<button type="button" data-view="pca" aria-pressed="true" data-t="pca">{t:pca}</button>'
            '<button type="button" data-view="random" aria-pressed="false" data-t="random">{t:random}</button>'
            '<button type="button" data-action="reset" data-t="reset">{t:reset}</button></div>'
            '<canvas width="640" height="480" tabindex="0" role="img" aria-label="{t:alt}" data-t-label="alt">'
            "{t:alt}</canvas>"
            '<ul class="cf-legend"></ul>'
            '<figcaption><strong data-t="title">{t:title}</strong> <span data-t="hint">{t:hint}</span> '
            '<span data-t="alt">{t:alt}</span></figcaption>')
    return _figure("pca-3d", data, text, body, lang)


# ---------------------------------------------------------------------------------------------------------------
# 2. Sampling explorer


SAMPLING_TEXT = {
    "en": {"title": "Next token after “{prompt}”: the {shown} most likely of {V} after the filters",
           "alt": "Bar chart of the probabilities of the {shown} most likely next tokens after “{prompt}”, "
                  "recomputed as you change temperature, top-k, top-p and min-p; the line below the bars says how "
                  "many tokens are kept.",
           "temperature": "temperature T", "top_k": "top-k (0 = off)", "top_p": "top-p (1 = off)",
           "min_p": "min-p (0 = off)", "reset": "reset",
           "readout": "kept {kept} of {V} tokens, which held {mass} of the probability at this T; "
                      "the {shown} shown now hold {shownmass}; entropy {entropy} nats",
           "removed": "removed",
           "data": "The {N} most likely tokens are exact; the other {tail} are grouped by logit (0.02 wide) so the "
                   "filters and the normalisation still see the whole vocabulary."},
    "zh": {"title": "“{prompt}”之后的下一个 token：过滤后 {V} 个中最可能的 {shown} 个",
           "alt": "柱状图：“{prompt}”之后最可能的 {shown} 个 token 的概率，随温度、top-k、top-p 和 min-p 的改变而重新计算；"
                  "柱状图下方的一行给出保留的 token 数。",
           "temperature": "温度 T", "top_k": "top-k（0 = 关闭）", "top_p": "top-p（1 = 关闭）",
           "min_p": "min-p（0 = 关闭）", "reset": "重置",
           "readout": "保留 {V} 个 token 中的 {kept} 个，它们在此温度下占概率的 {mass}；"
                      "当前显示的 {shown} 个占 {shownmass}；熵 {entropy} nats",
           "removed": "已移除",
           "data": "最可能的 {N} 个 token 是精确值；其余 {tail} 个按 logit 分组（宽 0.02），因此过滤和归一化仍覆盖整个词表。"},
}
TAIL_BIN = 0.02  # width of the logit bins the tail below the exact tokens is grouped into
DEFAULTS = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0}


def sampling_explorer(logits: torch.Tensor, tok, prompt: str, exact: int = 600, shown: int = 15,
                      lang: str | None = None, labels: Sequence[str] | None = None) -> WebFigure:
    """Temperature, top-k, top-p and min-p applied in the browser to the next-token logits [V] after `prompt`.

    The `exact` largest logits are embedded one by one (4 decimals; more are taken while the next one ties the
    last); every other logit is grouped into bins TAIL_BIN wide, stored as (mean logit, count). The filters follow
    transformers' warpers in generate's order (temperature, top-k, top-p, min-p): top-k keeps ties with the k-th
    value, top-p keeps the smallest top set whose mass reaches p including the token that crosses it, min-p keeps
    the tokens with at least min_p times the top probability. `labels` (one per logit) replaces token labels.
    """
    logits = logits.detach().double().flatten()
    V = logits.numel()
    values, order = logits.sort(descending=True, stable=True)
    values = torch.round(values * 10_000) / 10_000
    n = min(exact, V)
    while n < V and values[n] == values[n - 1]:
        n += 1
    label = (lambda i: labels[i]) if labels is not None else (lambda i: token_label(tok, i))
    tokens = [[label(int(i)), float(v) + 0.0] for i, v in zip(order[:n].tolist(), values[:n])]
    tail = values[n:]
    bins = []
    if len(tail):
        key = torch.floor(tail / TAIL_BIN).long()
        for k in key.unique(sorted=True).flip(0).tolist():
            members = tail[key == k]
            bins.append([round(float(members.mean()), 4) + 0.0, int(len(members))])
    data = {"tokens": tokens, "tail": bins, "V": V, "shown": min(shown, n), "defaults": DEFAULTS}
    fmt = {"prompt": prompt, "shown": min(shown, n), "V": f"{V:,}", "N": n, "tail": f"{V - n:,}"}
    text = {lang_: {k: (v.format(**fmt) if k != "readout" else v) for k, v in t.items()}
            for lang_, t in SAMPLING_TEXT.items()}
    sliders = [("temperature", 0.05, 3.0, 0.05, 1.0), ("top_k", 0, 200, 1, 0), ("top_p", 0.05, 1.0, 0.01, 1.0),
               ("min_p", 0.0, 0.5, 0.01, 0.0)]
    controls = "".join(
        f'<div class="cf-slider"><label for="{{id}}-{name}" data-t="{name}">{{t:{name}}}</label>'
        f'<input type="range" id="{{id}}-{name}" name="{name}" min="{lo}" max="{hi}" step="{step}" value="{value}">'
        f'<output for="{{id}}-{name}">{value}</output></div>' for name, lo, hi, step, value in sliders)
    body = (f'<div class="cf-controls">{controls}'
            '<button type="button" data-action="reset" data-t="reset">{t:reset}</button></div>'
            '<div class="cf-bars"></div><p class="cf-readout" aria-live="polite"></p>'
            '<figcaption><strong data-t="title">{t:title}</strong> <span data-t="alt">{t:alt}</span> '
            '<span data-t="data">{t:data}</span></figcaption>')
    return _figure("sampling-explorer", data, text, body, lang)


def expanded_logits(data: dict) -> torch.Tensor:
    """The logit vector an explorer's embedded data stands for: exact tokens, then each bin's mean `count` times."""
    tail = [v for v, count in data["tail"] for _ in range(count)]
    return torch.tensor([v for _, v in data["tokens"]] + tail, dtype=torch.float64)


# ---------------------------------------------------------------------------------------------------------------
# 3. Animated LM-head scan


SCAN_TEXT = {
    "en": {"title": "logits = h Wᵀ, one token at a time",
           "alt": "Animation of the LM head: the final hidden vector h of “{prompt}” as a row of coloured cells above "
                  "{n} rows of the head matrix W ({tokens}); step by step one row lights up and its logit, the "
                  "inner product of that row with h, fills in a bar.",
           "play": "play", "pause": "pause", "step": "step", "reset": "reset",
           "slice": "Shown: {dims} of the {d} dimensions (those with the largest |h_i|) and {n} of the {V} rows: "
                    "{which}. Each logit sums all {d} products, not only the {dims} drawn.",
           "status": "row {i} of {n}: logit({token}) = w · h = {logit} (the {dims} dimensions drawn contribute {part})",
           "start": "Press play or step: each step multiplies one row of W with h.",
           "h": "h", "logit": "logit"},
    "zh": {"title": "logits = h Wᵀ，一次一个 token",
           "alt": "LM head 的动画：“{prompt}”的最终隐藏向量 h 画成一行彩色格子，下面是 LM head 矩阵 W 的 {n} 行（{tokens}）；"
                  "每一步点亮一行，它的 logit（这一行与 h 的内积）填入一根柱子。",
           "play": "播放", "pause": "暂停", "step": "单步", "reset": "重置",
           "slice": "显示：{d} 个维度中的 {dims} 个（|h_i| 最大的那些）和 {V} 行中的 {n} 行：{which}。"
                    "每个 logit 是全部 {d} 个乘积之和，不只是画出的 {dims} 个。",
           "status": "第 {i} / {n} 行：logit({token}) = w · h = {logit}（画出的 {dims} 个维度贡献 {part}）",
           "start": "按播放或单步：每一步把 W 的一行与 h 相乘。",
           "h": "h", "logit": "logit"},
}


def lm_head_scan(h: torch.Tensor, W: torch.Tensor, tok, prompt: str, top: int = 6,
                 ranks: Sequence[int] = (100, 1000, 10000, -1), dims: int = 24,
                 lang: str | None = None) -> WebFigure:
    """The head's product for one position, animated: h [d], W [V, d].

    Rows shown: the `top` highest-scoring tokens and the tokens at `ranks` (0 = first, -1 = last), in that order.
    Columns shown: the `dims` dimensions with the largest |h_i|, in index order. Logits are the full products.
    """
    h, W = h.detach().double(), W.detach().double()
    logits = W @ h
    order = logits.argsort(descending=True, stable=True)
    rows = order[:top].tolist() + [int(order[r]) for r in ranks]
    cols = h.abs().topk(dims).indices.sort().values.tolist()
    part = W[rows][:, cols] @ h[cols]
    labels = [token_label(tok, i) for i in rows]
    d, V = len(h), len(W)
    data = {"tokens": labels, "dims": cols, "h": _round(h[cols], 2), "W": _round(W[rows][:, cols], 3),
            "logits": _round(logits[rows], 2), "part": _round(part, 2), "hscale": _round(h[cols].abs().max(), 2),
            "wscale": _round(W[rows][:, cols].abs().max(), 3)}
    which_en = f"the {top} highest logits, then the tokens ranked " + ", ".join(
        "last" if r == -1 else f"{r:,}th" for r in ranks)
    which_zh = f"logit 最高的 {top} 个，然后是排名第 " + "、".join("末位" if r == -1 else f"{r:,}" for r in ranks) + " 的 token"
    text = {}
    for lang_, t in SCAN_TEXT.items():
        fmt = {"prompt": prompt, "n": len(rows), "tokens": ", ".join(labels), "dims": dims, "d": d, "V": f"{V:,}",
               "which": which_en if lang_ == "en" else which_zh}
        text[lang_] = {k: (v.format(**fmt) if k != "status" else v.replace("{n}", str(len(rows)))
                       .replace("{dims}", str(dims))) for k, v in t.items()}
    body = ('<div class="cf-controls">'
            '<button type="button" data-action="play" aria-pressed="false" data-t="play">{t:play}</button>'
            '<button type="button" data-action="step" data-t="step">{t:step}</button>'
            '<button type="button" data-action="reset" data-t="reset">{t:reset}</button></div>'
            '<div class="cf-scan" role="img" aria-label="{t:alt}" data-t-label="alt"></div>'
            '<p class="cf-readout" aria-live="polite" data-t="start">{t:start}</p>'
            '<figcaption><strong data-t="title">{t:title}</strong> <span data-t="slice">{t:slice}</span></figcaption>')
    return _figure("lm-head-scan", data, text, body, lang)


if __name__ == "__main__":  # python -m lesson_utils.web_figures NOTEBOOK...: refresh their saved figures' scripts
    for name in sys.argv[1:]:
        print(f"{name}: {'updated' if refresh_notebook(Path(name)) else 'already current'}")
