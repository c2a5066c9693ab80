"""Wrong: new arrays with the sum are made, and the caller's arrays keep their values."""


def allreduce(grads):
    total = grads[0]
    for g in grads[1:]:
        total = total + g.to(total.device)
    for i in range(len(grads)):
        grads[i] = total.to(grads[i].device)
