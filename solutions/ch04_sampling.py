"""Chapter 04 exercises: softmax and sampling.

Fill in each function, then run `python judge.py 04` (or `python judge.py top_p_filter` for one
exercise). `python judge.py hint top_p_filter` gives a hint without the answer.

The filters must give exactly what transformers' own logits warpers give (TopKLogitsWarper,
TopPLogitsWarper, MinPLogitsWarper in transformers.generation.logits_process, which keep at least
one token), on logits of any shape [..., V]: they work along the last dimension.

Leave the tensors, lists and models you are given unchanged unless the docstring says otherwise: the judge
compares them before and after your call.
"""
import torch
from torch import Tensor


def softmax(logits: Tensor, dim: int = -1) -> Tensor:
    """Probabilities exp(x_i) / sum_j exp(x_j) along `dim`, computed without overflow.

    logits:  any shape, any float dtype (keep it). Entries may be huge (1000) or -inf (masked tokens).
             A zero-size shape (e.g. [2, 0]) gives an empty result of that shape, as torch.softmax does.
    returns: a new tensor (never `logits` itself, not even when it is empty) of the same shape and dtype;
             non-negative, summing to 1 along `dim`; -inf entries get probability 0.
             float16/bfloat16 logits are computed in float32 and the result cast back (as torch.softmax
             does): computing in half precision itself is several units in the last place off.

    Example: softmax(torch.tensor([1000.0, 1000.0])) -> tensor([0.5000, 0.5000])   (no NaN)
    """
    # BEGIN SOLUTION
    if logits.numel() == 0:
        return logits.clone()  # nothing to normalise (amax would refuse a zero-size dim): empty, like torch.softmax
    x = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits  # accumulate in float32
    shifted = x - x.amax(dim=dim, keepdim=True)  # the largest entry becomes 0: exp cannot overflow
    e = shifted.exp()  # -inf -> 0
    return (e / e.sum(dim=dim, keepdim=True)).to(logits.dtype)
    # END SOLUTION


def apply_temperature(logits: Tensor, temperature: float) -> Tensor:
    """Logits divided by the temperature (T < 1 sharpens the distribution, T > 1 flattens it).

    logits:  [..., V];  temperature: a number > 0, else raise ValueError.
    returns: a new [..., V] tensor, same dtype (never `logits` itself, not even at T = 1): scaled LOGITS, not
             probabilities.

    Example: apply_temperature(torch.tensor([2.0, 1.0]), 0.5) -> tensor([4., 2.])
    """
    # BEGIN SOLUTION
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    return logits / temperature
    # END SOLUTION


def top_k_filter(logits: Tensor, k: int) -> Tensor:
    """Keep the k largest logits of each row, set the others to -inf.

    logits:  [..., V];  k >= 1 (k >= V keeps everything).
    returns: a new [..., V] tensor, same dtype (never `logits` itself, not even when nothing is removed).
             A logit equal to the k-th largest is kept too (ties can keep more than k): with k = 1, every
             logit equal to the largest one is kept.

    Example: top_k_filter(torch.tensor([1.0, 3.0, 2.0, 0.0]), 2) -> tensor([-inf, 3., 2., -inf])
    """
    # BEGIN SOLUTION
    k = min(k, logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]  # the k-th largest value of each row
    return logits.masked_fill(logits < kth, float("-inf"))  # ties with the k-th value stay
    # END SOLUTION


def top_p_filter(logits: Tensor, p: float) -> Tensor:
    """Nucleus filter: keep the most likely tokens until their probability mass reaches p, set the rest to -inf.

    logits:  [..., V];  0 <= p <= 1.
    returns: a new [..., V] tensor, same dtype (never `logits` itself, not even when nothing is removed).

    The rule, as transformers' TopPLogitsWarper applies it: the probabilities are the softmax of the logits in
    their own dtype (float32 logits give float32 probabilities); sort them ascending (least likely first, tied
    tokens in any order) and take their cumulative sum; a token is REMOVED when that sum, up to and including
    it, is <= 1 - p (a sum exactly equal to 1 - p removes it), except the most likely token, which is always
    kept. In exact arithmetic this is: going from the most likely token down, a token is kept while the mass of
    the tokens before it is strictly below p. So the token whose probability takes the kept mass past p is KEPT,
    and once the kept mass is exactly p, no further token is.
    Rounding: where the probabilities are not exact in that dtype, a token whose cumulative sum lies within
    rounding of 1 - p (1e-5 in float32 and float64, the dtype's own precision in float16 and bfloat16) may be
    kept or removed; with exact probabilities (0.5, 0.25, 0.125, ...) the rule above decides.

    Examples: probabilities [0.5, 0.3, 0.15, 0.05] with p = 0.7 keep the first two (0.5 + 0.3 >= 0.7).
              probabilities [0.5, 0.25, 0.125, 0.125] with p = 0.75 keep the first two (the two 0.125 tokens
              sum to 0.25 <= 1 - p); with p = 0.875, three (one of the tied 0.125 tokens goes); with p = 0.5, one.
    """
    # BEGIN SOLUTION
    sorted_logits, order = logits.sort(dim=-1)  # ascending: least likely first
    # Drop tokens from the bottom while the dropped mass stays <= 1 - p. The token that would push it
    # past 1 - p is the one whose inclusion makes the kept mass reach p: it stays.
    drop_sorted = softmax(sorted_logits).cumsum(dim=-1) <= 1 - p
    drop_sorted[..., -1] = False  # always keep the most likely token
    drop = drop_sorted.scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))
    # END SOLUTION


