"""Wrong: the loss is read to the host inside the loop (to print or log it)."""
import numpy as np

import gpuarr as ga


def prepare_model(params, device):
    return {name: p.to(device) for name, p in params.items()}


def prepare_batch(batch, device):
    return ga.asarray(batch, device=device)


def fit(params, batches, device, lr=0.1):
    params = prepare_model(params, device)
    w, b = params["w"], params["b"]
    losses = []
    for batch in batches:
        B = prepare_batch(ga.asarray(batch), device)
        X, y = B[:, :2], B[:, 2]
        r = X @ w + b - y
        losses.append(float((r * r).mean()))
        w = w - lr * 2 * (X.T @ r) / len(batch)
        b = b - lr * 2 * r.mean()
    return {"w": w, "b": b}, np.array(losses, dtype=np.float32)
