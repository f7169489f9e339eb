"""Demo material for notebook 01 (embedding lookup): a small text sample and its figures.

The sample is six short documents of ordinary English (news, a story, a recipe,
an email, code, a science note), written for the course, so that "a realistic
batch" is the same on every machine and needs no download.
"""
from __future__ import annotations

from collections import Counter
from typing import Sequence

import torch

from .figure_text import _

SAMPLE_TEXTS: dict[str, str] = {
    "news": (
        "The city council voted on Tuesday to extend the night bus service to the northern suburbs, "
        "after a year in which ridership grew faster than any official forecast. The new routes will "
        "start in March and run every twenty minutes until two in the morning. Supporters said the "
        "change would help nurses, cooks and cleaners who finish work after the last train, while two "
        "members argued that the budget should first repair the roads that the buses already use. The "
        "transport office expects the service to cost about four million a year and to pay for a third "
        "of that through fares. A public meeting about the timetable is planned for next month at the "
        "central library, and residents can also send comments by post or through the council website."
    ),
    "story": (
        "Mina had never seen the sea before, so when the train came out of the tunnel she pressed her "
        "face against the window and forgot to breathe. The water was not blue, as her books had "
        "promised, but grey and silver and green, and it moved all the time, as if something large were "
        "turning over underneath it. Her grandfather laughed and told her that the sea was never the "
        "same colour twice. At the station they bought hot chips in paper cones and walked down to the "
        "beach, where the wind stole her hat and carried it along the sand. She ran after it until her "
        "shoes were full of water, and by the time she caught it she had decided that she would live "
        "by the sea when she grew up, in a small white house with a red door."
    ),
    "recipe": (
        "Simple tomato soup for four. Warm two tablespoons of olive oil in a large pot over medium heat. "
        "Add one chopped onion and two cloves of garlic and cook them slowly for about eight minutes, "
        "until they are soft but not brown. Stir in a kilogram of ripe tomatoes, cut into quarters, with "
        "a pinch of salt and a teaspoon of sugar. Cover the pot and let everything simmer for twenty "
        "minutes, stirring now and then. Take the pot off the heat, add a handful of fresh basil and "
        "blend the soup until it is smooth. Taste it and add more salt or a little pepper if needed. "
        "Serve it hot with crusty bread, or cold on a summer evening with a spoon of yoghurt on top."
    ),
    "email": (
        "Hi Sam, thanks for sending the draft report so quickly. I read it on the train this morning "
        "and I think the structure works well. Two small things: the chart on page three uses last "
        "year's numbers, and the summary should say clearly that the survey only covered the two "
        "largest offices. Could you also add a short paragraph about the costs we expect next quarter? "
        "The finance team asked about it at yesterday's meeting. I am out of the office on Friday, so "
        "if you can send the next version by Thursday afternoon I will review it before I leave. Let me "
        "know if you need any of the raw data. Best wishes, Priya"
    ),
    "code": (
        "def moving_average(values, window):\n"
        "    \"\"\"Return the average of each run of `window` consecutive values.\"\"\"\n"
        "    if window <= 0:\n"
        "        raise ValueError(\"window must be positive\")\n"
        "    averages = []\n"
        "    total = sum(values[:window])\n"
        "    averages.append(total / window)\n"
        "    for i in range(window, len(values)):\n"
        "        total += values[i] - values[i - window]\n"
        "        averages.append(total / window)\n"
        "    return averages\n\n\n"
        "if __name__ == \"__main__\":\n"
        "    temperatures = [12.5, 13.1, 15.0, 14.2, 16.8, 18.3, 17.9]\n"
        "    print(moving_average(temperatures, 3))\n"
    ),
    "science": (
        "Why is the sky blue? Sunlight contains every colour of visible light, and as it passes through "
        "the atmosphere it meets molecules of nitrogen and oxygen that are much smaller than its "
        "wavelength. Such small particles scatter short wavelengths far more strongly than long ones: "
        "the effect grows with the inverse fourth power of the wavelength, so blue light is scattered "
        "several times more than red light. When you look at any part of the sky away from the sun, "
        "you see this scattered light, and it is mostly blue. At sunset the light travels through much "
        "more air before it reaches you, most of the blue is scattered away along the path, and the "
        "light that remains looks orange and red. Clouds are white because their water droplets are "
        "large compared with the wavelength and scatter all colours about equally."
    ),
}


def sample_token_ids(tokenizer, texts: dict[str, str] | None = None) -> dict[str, torch.Tensor]:
    """Token ids of each sample document (no special tokens added), as 1-D LongTensors."""
    texts = SAMPLE_TEXTS if texts is None else texts
    return {name: torch.tensor(tokenizer(text, add_special_tokens=False)["input_ids"], dtype=torch.long)
            for name, text in texts.items()}


