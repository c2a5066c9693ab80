"""A solution of exercise 4 whose gradients come from autograd: the same interface, the
same transfers (a backward pass on the device copies nothing)."""
import gpuarr as ga


def prepare_model(params, device):
    return {name: p.to(device) for name, p in params.items()}


def prepare_batch(batch, device):
    return ga.asarray(batch, device=device)  # a gpuarr array already there: itself


def fit(params, batches, device, lr=0.1):
    params = prepare_model(params, device)
    w, b = params["w"].requires_grad_(), params["b"].requires_grad_()
    losses = ga.zeros(len(batches), device=device)
    for i, batch in enumerate(batches):
        B = prepare_batch(batch, device)
        X, y = B[:, :2], B[:, 2]
        r = X @ w + b - y
        loss = (r * r).mean()
        losses[i] = loss.detach()
        loss.backward()
        with ga.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        w.grad = b.grad = None
    return {"w": w.detach(), "b": b.detach()}, losses.numpy()
