"""The small training step the captured-step tests share (test_capture.py,
test_capture_replay.py, tests/cuda/test_cuda_graphs.py): a 2-layer MLP with seeded
weights, seeded batches, and one SGD-style step with cross entropy."""
import numpy as np

import gpuarr
import gpuarr.nn.functional as F
from gpuarr import nn

B, D, H, C = 6, 8, 16, 3


def mlp(device, seed=0, dropout=None):
    rng = np.random.default_rng(seed)
    layers = [nn.Linear(D, H), nn.ReLU()]
    if dropout is not None:
        layers.append(nn.Dropout(dropout))
    net = nn.Sequential(*layers, nn.Linear(H, C)).to(device)
    with gpuarr.no_grad():
        for p in net.parameters():
            p[...] = gpuarr.asarray(
                rng.standard_normal(p.shape).astype(np.float32) * 0.3, device=device)
    return net


def batches(device, n, seed=7):
    rng = np.random.default_rng(seed)
    return [(gpuarr.asarray(rng.standard_normal((B, D)).astype(np.float32), device=device),
             gpuarr.asarray(rng.integers(0, C, B), device=device)) for _ in range(n)]


def step_fn(net, opt, calls=None):
    """loss = cross_entropy(net(X), y); backward; opt.step(). `calls` (a list) gets an
    entry each time the function's Python runs (a replay does not run it)."""
    def step(X, y):
        if calls is not None:
            calls.append(1)
        loss = F.cross_entropy(net(X), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return step