def min_p_filter(logits: Tensor, min_p: float) -> Tensor:
    """Keep tokens whose probability is at least min_p times the top token's probability; others -inf.

    logits:  [..., V];  0 <= min_p <= 1.
    returns: a new [..., V] tensor, same dtype (never `logits` itself, not even when nothing is removed).

    The rule, as transformers' MinPLogitsWarper applies it: the probabilities are the softmax of the logits in
    their own dtype, the threshold is min_p * (the row's largest probability), in that dtype too, and a token is
    removed only when its probability is strictly below the threshold: a probability EQUAL to min_p * p_max is
    kept (so the most likely token, and any token tied with it, always stays).
    Rounding: where the probabilities are not exact in that dtype, a token whose probability lies within
    rounding of the threshold (1e-5 relative in float32 and float64, the dtype's own precision in float16 and
    bfloat16) may be kept or removed; with exact probabilities (0.5, 0.25, 0.125, ...) the rule above decides.

    Examples: probabilities [0.6, 0.3, 0.05, 0.05] with min_p = 0.1 (threshold 0.06) keep the first two.
              probabilities [0.5, 0.25, 0.125, 0.125] with min_p = 0.25 (threshold exactly 0.125) keep all four;
              with min_p = 0.5 (threshold 0.25), the first two.
    """
    # BEGIN SOLUTION
    probs = softmax(logits)
    threshold = min_p * probs.amax(dim=-1, keepdim=True)
    return logits.masked_fill(probs < threshold, float("-inf"))  # the top token always passes
    # END SOLUTION


def sample_next_token(logits: Tensor, temperature: float = 1.0, top_k: int | None = None,
                      top_p: float | None = None, generator: torch.Generator | None = None) -> int:
    """Pick one token id from next-token logits [V].

    temperature == 0: greedy, return the argmax (no random draw).
    Otherwise, in the order transformers uses: apply_temperature, then top_k_filter (if top_k is not None),
    then top_p_filter (if top_p is not None), then softmax over the whole vocabulary [V], then exactly one
    draw `torch.multinomial(probs, 1, generator=generator)`, so that a seeded generator reproduces it.
    returns: a Python int.

    Example: sample_next_token(torch.tensor([0.0, 5.0, 1.0]), temperature=0) -> 1
    """
    # BEGIN SOLUTION
    if temperature == 0:
        return int(logits.argmax())
    logits = apply_temperature(logits, temperature)
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    probs = softmax(logits)
    return int(torch.multinomial(probs, 1, generator=generator))
    # END SOLUTION


@torch.no_grad()  # SOLUTION
def greedy_generate(model, input_ids: Tensor, max_new_tokens: int) -> Tensor:
    """Greedy decoding written as an explicit loop over the model's forward pass.

    model:     a transformers causal LM (model(ids).logits has shape [B, T, V]).
    input_ids: LongTensor [B, T].
    returns:   a new LongTensor [B, T + max_new_tokens] (never `input_ids` itself, not even for
               max_new_tokens = 0: then a copy): the prompt followed by the new tokens, each the
               argmax of the logits at the last position. Equal to
               model.generate(input_ids, do_sample=False, max_new_tokens=max_new_tokens) (no early stop).
    """
    # BEGIN SOLUTION
    ids = input_ids.clone()  # a new tensor even when max_new_tokens = 0: the caller's input_ids stay its own
    for _ in range(max_new_tokens):
        logits = model(ids).logits[:, -1, :]  # [B, V]: only the last position predicts the next token
        next_id = logits.argmax(dim=-1, keepdim=True)  # [B, 1]
        ids = torch.cat([ids, next_id], dim=-1)
    return ids
    # END SOLUTION


def repetition_penalty(logits: Tensor, input_ids: Tensor, penalty: float) -> Tensor:
    """Stretch: the CTRL repetition penalty, equal to transformers' RepetitionPenaltyLogitsProcessor(penalty).

    logits:    [B, V] next-token logits;  input_ids: LongTensor [B, T], the tokens seen so far in each row
               (T may be 0);  penalty > 0 (1.0 changes nothing, > 1 discourages repeats, < 1 encourages them).
    returns:   a new [B, V] tensor, same dtype: for every token that occurs in row b's ids (once, however often
               it occurs), a positive logit is divided by `penalty` and a negative one multiplied by it; other
               logits, and other rows, are unchanged. Do not modify `logits` in place.

    Example: logits [[2.0, -1.0, 0.5]], ids [[0, 1, 1]], penalty 2.0 -> [[1.0, -2.0, 0.5]].
    """
    # BEGIN SOLUTION
    seen = logits.gather(-1, input_ids)  # [B, T]: a repeated id gathers the same logit again
    penalised = torch.where(seen < 0, seen * penalty, seen / penalty)
    return logits.scatter(-1, input_ids, penalised)  # repeated ids write the same value: applied once
    # END SOLUTION


# Chapter 04 quiz: `python judge.py quiz 04` prints the questions.
# Put one letter per question, e.g. {1: "a", 2: "c", 3: "b", 4: "d", 5: "a"}.
QUIZ = {1: "b", 2: "c", 3: "b", 4: "a", 5: "d"}  # SOLUTION
# PROMPT: QUIZ = {1: None, 2: None, 3: None, 4: None, 5: None}
