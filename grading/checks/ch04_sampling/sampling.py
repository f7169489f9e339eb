"""Chapter 04: sample_next_token, seeded draws against the judge's own draws, and frequency tests."""
from __future__ import annotations

import torch

from ...worker.calls.ch04 import SAMPLE_SEEDS, STAT_DRAWS
from ...i18n import _, verbatim
from ..compare import CheckFailed, Diagnosis, expect_equal, named_mistake
from ..fixtures import random_tensor
from .common import FIVE, _real
from .filters import _top_p_dropping_crossing

# ---------------------------------------------------------------- sample_next_token


def _pipeline(logits: torch.Tensor, temperature: float, top_k, top_p, *, order=("t", "k", "p"),
              crossing_bug: bool = False) -> torch.Tensor:
    """Probabilities [V] after transformers' warpers in `order` (t = temperature, k = top-k, p = top-p)."""
    from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    x = logits.reshape(1, -1)
    for step in order:
        if step == "t" and temperature != 1:
            x = TemperatureLogitsWarper(float(temperature))(None, x)
        elif step == "k" and top_k is not None:
            x = TopKLogitsWarper(top_k=top_k)(None, x)
        elif step == "p" and top_p is not None:
            x = _top_p_dropping_crossing(x, top_p, True) if crossing_bug else TopPLogitsWarper(top_p=top_p)(None, x)
    return torch.softmax(x, -1)[0]


def _draw(probs: torch.Tensor, seed: int | None, gen: torch.Generator | None = None) -> int:
    gen = gen if gen is not None else torch.Generator().manual_seed(seed)
    return int(torch.multinomial(probs, 1, generator=gen))


def _alternatives(logits, t, k, p):
    """(explanation, probabilities) of the usual wrong pipelines that differ from the right one here."""
    alts = []
    if t != 1:
        alts.append((_("the temperature had no effect: it must divide the logits BEFORE softmax (applied after "
                       "softmax, or to the probabilities, it changes nothing once they are renormalised)."),
                     _pipeline(logits, 1.0, k, p)))
        alts.append((_("you multiplied the logits by the temperature; divide them by it."),
                     _pipeline(logits, 1.0 / t, k, p)))
    if p is not None:
        alts.append((_("top-p dropped the token crossing the threshold: keep tokens until the kept mass reaches p, "
                       "including the one that takes it past p."), _pipeline(logits, t, k, p, crossing_bug=True)))
        alts.append((_("top_p = 0.0 was treated as 'no top-p' (`if top_p:` is False for 0.0): test `top_p is not "
                       "None`; p = 0 keeps only the top token.") if p == 0 else
                     _("top-p ignored: apply top-p after temperature and top-k."), _pipeline(logits, t, k, None)))
    if k is not None:
        alts.append((_("top-k ignored: apply top-k after temperature."), _pipeline(logits, t, None, p)))
    if k is not None and p is not None:
        alts.append((_("top-p before top-k: transformers applies temperature, then top-k, then top-p."),
                     _pipeline(logits, t, k, p, order=("t", "p", "k"))))
    if t != 1 and (k is not None or p is not None):
        alts.append((_("filters before temperature: transformers divides by the temperature first, then filters."),
                     _pipeline(logits, t, k, p, order=("k", "p", "t"))))
    right = _pipeline(logits, t, k, p)
    # each mistake stays one candidate: two that give the same probabilities here are both possible causes, and
    # neither is named (named_mistake), rather than one message naming two mistakes
    return [(e, q) for e, q in alts if not torch.allclose(q, right, atol=1e-4)]


def _int_list(out, what: str) -> list[int]:
    if not isinstance(out, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in out):
        bad = next((v for v in (out if isinstance(out, list) else [out])
                    if not (isinstance(v, int) and not isinstance(v, bool))), out)
        raise CheckFailed(_("{what}: sample_next_token must return a Python int (a token id), got "
                            "{kind} {bad}. Use int(...) or .item() on a one-element tensor.",
                            what=what, kind=type(bad).__name__, bad=verbatim(repr(bad))))
    return out


