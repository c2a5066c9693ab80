"""Correct, unusual: the gradient as r @ X (no transpose), the parameters updated in
place with augmented assignment, the batch kept whole (the label column read through
the product with a selector vector), and the losses kept in a list stacked on the
device after the loop."""
import gpuarr as ga


def prepare_model(params, device):
    return {name: ga.asarray(p, device=device) for name, p in params.items()}


def prepare_batch(batch, device):
    B = ga.asarray(batch, device=device)
    return B.to(device)


def fit(params, batches, device, lr=0.1):
    model = prepare_model(params, device)
    w, b = model["w"], model["b"]
    losses = []
    for batch in batches:
        B = prepare_batch(batch, device)
        n = B.shape[0]
        X = B[:, :2]
        r = X @ w + b - B[:, 2]
        losses.append(ga.mean(r ** 2))
        w -= (2 * lr / n) * (r @ X)
        b -= 2 * lr * ga.mean(r)
    return model, ga.stack(losses).numpy()
