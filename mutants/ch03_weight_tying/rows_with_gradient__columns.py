"""Reduced over dim 0: counts the columns (dimensions) that hold a non-zero entry, not the rows (tokens)."""
EXERCISE = 'rows_with_gradient'
MISTAKE = 'counted non-zero columns (reduction over dim 0)'
EXPECT = 'COLUMNS'


def rows_with_gradient(grad):
    return int((grad != 0).any(dim=0).sum()) if grad.numel() else 0
