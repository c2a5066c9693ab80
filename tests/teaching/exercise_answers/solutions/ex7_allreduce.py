"""Reference solution of exercise 7: the sum formed on the first device, copied back."""


def allreduce(grads):
    for g in grads[1:]:
        grads[0][...] += g.to(grads[0].device)  # a copy between devices, then an add there
    for g in grads[1:]:
        grads[0].copyto(g)  # back into each array, in place
