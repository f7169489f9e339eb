"""Adds the per-rank log-sum-exps."""
EXERCISE = 'merge_logsumexp'
MISTAKE = 'adds the per-rank log-sum-exps'
EXPECT = 'added the per-rank log-sum-exps'

def merge_logsumexp(local_max, local_sumexp):
    return (local_max + local_sumexp.log()).sum(0)
