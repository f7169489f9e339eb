EXERCISE = "min_p_filter"
MISTAKE = "masks with the finite sentinel -1e9 instead of -inf: the dropped tokens keep a (tiny) probability"
EXPECT = 'expected -inf'
import torch


def min_p_filter(logits, min_p):
    probs = torch.softmax(logits.float(), dim=-1).to(logits.dtype)
    threshold = min_p * probs.amax(dim=-1, keepdim=True)
    return logits.masked_fill(probs < threshold, -1e9)
