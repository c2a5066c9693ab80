"""Training with gpuarr.nn, autograd and gpuarr.optim on every device: the layers'
and losses' gradients against NumPy's formulas, a model spread over two devices, and a
small real data set (scikit-learn's digits) trained to a stated accuracy, with nothing
read back inside the loop."""
import numpy as np
import pytest

import gpuarr
import gpuarr.nn.functional as F
from gpuarr import nn, optim
from gpuarr.testing import assert_transfers, count_kernels


def put(a, device, **kw):
    return gpuarr.asarray(np.array(a), device=device, **kw)


def onehot(t, c):
    return np.eye(c)[t]


# --- gradients of the layers and losses (the engine differentiates their pieces) --------


def test_linear_gradients_match_the_formulas(device):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3))
    g = rng.standard_normal((5, 2))
    lin = nn.Linear(3, 2, device=device, dtype="float64")
    y = lin(put(x, device))
    assert y.grad_fn is not None
    y.backward(put(g, device))
    np.testing.assert_allclose(lin.weight.grad.numpy(), g.T @ x, rtol=1e-12)
    np.testing.assert_allclose(lin.bias.grad.numpy(), g.sum(axis=0), rtol=1e-12)
    assert lin.weight.grad.device == device and lin.bias.grad.device == device


def test_a_weight_gradient_has_the_weight_layout(device):
    # x @ weight.T: the gradient of weight.T is made as (g.T @ x).T, so weight.grad is
    # C-ordered like weight (an F-ordered one makes every update walk it across the
    # grain) and it is the product itself, not a copy
    lin = nn.Linear(4, 3, device=device, dtype="float64")
    lin(put(np.ones((5, 4)), device)).sum().backward()
    grad = lin.weight.grad
    assert grad.shape == (3, 4) and grad.strides == (32, 8)
    np.testing.assert_allclose(grad.numpy(), np.full((3, 4), 5.0))


@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_gradient_is_softmax_minus_onehot(device, weighted):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 4)) * 3
    t = np.array([0, 3, 1, -100, 2, 3])
    w = np.array([0.5, 2.0, 1.0, 0.25]) if weighted else np.ones(4)
    xs = put(x, device, requires_grad=True)
    loss = F.cross_entropy(xs, put(t, device), put(w, device) if weighted else None)
    loss.backward()
    counted = t != -100
    wn = np.where(counted, w[np.where(counted, t, 0)], 0)
    p = np.exp(x - x.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    ref = (p - onehot(np.where(counted, t, 0), 4)) * wn[:, None] / wn.sum()
    np.testing.assert_allclose(xs.grad.numpy(), ref, rtol=1e-10, atol=1e-14)


def test_mse_gradient_is_twice_the_residual_over_n(device):
    x, t = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    xs = put(x, device, requires_grad=True)
    F.mse_loss(xs, put(t, device)).backward()
    np.testing.assert_allclose(xs.grad.numpy(), 2 * (x - t) / 6, rtol=1e-14)


def test_sigmoid_gradient_is_finite_at_extreme_inputs(device):
    x = np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0])
    xs = put(x, device, requires_grad=True)
    F.sigmoid(xs).sum().backward()
    z = np.exp(-np.abs(x))  # s(x) * s(-x), without 1 - s's cancellation
    np.testing.assert_allclose(xs.grad.numpy(), z / (1 + z) ** 2, rtol=1e-12, atol=1e-300)


def test_log_softmax_gradient_of_huge_logits_is_finite(device):
    xs = put([[1e4, 0.0, -1e4]], device, dtype="float32", requires_grad=True)
    F.log_softmax(xs, 1)[0, 1].backward()
    np.testing.assert_allclose(xs.grad.numpy(), [[-1.0, 1.0, 0.0]], atol=1e-6)


def test_dropout_gradient_is_its_mask_times_the_scale(device):
    xs = gpuarr.ones((50, 40), device=device, requires_grad=True)
    y = F.dropout(xs, 0.5)
    y.sum().backward()
    np.testing.assert_array_equal(xs.grad.numpy(), y.detach().numpy())
    assert set(np.unique(xs.grad.numpy())) == {0.0, 2.0}


# --- a training step on every device -----------------------------------------------------


def numpy_step(W1, b1, W2, b2, X, y, lr):
    """One SGD step of Linear-ReLU-Linear with cross-entropy, by hand."""
    h = X @ W1.T + b1
    a = np.maximum(h, 0)
    z = a @ W2.T + b2
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    loss = -np.log(p[np.arange(len(y)), y]).mean()
    dz = (p - onehot(y, z.shape[1])) / len(y)
    dW2, db2 = dz.T @ a, dz.sum(0)
    dh = (dz @ W2) * (h > 0)
    dW1, db1 = dh.T @ X, dh.sum(0)
    return loss, W1 - lr * dW1, b1 - lr * db1, W2 - lr * dW2, b2 - lr * db2


