EXERCISE = "min_p_filter"
MISTAKE = "writes -inf into the caller's logits (masked_fill_) and returns them"
EXPECT = "you changed an input in place"

import torch


def min_p_filter(logits, min_p):
    probs = softmax(logits)
    return logits.masked_fill_(probs < min_p * probs.amax(dim=-1, keepdim=True), float("-inf"))
