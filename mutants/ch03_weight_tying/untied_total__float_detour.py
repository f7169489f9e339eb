EXERCISE = "untied_total"
MISTAKE = "adds the table through a float (V * d * 1.0) and converts back with int(): exact only below 2**53"
EXPECT = 'went through a float'


def untied_total(vocab_size, d_model, total_params):
    return int(total_params + vocab_size * d_model * 1.0)
