"""Wrong: the optimizer is made before the model moves, so it holds the old arrays."""
import gpuarr as ga
from gpuarr import nn, optim


def train(net, batches, device, lr=0.1):
    opt = optim.SGD(net.parameters(), lr=lr)
    net.to(device)
    loss_fn = nn.CrossEntropyLoss()
    losses = ga.zeros(len(batches), device=device)
    for i, (X, y) in enumerate(batches):
        X, y = ga.asarray(X, device=device), ga.asarray(y, device=device)
        loss = loss_fn(net(X), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses[i] = loss.detach()
    return net, losses.numpy()
