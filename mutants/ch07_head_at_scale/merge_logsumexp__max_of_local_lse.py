"""Takes the largest per-rank log-sum-exp instead of combining them."""
EXERCISE = 'merge_logsumexp'
MISTAKE = 'takes the largest per-rank log-sum-exp instead of combining them'
EXPECT = 'largest per-rank log-sum-exp'

def merge_logsumexp(local_max, local_sumexp):
    return (local_max + local_sumexp.log()).amax(0)