SAMPLE_INPUTS = {
    _("the five logits, T = 1, seeds 0..29"): lambda: (torch.tensor(FIVE), 1.0, None, None),
    _("V = 20, T = 0.7, top_k = 5, seeds 0..29"): lambda: (random_tensor((20,), 41, 2.0), 0.7, 5, None),
    _("V = 20, T = 1.3, top_p = 0.9, seeds 0..29"): lambda: (random_tensor((20,), 42, 2.0), 1.3, None, 0.9),
    _("V = 50, T = 0.8, top_k = 10, top_p = 0.8, seeds 0..29"): lambda: (random_tensor((50,), 43, 2.0), 0.8, 10, 0.8),
    _("the five logits, T = 2.0, top_p = 0.9, seeds 0..29"): lambda: (torch.tensor(FIVE), 2.0, None, 0.9),
    _("the course model's logits, T = 0.8, top_p = 0.9, seeds 0..9"): lambda: (_real(), 0.8, None, 0.9),
    _("V = 20, T = 1.0, top_p = 0.0 (only the top token), seeds 0..29"): lambda: (random_tensor((20,), 48, 1.0), 1.0, None, 0.0),
}


def _check_seeded(out, inputs):
    logits, t, k, p = inputs
    draws, again = _int_list(out["draws"], _("draw")), _int_list(out["again"], _("draw"))
    if draws[:3] != again:
        raise CheckFailed(_("the same seed gave different tokens ({first} then {again}). Pass the generator "
                            "on: torch.multinomial(probs, 1, generator=generator).",
                            first=str(draws[:3]), again=str(again)))
    seeds = SAMPLE_SEEDS[:len(draws)]
    probs = _pipeline(logits, t, k, p)
    expected = [_draw(probs, s) for s in seeds]
    if draws == expected:
        return
    i = next(i for i, (a, b) in enumerate(zip(draws, expected)) if a != b)
    msg = _("with seed {seed}: expected token {want}, got {got} ({n_bad} of {n} draws differ). The judge divides by "
            "the temperature, applies top-k, then top-p (transformers' warpers), takes softmax over the whole "
            "vocabulary and draws torch.multinomial(probs, 1, generator=generator).",
            seed=seeds[i], want=expected[i], got=draws[i], n_bad=sum(a != b for a, b in zip(draws, expected)),
            n=len(draws))
    if 0 <= draws[i] < probs.numel() and float(probs[draws[i]]) == 0.0:
        msg += _(" Token {token} has probability 0 after filtering: it should never be drawn.", token=draws[i])
    mistakes = [(e, lambda q=q: [_draw(q, s) for s in seeds]) for e, q in _alternatives(logits, t, k, p)]
    mistakes.append((_("you drew from the kept tokens only (a shorter probability vector consumes different random "
                       "numbers). Pass the full [V] probabilities, zeros included, to torch.multinomial."),
                     lambda: _draws_from_kept(probs, seeds)))
    diagnosis = named_mistake(draws, mistakes)
    if not diagnosis:
        raise CheckFailed(msg + "\n  " + _("If the frequency cases pass, your sampler has the right distribution but "
                                           "draws differently: use torch.multinomial(probs, 1, generator=generator) on "
                                           "the full-vocabulary probabilities."))
    raise diagnosis.fail(msg)


def _draws_from_kept(probs: torch.Tensor, seeds) -> list[int]:
    kept = probs.nonzero().flatten()
    return [int(kept[_draw(probs[kept], s)]) for s in seeds]


def _check_one_generator(out, inputs):
    logits, t, k, p = inputs
    draws = _int_list(out["draws"], _("draw"))
    gen = torch.Generator().manual_seed(123)
    probs = _pipeline(logits, t, k, p)
    expected = [_draw(probs, None, gen) for _draw_index in range(30)]
    if draws != expected:
        i = next(i for i, (a, b) in enumerate(zip(draws, expected)) if a != b)
        raise CheckFailed(_("30 draws from one generator (seed 123): draw {i} should be token {want}, got {got}. "
                            "Each call must take exactly one torch.multinomial(probs, 1, generator=generator) draw "
                            "from the generator it is given, and nothing else from it.",
                            i=i, want=expected[i], got=draws[i]))


def _check_greedy_t0(out, inputs):
    rows = inputs[0]
    draws = _int_list(out["draws"], _("draw"))
    expected = [int(r.argmax()) for r in rows]
    expect_equal(draws, expected, _("temperature 0 must return the argmax of each logit vector"), mistakes=[])


