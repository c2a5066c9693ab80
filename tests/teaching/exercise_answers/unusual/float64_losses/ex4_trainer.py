"""Correct, unusual: the losses are logged in float64 on the device, and the model is
moved with copyto (the model is moved once, so a copy is fine there)."""
import numpy as np

import gpuarr as ga


def prepare_model(params, device):
    return {name: p.copyto(device) for name, p in params.items()}


def prepare_batch(batch, device):
    if isinstance(batch, np.ndarray):
        return ga.asarray(batch, device=device)
    return batch.to(device)


def fit(params, batches, device, lr=0.1):
    params = prepare_model(params, device)
    losses = ga.zeros(len(batches), dtype="float64", device=device)
    for i, batch in enumerate(batches):
        B = prepare_batch(batch, device)
        X, y = B[:, :2], B[:, 2]
        r = X @ params["w"] + params["b"] - y
        losses[i] = (r * r).mean().astype("float64")
        params["w"] = params["w"] - lr * 2 * (X.T @ r) / len(batch)
        params["b"] = params["b"] - lr * 2 * r.mean()
    return params, losses.numpy()
