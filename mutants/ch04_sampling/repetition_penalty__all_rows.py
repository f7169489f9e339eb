EXERCISE = 'repetition_penalty'
MISTAKE = 'penalised the tokens seen in any row of the batch (the flattened ids) in every row'
EXPECT = 'seen in ANY row'

import torch


def repetition_penalty(logits, input_ids, penalty):
    seen = torch.zeros(logits.shape[-1], dtype=torch.bool)
    seen[input_ids.reshape(-1)] = True
    penalised = torch.where(logits < 0, logits * penalty, logits / penalty)
    return torch.where(seen, penalised, logits)
