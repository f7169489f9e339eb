"""positive logits multiplied and negative ones divided."""
EXERCISE = 'repetition_penalty'
MISTAKE = 'positive logits multiplied and negative ones divided'
EXPECT = 'swapped'

import torch

def repetition_penalty(logits, input_ids, penalty):
    seen = logits.gather(-1, input_ids)
    return logits.scatter(-1, input_ids, torch.where(seen < 0, seen / penalty, seen * penalty))
