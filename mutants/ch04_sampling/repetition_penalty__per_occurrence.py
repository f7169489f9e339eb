EXERCISE = 'repetition_penalty'
MISTAKE = 'a loop over the ids that penalises a token once per occurrence (penalty ** count)'
EXPECT = 'once per occurrence'

import torch


def repetition_penalty(logits, input_ids, penalty):
    out = logits.clone()
    for b in range(input_ids.shape[0]):
        for t in input_ids[b].tolist():
            v = out[b, t]
            out[b, t] = v * penalty if v < 0 else v / penalty
    return out
