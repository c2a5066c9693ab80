"""Reference solution of exercise 4."""
import gpuarr as ga


def prepare_model(params, device):
    return {name: p.to(device) for name, p in params.items()}


def prepare_batch(batch, device):
    return ga.asarray(batch, device=device)  # a gpuarr array already there: itself


def fit(params, batches, device, lr=0.1):
    params = prepare_model(params, device)
    w, b = params["w"], params["b"]
    losses = ga.zeros(len(batches), device=device)
    for i, batch in enumerate(batches):
        B = prepare_batch(batch, device)
        X, y = B[:, :2], B[:, 2]
        r = X @ w + b - y
        losses[i] = (r * r).mean()
        w = w - lr * 2 * (X.T @ r) / len(batch)
        b = b - lr * 2 * r.mean()
    return {"w": w, "b": b}, losses.numpy()
