EXERCISE = "fit_tuned_lens"
MISTAKE = "solves in float64 and forgets to cast A and b back to h_layer's dtype"
EXPECT = "only the dtype differs"
import torch


def fit_tuned_lens(h_layer, h_final, ridge):
    X, Y = h_layer.double(), h_final.double()
    x_mean, y_mean = X.mean(dim=0), Y.mean(dim=0)
    Xc, Yc = X - x_mean, Y - y_mean
    A = torch.linalg.solve(Xc.T @ Xc + ridge * torch.eye(X.shape[1], dtype=torch.float64), Xc.T @ Yc)
    return A, y_mean - x_mean @ A
