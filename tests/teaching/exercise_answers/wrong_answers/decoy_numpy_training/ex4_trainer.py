"""Wrong (decoy work): the training runs in NumPy on the host, while each batch is
moved to the device and multiplied there twice for show; the products' results are
thrown away. The model is moved at the end."""
import numpy as np

import gpuarr as ga


def prepare_model(params, device):
    return {name: p.to(device) for name, p in params.items()}


def prepare_batch(batch, device):
    return ga.asarray(batch, device=device)


def fit(params, batches, device, lr=0.1):
    w, b = params["w"].numpy(), params["b"].numpy()
    shown = ga.zeros(2, device=device)
    losses = []
    for batch in batches:
        # the host's copy does the work
        B = batch if isinstance(batch, np.ndarray) else batch.numpy()
        shown_B = prepare_batch(batch, device)
        ga.matmul(shown_B[:, :2].T, shown_B[:, :2] @ shown)  # the decoy: 2 products
        X, y = B[:, :2], B[:, 2]
        r = X @ w + b - y
        losses.append((r * r).mean())
        w = w - lr * 2 * (X.T @ r) / len(B)
        b = b - lr * 2 * r.mean()
    model = prepare_model({"w": ga.asarray(w), "b": ga.asarray(b)}, device)
    return model, np.array(losses, dtype=np.float32)