def rectangular_batch(sequences: Sequence[torch.Tensor], length: int) -> torch.Tensor:
    """Stack the first `length` ids of every sequence into a [B, length] batch."""
    short = [len(s) for s in sequences if len(s) < length]
    if short:
        raise ValueError(f"every sequence needs at least {length} tokens; the shortest has {min(short)}")
    return torch.stack([s[:length] for s in sequences])


def id_counts(ids: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """How many times each of the `vocab_size` ids occurs in `ids` (any shape) -> [vocab_size]."""
    return torch.bincount(ids.reshape(-1), minlength=vocab_size)


def plot_gradient_rows(grad: torch.Tensor, ids: Sequence[int], title: str = "", ax=None,
                       annotate: bool = False, row_sums: bool = False):
    """Heat map of a small [V, d] gradient table; the rows named in `ids` are marked on the y axis.

    annotate=True writes each cell's value into it (for small tables such as 10 x 4); row_sums=True
    labels the right-hand side with each row's sum.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _fig, ax = plt.subplots(figsize=(6, 4))
    g = grad.detach().float().numpy()
    limit = float(abs(g).max()) or 1.0
    image = ax.imshow(g, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
    counts = Counter(int(i) for i in ids)
    ax.set_yticks(range(g.shape[0]), [_("row {row}", row=r) + ("  " + _("(id used {count}x)", count=counts[r])
                                                                   if r in counts else "") for r in range(g.shape[0])])
    ax.set_xticks(range(g.shape[1]), [_("dim {j}", j=j) for j in range(g.shape[1])])
    ax.set_xlabel(_("embedding dimension"))
    ax.set_title(title or _("gradient of E"))
    if annotate:
        for r in range(g.shape[0]):
            for j in range(g.shape[1]):
                ax.text(j, r, f"{g[r, j] + 0.0:g}", ha="center", va="center", fontsize=9,
                        color="white" if abs(g[r, j]) > 0.6 * limit else "black")
    if row_sums:
        for r in range(g.shape[0]):
            ax.text(g.shape[1] - 0.4, r, " " + _("sum {value:g}", value=g[r].sum() + 0.0), va="center", fontsize=9)
        ax.set_xlim(-0.5, g.shape[1] + 0.6)
    plt.colorbar(image, ax=ax, label=_("gradient value"))
    return ax


def plot_timings(labels: Sequence[str], seconds: Sequence[float], title: str = "", ax=None):
    """Horizontal bars of run times in microseconds, on a log axis, each bar labelled with its value."""
    import matplotlib.pyplot as plt

    if ax is None:
        _fig, ax = plt.subplots(figsize=(7, 0.6 * len(labels) + 1.2))
    micro = [s * 1e6 for s in seconds]
    y = list(range(len(labels)))[::-1]
    ax.barh(y, micro, color=["tab:green", "tab:red", "tab:orange", "tab:purple"][: len(labels)])
    ax.set_yticks(y, labels)
    ax.set_xscale("log")
    ax.set_xlabel(_("time per call (microseconds, log scale)"))
    for yi, v in zip(y, micro):
        ax.text(v, yi, f" {v:,.0f} µs", va="center", fontsize=9)
    ax.margins(x=0.3)
    if title:
        ax.set_title(title)
    return ax


def plot_sparse_updates(counts: torch.Tensor, row_grad_norm: torch.Tensor, tokenizer=None, label_top: int = 4):
    """Two panels: the rank-frequency curve of a batch's ids, and each used row's gradient norm against its count."""
    import matplotlib.pyplot as plt

    used = torch.nonzero(counts).flatten()
    c = counts[used].float()
    n = row_grad_norm[used].float()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    ranked = torch.sort(c, descending=True).values
    left.loglog(range(1, len(ranked) + 1), ranked.tolist(), marker=".", linestyle="none")
    left.set_xlabel(_("rank of the token in this batch"))
    left.set_ylabel(_("occurrences in the batch"))
    left.set_title(_("the {n} distinct ids of the batch, most frequent first", n=len(used)))
    right.scatter(c.tolist(), n.tolist(), s=12, alpha=0.6)
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel(_("occurrences of the id in the batch"))
    right.set_ylabel(_("norm of its row's gradient"))
    right.set_title(_("gradient of each used row against its number of uses"))
    if tokenizer is not None:
        from .display import token_label

        for k in torch.argsort(c, descending=True, stable=True)[:label_top].tolist():
            right.annotate(token_label(tokenizer, int(used[k])), (float(c[k]), float(n[k])), fontsize=8, xytext=(4, -10),
                           textcoords="offset points")
    fig.tight_layout()
    return fig
