"""the mask inverted: the tokens not seen are penalised."""
EXERCISE = 'repetition_penalty'
MISTAKE = 'the mask inverted: the tokens not seen are penalised'
EXPECT = 'NOT seen'

import torch

def repetition_penalty(logits, input_ids, penalty):
    seen = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, input_ids, True)
    return torch.where(~seen, torch.where(logits < 0, logits * penalty, logits / penalty), logits)
