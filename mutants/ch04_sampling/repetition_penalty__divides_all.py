"""every seen logit divided by the penalty, negative ones too."""
EXERCISE = 'repetition_penalty'
MISTAKE = 'every seen logit divided by the penalty, negative ones too'
EXPECT = 'NEGATIVE logit'

import torch

def repetition_penalty(logits, input_ids, penalty):
    seen = logits.gather(-1, input_ids)
    return logits.scatter(-1, input_ids, seen / penalty)
