"""log(penalty) subtracted from the seen logits (a presence penalty)."""
EXERCISE = 'repetition_penalty'
MISTAKE = 'log(penalty) subtracted from the seen logits (a presence penalty)'
EXPECT = 'presence-style'

import torch

import math


def repetition_penalty(logits, input_ids, penalty):
    seen = logits.gather(-1, input_ids)
    return logits.scatter(-1, input_ids, seen - math.log(penalty))
