EXERCISE = 'repetition_penalty'
MISTAKE = 'multiplied positive logits and divided negative ones (the two rules swapped)'
EXPECT = 'swapped the two rules'

import torch


def repetition_penalty(logits, input_ids, penalty):
    seen = logits.gather(-1, input_ids)
    return logits.scatter(-1, input_ids, torch.where(seen > 0, seen * penalty, seen / penalty))
