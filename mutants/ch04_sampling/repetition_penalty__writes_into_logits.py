EXERCISE = "repetition_penalty"
MISTAKE = "penalises the seen logits by writing into `logits` itself (the caller's tensor changes)"
EXPECT = "changed `logits` in place"
import torch


def repetition_penalty(logits, input_ids, penalty):
    seen = logits.gather(-1, input_ids)
    penalised = torch.where(seen < 0, seen * penalty, seen / penalty)
    logits.scatter_(-1, input_ids, penalised)  # in place: the caller's logits change too
    return logits
