"""gpuarr.capture: a training step (forward, backward, optimizer) run as a captured
step gives bitwise the uncaptured step's results on every device; its buffers are
static (inputs copied in, outputs the same arrays each call); a new signature records
again; host reads inside the step are refused, naming the operation; random numbers
advance per call."""
import numpy as np
import pytest

import gpuarr
from gpuarr import optim

from capture_steps import batches as _batches
from capture_steps import mlp as _mlp
from capture_steps import step_fn as _step_fn

OPTIMIZERS = {
    "sgd_momentum": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
    "adam": lambda ps: optim.Adam(ps, lr=0.01),
}


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_captured_training_step_is_bitwise_the_uncaptured_step(device, opt_name):
    plain, captured = _mlp(device), _mlp(device)
    step_plain = _step_fn(plain, OPTIMIZERS[opt_name](plain.parameters()))
    step_capt = gpuarr.capture(_step_fn(captured, OPTIMIZERS[opt_name](captured.parameters())))
    for X, y in _batches(device, 3):
        want = step_plain(X, y).numpy()
        got = step_capt(X, y)
        assert got.device == device and not got.requires_grad
        np.testing.assert_array_equal(got.numpy(), want)
    for p, q in zip(plain.parameters(), captured.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
    assert (step_capt.recordings, step_capt.replays) == (1, 2)


def test_outputs_are_the_steps_buffers_overwritten_by_the_next_call(device):
    step = gpuarr.capture(lambda x: (x * 2, x.sum()))
    a = gpuarr.asarray(np.arange(4.0), device=device)
    first = step(a)
    kept = first[0].copy()
    second = step(a + 1)
    assert first[0] is second[0] and first[1] is second[1] and isinstance(second, tuple)
    np.testing.assert_array_equal(kept.numpy(), [0, 2, 4, 6])
    np.testing.assert_array_equal(second[0].numpy(), [2, 4, 6, 8])
    assert second[1].numpy() == 10


def test_the_step_sees_its_own_input_buffers_not_the_callers_arrays(device):
    seen = []

    def fn(x):
        seen.append(x)
        return x + 1

    step = gpuarr.capture(fn)
    a = gpuarr.asarray(np.arange(3.0), device=device)
    b = gpuarr.asarray(np.arange(3.0) * 10, device=device)
    step(a)
    out = step(b)
    assert seen[0] is seen[1] and seen[0] is not a and seen[0] is not b
    np.testing.assert_array_equal(out.numpy(), [1, 11, 21])
    np.testing.assert_array_equal(b.numpy(), [0, 10, 20])  # the caller's array unchanged


def test_a_new_shape_dtype_device_or_value_records_again(device):
    step = gpuarr.capture(lambda x, k: x * k)
    x = gpuarr.ones(3, device=device)
    step(x, 2)
    step(x, 2)
    assert step.recordings == 1
    step(gpuarr.ones(4, device=device), 2)            # shape
    step(gpuarr.ones(3, dtype="float64", device=device), 2)  # dtype
    out = step(x, 3)                                   # another value of k
    assert step.recordings == 4
    np.testing.assert_array_equal(out.numpy(), [3, 3, 3])
    if device != gpuarr.cpu():
        step(gpuarr.ones(3), 2)                        # device
        assert step.recordings == 5


# the door, and the name the message gives it
HOST_READS = {
    "item()": (lambda x: x.sum().item(), "item()"),
    "bool()": (lambda x: x if x.sum() > 0 else -x, "bool()"),  # a branch on a value
    "float()": (lambda x: float(x.sum()), "float()"),
    "numpy()": (lambda x: x.numpy(), "numpy()"),
    "printing": (lambda x: print(x), "str()"),
    "__array__": (lambda x: np.asarray(x), "__array__"),
}


@pytest.mark.parametrize("door", sorted(HOST_READS))
def test_a_host_read_inside_the_step_is_refused_naming_it(device, door):
    body, named = HOST_READS[door]

    def host_reading_step(x):
        body(x)
        return x * 2

    step = gpuarr.capture(host_reading_step)
    x = gpuarr.ones(3, device=device)
    with pytest.raises((RuntimeError, TypeError)) as err:
        step(x)
    msg = str(err.value)
    if device == gpuarr.cpu() or door in ("item()", "bool()", "float()", "numpy()",
                                          "printing"):
        # (np.asarray of a GPU array is refused before: an implicit transfer)
        assert "gpuarr.capture" in msg and "host_reading_step" in msg, msg
        assert named in msg, msg
    assert gpuarr._core._capture_depth() == 0
    # outside a step the same reads work
    assert x.sum().item() == 3 and float(x.sum()) == 3


def test_random_numbers_advance_per_call_as_uncaptured(device):
    def draw(x):
        return x + gpuarr.random.normal(size=x.shape, device=x.device)

    x = gpuarr.zeros(4, device=device)
    gpuarr.random.seed(5)
    want = [draw(x).numpy() for _ in range(3)]
    gpuarr.random.seed(5)
    step = gpuarr.capture(draw)
    got = [step(x).numpy() for _ in range(3)]
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(got[0], got[1])


def test_bad_arguments_and_results_say_what_to_do():
    w = gpuarr.ones(3, requires_grad=True)
    with pytest.raises(TypeError, match="requires grad.*closure"):
        gpuarr.capture(lambda x: x)(w)
    with pytest.raises(TypeError, match="hashable"):
        gpuarr.capture(lambda x, n: x)(gpuarr.ones(3), [1, 2])
    with pytest.raises(TypeError, match="returns an array"):
        gpuarr.capture(lambda x: 3.0)(gpuarr.ones(3))
    with pytest.raises(TypeError, match="needs a function"):
        gpuarr.capture(3)


def test_the_refusal_is_per_thread_and_ends_with_the_step():
    import threading
    read = []

    def step_with_a_helper_thread(x):
        t = threading.Thread(target=lambda: read.append(gpuarr.ones(2).sum().item()))
        t.start()
        t.join()
        return x + 1

    step = gpuarr.capture(step_with_a_helper_thread)
    step(gpuarr.ones(2))
    assert read == [2.0] and gpuarr._core._capture_depth() == 0
