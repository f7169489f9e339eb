"""the normal equations with a ones column, formed and solved in float32."""
EXERCISE = 'fit_tuned_lens'
MISTAKE = 'the normal equations with a ones column, formed and solved in float32'
EXPECT = 'float32'

import torch


def fit_tuned_lens(h_layer, h_final, ridge):
    X = torch.cat([h_layer.float(), torch.ones(h_layer.shape[0], 1)], 1)
    pen = torch.diag(torch.tensor([1.0] * h_layer.shape[1] + [0.0]))
    sol = torch.linalg.solve(X.T @ X + ridge * pen, X.T @ h_final.float())
    return sol[:-1].to(h_layer.dtype), sol[-1].to(h_layer.dtype)
