EXERCISE = "lm_head_flops"
MISTAKE = "computes in floating point and converts back with int(): exact only below 2**53"
EXPECT = 'went through a float'


def lm_head_flops(d, V, positions=1):
    return int(2.0 * d * V * positions)
