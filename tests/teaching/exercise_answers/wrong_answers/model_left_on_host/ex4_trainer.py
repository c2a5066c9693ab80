"""Wrong: prepare_model forgets to move the model, so the first product mixes a batch
on the device with parameters on the host (DeviceMismatchError)."""
import gpuarr as ga


def prepare_model(params, device):
    return dict(params)


def prepare_batch(batch, device):
    return ga.asarray(batch, device=device)


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
