"""the sign test is seen <= 0 and the result is returned as float32."""
EXERCISE = 'repetition_penalty'
MISTAKE = 'the sign test is seen <= 0 and the result is returned as float32'
EXPECT = 'only the dtype differs'

import torch

def repetition_penalty(logits, input_ids, penalty):
    seen = logits.float().gather(-1, input_ids)
    return logits.float().scatter(-1, input_ids, torch.where(seen <= 0, seen * penalty, seen / penalty))
