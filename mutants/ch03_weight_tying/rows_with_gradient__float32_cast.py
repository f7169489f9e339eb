EXERCISE = "rows_with_gradient"
MISTAKE = "casts the gradient to float32 first: float64 entries below 1e-45 flush to zero and their rows are not counted"
EXPECT = 'cast the gradient to float32'


def rows_with_gradient(grad):
    return int((grad.float() != 0).any(dim=1).sum())
