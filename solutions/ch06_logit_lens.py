"""Chapter 06 exercises: the logit lens.

Fill in each function, then run `python judge.py 06` (or `python judge.py logit_lens`
for one exercise). `python judge.py hint logit_lens` gives a hint without the answer.

Leave the tensors, lists and models you are given unchanged unless the docstring says otherwise: the judge
compares them before and after your call.
"""
import torch
from torch import Tensor


def logit_lens(model, input_ids: Tensor) -> Tensor:
    """Decode the last position of every layer's hidden state with the model's final norm and LM head.

    model:     a Hugging Face causal LM (LlamaForCausalLM, Qwen3ForCausalLM, GPT2LMHeadModel, ...)
               with N = model.config.num_hidden_layers blocks, in eval mode.
    input_ids: LongTensor [1, T], one prompt.
    returns:   float32 [N + 1, V] log-probabilities (log_softmax over the vocabulary) at the LAST position:
               row 0 from the embedding output (before any block), row i from the state after block i.
               The last row must equal model(input_ids).logits[0, -1].float().log_softmax(-1) (for a float32
               model, logits[0, -1].log_softmax(-1)).

    Where things are, for any of these architectures:
      final norm: model.base_model is the stack without the head (model.model for llama/qwen3,
                  model.transformer for gpt2); its final norm is `.norm` (llama, qwen3) or `.ln_f` (gpt2),
                  e.g. getattr(model.base_model, "norm", None) or model.base_model.ln_f
      LM head:    model.get_output_embeddings()   (an nn.Linear [V, d]; tied models share it with the embedding)
    Find out yourself which hidden states already went through the final norm.

    Example (the course model, 30 blocks): logit_lens(model, tok("The capital of France is",
             return_tensors="pt").input_ids) has shape [31, 49152], and row 30 puts ' Paris' on top.
    """
    # BEGIN SOLUTION
    base = model.base_model
    final_norm = base.norm if hasattr(base, "norm") else base.ln_f
    head = model.get_output_embeddings()
    with torch.no_grad():
        states = model(input_ids, output_hidden_states=True).hidden_states
        # every state but the last still needs the final norm; the last one already went through it
        rows = [final_norm(h[0, -1]) for h in states[:-1]] + [states[-1][0, -1]]
        return head(torch.stack(rows)).float().log_softmax(dim=-1)  # float32 whatever the model's dtype
    # END SOLUTION


def target_rank_by_layer(lens: Tensor, target_id: int) -> Tensor:
    """Rank of token `target_id` in every row of `lens` (0 = the most likely token).

    lens:      [L, V] scores per layer (log-probabilities from logit_lens; any monotone score works).
    target_id: a token id in [0, V).
    returns:   LongTensor [L]; the rank is the number of tokens with a STRICTLY larger value,
               so tied tokens share the better rank.

    Example: target_rank_by_layer(torch.tensor([[0.1, 0.7, 0.2], [0.5, 0.2, 0.3]]), 2) -> tensor([1, 1])
    """
    # BEGIN SOLUTION
    return (lens > lens[:, target_id:target_id + 1]).sum(dim=-1)
    # END SOLUTION


def kl_to_final(lens: Tensor) -> Tensor:
    """KL divergence from every layer's distribution to the final one: KL(final || layer).

    lens:    [L, V] log-probabilities (each row sums to 1 after exp), the last row is the final layer.
             An entry may be -inf (a token with probability 0).
    returns: [L], same dtype as lens; KL(P || Q) = sum_v P(v) * (log P(v) - log Q(v)) with P the last
             row and Q row i. The last entry is exactly 0. A token the final row gives probability 0 (-inf,
             or a log-probability so low that its exp is 0) adds 0 (0 log 0 = 0, never NaN); one that row i
             rules out and the final row does not makes it inf.

    Example: lens = torch.tensor([[0.5, 0.5], [0.9, 0.1]]).log()
             kl_to_final(lens) -> tensor([0.3681, 0.0000])   (0.9 ln 1.8 + 0.1 ln 0.2)
    """
    # BEGIN SOLUTION
    final = lens[-1]
    p = final.exp()
    kl = torch.where(p == 0, 0.0, p * (final - lens)).sum(dim=-1)  # 0 * log 0 = 0 (and 0 * inf is not NaN)
    kl[-1] = 0.0  # the same row: exactly zero
    return kl
    # END SOLUTION


def fit_tuned_lens(h_layer: Tensor, h_final: Tensor, ridge: float) -> tuple[Tensor, Tensor]:
    """Stretch: a per-layer affine ("tuned") lens fitted in closed form: ridge regression from one layer's residual
    states to the final states, so that h_layer @ A + b approximates h_final.

    h_layer: [N, d_in] states of one layer (one row per token);  h_final: [N, d_out] the final states for the
             same tokens (chapter 06 passes the last entry of hidden_states, already through the final norm);  ridge >= 0 (ridge = 0 needs N > d_in and full-rank centred rows).
    returns: (A [d_in, d_out], b [d_out]) in h_layer's dtype, minimising
             sum_n |h_layer[n] @ A + b - h_final[n]|^2 + ridge * |A|_F^2   (the bias b is NOT penalised).
             Compute in float64 and cast back.

    Example: h_layer = [[0.], [1.], [2.], [3.]], h_final = [[1.], [3.], [5.], [7.]], ridge = 0
             -> A = [[2.]], b = [1.]
    """
    # BEGIN SOLUTION
    X, Y = h_layer.double(), h_final.double()
    x_mean, y_mean = X.mean(dim=0), Y.mean(dim=0)
    Xc, Yc = X - x_mean, Y - y_mean  # centring takes the unpenalised bias out of the problem
    gram = Xc.T @ Xc + ridge * torch.eye(X.shape[1], dtype=torch.float64)
    A = torch.linalg.solve(gram, Xc.T @ Yc)  # [d_in, d_out]
    b = y_mean - x_mean @ A
    return A.to(h_layer.dtype), b.to(h_layer.dtype)
    # END SOLUTION


# Chapter 06 quiz: `python judge.py quiz 06` prints the questions.
# Put one letter per question, e.g. {1: "a", 2: "c", 3: "b", 4: "d", 5: "a"}.
QUIZ = {1: "a", 2: "d", 3: "d", 4: "c", 5: "c", 6: "a"}  # SOLUTION
# PROMPT: QUIZ = {1: None, 2: None, 3: None, 4: None, 5: None, 6: None}
