EXERCISE = 'repetition_penalty'
MISTAKE = 'divided every seen logit by the penalty, negative ones too (which moves them up, towards 0)'
EXPECT = 'divided every seen logit'

import torch


def repetition_penalty(logits, input_ids, penalty):
    return logits.scatter(-1, input_ids, logits.gather(-1, input_ids) / penalty)
