EXERCISE = 'repetition_penalty'
MISTAKE = 'subtracted log(penalty) from the seen logits (a presence-style penalty)'
EXPECT = 'subtracted log(penalty)'

import math

import torch


def repetition_penalty(logits, input_ids, penalty):
    return logits.scatter(-1, input_ids, logits.gather(-1, input_ids) - math.log(penalty))