def _check_t0_interleaved(out, inputs):
    rows = inputs[0]
    draws = _int_list(out["draws"], _("draw"))
    gen, consuming = torch.Generator().manual_seed(7), torch.Generator().manual_seed(7)
    expected, if_t0_draws = [], []
    for r in rows:
        probs = torch.softmax(r, -1)
        expected += [int(r.argmax()), _draw(probs, None, gen)]
        _draw(torch.nn.functional.one_hot(r.argmax(), r.numel()).float(), None, consuming)  # the wrong extra draw
        if_t0_draws += [int(r.argmax()), _draw(probs, None, consuming)]
    if len(draws) != len(expected):
        raise CheckFailed(_("expected {n} draws, got {got}.", n=len(expected), got=len(draws)))
    for i, (got, want) in enumerate(zip(draws, expected)):
        if got != want:
            kind = _("temperature 0 (the argmax)") if i % 2 == 0 else _("temperature 1")
            msg = _("one generator (seed 7), calls alternating temperature 0 and temperature 1: call {i} "
                    "({kind}) should give token {want}, got {got}.", i=i, kind=kind, want=want, got=got)
            if i % 2 == 1 and draws[::2] == expected[::2] and draws[:i + 1] == if_t0_draws[:i + 1]:
                raise CheckFailed(msg, mistake=_(
                    "the temperature-0 calls returned the argmax but also drew from the generator, which shifts "
                    "every later draw. At temperature 0 return int(logits.argmax()) before anything touches the "
                    "generator: greedy must not draw."))
            raise CheckFailed(msg)


STAT_INPUTS = {
    _("{n:,} draws, V = 8, T = 0.7, top_k = 6, top_p = 0.9: frequencies vs probabilities", n=STAT_DRAWS):
        lambda: (random_tensor((8,), 44, 1.5), 0.7, 6, 0.9),
    _("{n:,} draws, V = 6, T = 2.0, no filters: frequencies vs probabilities", n=STAT_DRAWS):
        lambda: (random_tensor((6,), 45, 2.0), 2.0, None, None),
    _("{n:,} draws, the five logits, T = 1, top_p = 0.9: frequencies vs probabilities", n=STAT_DRAWS):
        lambda: (torch.tensor(FIVE), 1.0, None, 0.9),
}


def _chi_square(counts: torch.Tensor, probs: torch.Tensor) -> tuple[float, int, float]:
    """(statistic, degrees of freedom, p-value) of counts against probabilities; p = 0 if a 0-probability
    token was drawn."""
    from scipy.stats import chi2

    n = float(counts.sum())
    if bool((counts[probs == 0] > 0).any()):
        return float("inf"), 0, 0.0
    support = probs > 0
    if int(support.sum()) < 2:
        return 0.0, 0, 1.0
    expected = n * probs[support].double()
    stat = float(((counts[support].double() - expected) ** 2 / expected).sum())
    dof = int(support.sum()) - 1
    return stat, dof, float(chi2.sf(stat, dof))


def _check_frequencies(out, inputs):
    logits, t, k, p = inputs
    draws = _int_list(out["draws"], _("draw"))
    V = logits.numel()
    if any(not 0 <= d < V for d in draws):
        raise CheckFailed(_("a draw is outside [0, {V}): {bad}.", V=V, bad=next(d for d in draws if not 0 <= d < V)))
    counts = torch.bincount(torch.tensor(draws), minlength=V)
    probs = _pipeline(logits, t, k, p)
    stat, dof, pvalue = _chi_square(counts, probs)
    if pvalue >= 1e-4:
        return
    freq = ", ".join(f"{c / len(draws):.3f}" for c in counts.tolist())
    want = ", ".join(f"{q:.3f}" for q in probs.tolist())
    if dof == 0 and stat == float("inf"):
        z = int(((counts > 0) & (probs == 0)).nonzero()[0])
        head = _("token {z} was drawn {count} times but has probability 0 after filtering.", z=z,
                 count=int(counts[z]))
    else:
        head = _("the frequencies do not follow the probabilities: chi-square {stat:.1f} with {dof} dof "
                 "(p = {pvalue:.2g}).", stat=stat, dof=dof, pvalue=pvalue)
    msg = head + "\n  " + _("expected probabilities [{want}]\n  your frequencies      [{freq}]", want=want, freq=freq)
    fitting = list(dict.fromkeys(e for e, q in _alternatives(logits, t, k, p) if _chi_square(counts, q)[2] >= 1e-3))
    # named only when one known mistake alone fits the frequencies; several that fit are listed as possible causes
    raise (Diagnosis(mistake=fitting[0]) if len(fitting) == 1 else Diagnosis(causes=tuple(fitting))).fail(msg)