def test_training_steps_match_numpy_by_hand(device):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((16, 5))
    y = rng.integers(0, 3, 16)
    net = nn.Sequential(nn.Linear(5, 8, dtype="float64"), nn.ReLU(),
                        nn.Linear(8, 3, dtype="float64")).to(device)
    ref = [p.numpy() for p in net.parameters()]
    opt = optim.SGD(net.parameters(), lr=0.5)
    loss_fn = nn.CrossEntropyLoss()
    Xd, yd = put(X, device), put(y, device)
    for _ in range(3):
        loss = loss_fn(net(Xd), yd)
        opt.zero_grad()
        loss.backward()
        opt.step()
        want, *ref = numpy_step(*ref, X, y, 0.5)
        np.testing.assert_allclose(loss.item(), want, rtol=1e-12)
    for p, r in zip(net.parameters(), ref):
        assert p.device == device
        np.testing.assert_allclose(p.numpy(), r, rtol=1e-10, atol=1e-12)


def test_a_training_step_on_a_gpu_reads_nothing_back_and_waits_for_nothing(gpu_device):
    net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Dropout(0.1), nn.Linear(8, 3),
                        nn.Tanh()).to(gpu_device)
    opt = optim.Adam(net.parameters(), lr=1e-2)
    loss_fn = nn.CrossEntropyLoss(weight=gpuarr.ones(3)).to(gpu_device)
    X = gpuarr.randn(16, 5, device=gpu_device)
    y = gpuarr.random.integers(0, 3, size=16, device=gpu_device)
    log = gpuarr.zeros(4, device=gpu_device)
    with assert_transfers(max_h2d=0, max_d2h=0, max_d2d=0, max_syncs=0):
        with count_kernels(gpu_device) as k:
            for i in range(4):
                loss = loss_fn(net(X), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                log[i] = loss.detach()
    assert k.syncs == 0 and k.h2d == 0 and k.d2h == 0
    assert np.isfinite(log.numpy()).all()


class VeryBigModule(nn.Module):
    """One parameter on each of two devices; the activation moves between them."""

    def __init__(self, dev0, dev1):
        super().__init__()
        self.dev0, self.dev1 = dev0, dev1
        self.net1 = nn.Linear(4, 6).to(dev0)
        self.net2 = nn.Linear(6, 2).to(dev1)

    def forward(self, x):
        x = F.relu(self.net1(x.to(self.dev0)))
        return self.net2(x.to(self.dev1))


def test_gradients_flow_back_across_devices(two_gpus):
    gpuarr.random.seed(5)
    model = VeryBigModule(*two_gpus)
    gpuarr.random.seed(5)
    twin = VeryBigModule(gpuarr.cpu(), gpuarr.cpu())
    X = gpuarr.randn(8, 4)
    y = gpuarr.randn(8, 2)
    for m in (model, twin):
        opt = optim.SGD(m.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            F.mse_loss(m(X), y.to(m.dev1)).backward()
            opt.step()
    assert model.net1.weight.grad.device == two_gpus[0]
    assert model.net2.weight.grad.device == two_gpus[1]
    for p, q in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)


# --- a real data set: scikit-learn's digits ---------------------------------------------

DIGITS_ACCURACY = 0.93  # held-out accuracy every device reaches (about 0.96 in fact)


@pytest.fixture(scope="module")
def digits():
    datasets = pytest.importorskip("sklearn.datasets")
    d = datasets.load_digits()
    X = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(y))
    X, y = X[order], y[order]
    return X[:1400], y[:1400], X[1400:], y[1400:]


def test_digits_train_to_the_stated_accuracy_on_every_device(device, digits):
    Xtr, ytr, Xte, yte = digits
    gpuarr.random.seed(0)
    net = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)).to(device)
    opt = optim.Adam(net.parameters(), lr=1e-2)
    loss_fn = nn.CrossEntropyLoss()
    # the data set once (0.4 MB), then batches are views on the device
    X, y = put(Xtr, device), put(ytr, device)
    epochs, batch = 8, 100
    steps = epochs * (len(ytr) // batch)
    losses = gpuarr.zeros(steps, device=device)
    with assert_transfers(max_h2d=0, max_d2h=0, max_syncs=0):
        for i in range(steps):
            s = (i * batch) % len(ytr)
            loss = loss_fn(net(X[s:s + batch]), y[s:s + batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses[i] = loss.detach()
    net.eval()
    with gpuarr.no_grad():
        pred = gpuarr.argmax(net(put(Xte, device)), axis=1)
        accuracy = float((pred == put(yte, device)).astype("float32").mean())
    curve = losses.numpy()
    assert curve[-10:].mean() < curve[:10].mean() / 4, curve
    assert accuracy >= DIGITS_ACCURACY, f"accuracy {accuracy:.3f} on {device!r}"
