"""Wrong: the model trains on the CPU and only moves to the device at the end."""
import gpuarr as ga
from gpuarr import nn, optim


def train(net, batches, device, lr=0.1):
    opt = optim.SGD(net.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    losses = ga.zeros(len(batches))
    for i, (X, y) in enumerate(batches):
        loss = loss_fn(net(ga.asarray(X)), ga.asarray(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses[i] = loss.detach()
    return net.to(device), losses.numpy()
