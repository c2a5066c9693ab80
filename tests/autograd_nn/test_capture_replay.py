"""gpuarr.capture's replay (issue 45): from the third call with a signature the step
runs its recorded plan without its Python, with bitwise the results of running the
function, on every device kind; what the recording froze is guarded (optimizer
hyperparameters, train/eval mode) or refused (a step that replaces an array it reads,
a read to the host); random numbers advance per replay; the devices count the replayed
work, the profiler shows it, a simulated GPU's modeled clock prices it as one launch;
a plan's blocks go when the step goes."""
import gc
import threading
import time

import numpy as np
import pytest

import gpuarr
from gpuarr import nn, optim

from capture_steps import D, H
from capture_steps import batches as _batches
from capture_steps import mlp as _mlp
from capture_steps import step_fn

def _training(device, make_opt, dropout=None, calls=None):
    net = _mlp(device, dropout=dropout)
    opt = make_opt(net.parameters())
    return net, opt, step_fn(net, opt, calls)


def _assert_same_params(a, b):
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


SGDS = {
    "plain": lambda ps: optim.SGD(ps, lr=0.1),
    "momentum": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
    "nesterov_decay": lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True,
                                           weight_decay=0.01),
}


@pytest.mark.parametrize("opt_name", sorted(SGDS))
def test_replays_run_no_python_and_are_bitwise_the_uncaptured_steps(device, opt_name):
    calls = []
    plain, _, step_plain = _training(device, SGDS[opt_name])
    capt, _, fn = _training(device, SGDS[opt_name], calls=calls)
    step = gpuarr.capture(fn)
    for X, y in _batches(device, 6):
        want = step_plain(X, y).numpy()
        got = step(X, y)
        np.testing.assert_array_equal(got.numpy(), want)
    _assert_same_params(plain, capt)
    # the warm-up and the recording ran the function; four replays did not
    assert len(calls) == 2 and step.plan_replays == 4 and step.replays == 5
    info = step.plan_info()
    assert info["ops"] > 10 and info["held"] > 0 and info["draws"] == 0, info
    assert step.eager_reason is None
    assert "4 without Python" in repr(step)


def test_a_learning_rate_change_records_again_and_stays_bitwise(device):
    plain, opt_p, step_plain = _training(device, SGDS["momentum"])
    capt, opt_c, fn = _training(device, SGDS["momentum"])
    step = gpuarr.capture(fn)
    for i, (X, y) in enumerate(_batches(device, 8)):
        if i in (3, 6):  # a schedule: the recording froze the old rate
            for o in (opt_p, opt_c):
                o.param_groups[0]["lr"] *= 0.5
        np.testing.assert_array_equal(step(X, y).numpy(), step_plain(X, y).numpy())
    _assert_same_params(plain, capt)
    # calls 3 and 6 recorded again (the function ran), the others replayed
    assert step.plan_replays == 8 - 1 - 1 - 2 and step.recordings == 1


def test_dropout_draws_new_numbers_per_replay_and_follows_train_and_eval(device):
    plain, _, step_plain = _training(device, SGDS["plain"], dropout=0.5)
    capt, _, fn = _training(device, SGDS["plain"], dropout=0.5)
    step = gpuarr.capture(fn)
    batches = _batches(device, 7)
    gpuarr.random.seed(11)
    want = []
    for i, (X, y) in enumerate(batches):
        if i == 4:
            plain.eval()
        want.append(step_plain(X, y).numpy())
    after_plain = gpuarr.random.get_state()
    gpuarr.random.seed(11)
    got = []
    for i, (X, y) in enumerate(batches):
        if i == 4:
            capt.eval()  # a module's mode is guarded: this call records again
        got.append(step(X, y).numpy())
    np.testing.assert_array_equal(got, want)
    _assert_same_params(plain, capt)
    assert step.plan_replays == 4
    # the replays moved the generator on exactly as the uncaptured calls did
    assert gpuarr.random.get_state() == after_plain


def test_adam_advances_its_step_before_each_replay_bitwise(device):
    """Adam's step count and bias corrections are Python values: its own Python writes
    them into device arrays before each replay (outside the plan), so its replays are
    bitwise the uncaptured steps, a learning-rate change included."""
    calls = []
    plain, opt_p, step_plain = _training(device, lambda ps: optim.Adam(ps, lr=0.01))
    capt, opt_c, fn = _training(device, lambda ps: optim.Adam(ps, lr=0.01), calls=calls)
    step = gpuarr.capture(fn)
    for i, (X, y) in enumerate(_batches(device, 7)):
        if i == 5:
            for o in (opt_p, opt_c):
                o.param_groups[0]["lr"] = 0.003
        np.testing.assert_array_equal(step(X, y).numpy(), step_plain(X, y).numpy())
    _assert_same_params(plain, capt)
    assert [opt_c.state[p]["step"] for p in capt.parameters()] == [7] * 4
    # the warm-up, the recording and the re-recording at the new rate ran the function
    assert len(calls) == 3 and step.plan_replays == 4 and step.eager_reason is None


def test_calls_from_two_threads_run_one_at_a_time(device):
    # the function sleeps while inside (in its warm-up and its recording, the calls
    # that run its Python), so two calls let in at once would overlap there
    net, opt, inner = _training(device, SGDS["momentum"])
    inside, seen = [0], []

    def fn(X, y):
        inside[0] += 1
        seen.append(inside[0])
        time.sleep(0.02)
        loss = inner(X, y)
        inside[0] -= 1
        return loss

    captured = gpuarr.capture(fn)
    (X, y), = _batches(device, 1)
    errors = []

    def calls():
        try:
            for _ in range(4):
                captured(X, y)
        except BaseException as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=calls) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and seen == [1, 1], (errors, seen)
    assert captured.plan_replays == 6
    plain, _, step_plain = _training(device, SGDS["momentum"])
    for _ in range(8):
        step_plain(X, y)
    _assert_same_params(plain, net)


def test_replay_false_runs_the_function_every_call(device):
    calls = []
    step = gpuarr.capture(lambda x: calls.append(1) or x * 2, replay=False)
    x = gpuarr.ones(3, device=device)
    for _ in range(4):
        np.testing.assert_array_equal(step(x).numpy(), [2, 2, 2])
    assert len(calls) == 4 and step.plan_replays == 0 and "replay=False" in step.eager_reason

    @gpuarr.capture(replay=False)
    def twice(x):
        return x + x
    assert twice(x).numpy().tolist() == [2, 2, 2] and twice.plan_replays == 0


def test_a_step_that_replaces_an_array_it_reads_is_refused(device):
    state = {"w": gpuarr.ones(3, device=device)}

    def decay(x):
        state["w"] = state["w"] * 0.5  # a new array each call: a replay would not see it
        return x * state["w"]

    step = gpuarr.capture(decay)
    x = gpuarr.ones(3, device=device)
    step(x)
    with pytest.raises(RuntimeError, match=r"replaces an array it reads.*in place"):
        step(x)

    w = gpuarr.ones(3, device=device)

    def decay_in_place(x):
        w[...] = w * 0.5  # in place: replays halve it again each call
        return x * w

    step = gpuarr.capture(decay_in_place)
    outs = [step(x).numpy().tolist() for _ in range(4)]
    assert outs == [[0.5] * 3, [0.25] * 3, [0.125] * 3, [0.0625] * 3]
    assert step.plan_replays == 2


def test_values_that_size_a_result_are_refused_while_recording(device):
    def masked(x):
        return x[x > 0].sum()  # the mask's count is read back to size the result

    step = gpuarr.capture(masked)
    x = gpuarr.asarray(np.array([1.0, -1.0, 2.0]), device=device)
    with pytest.raises(RuntimeError, match="gpuarr.capture") as err:
        step(x)
        step(x)
    assert "masked" in str(err.value)
    assert gpuarr._core._capture_depth() == 0
    assert x[x > 0].sum().item() == 3.0  # outside a step it works


def test_constants_made_inside_the_step_keep_their_values(device):
    def shift(x):
        return x + gpuarr.asarray([1.0, 2.0, 3.0], device=x.device) * \
            gpuarr.arange(3, dtype="float64", device=x.device)

    step = gpuarr.capture(shift)
    for k in range(4):
        x = gpuarr.full(3, float(k), dtype="float64", device=device)
        np.testing.assert_array_equal(step(x).numpy(), k + np.array([0.0, 2.0, 6.0]))
    assert step.plan_replays == 2


def test_outputs_that_are_state_follow_each_replay(device):
    w = gpuarr.zeros(2, device=device)

    def accumulate(x):
        w[...] += x
        return w, x.sum()

    step = gpuarr.capture(accumulate)
    for k in range(1, 5):
        out_w, total = step(gpuarr.full(2, float(k), device=device))
        assert out_w is not w  # the step's own output buffer
        np.testing.assert_array_equal(out_w.numpy(), [k * (k + 1) / 2] * 2)
        assert total.numpy() == 2 * k


def test_a_replay_counts_its_work_and_the_profiler_shows_it(device):
    _, _, fn = _training(device, SGDS["momentum"])
    step = gpuarr.capture(fn)
    X, y = _batches(device, 1)[0]
    step(X, y)
    with gpuarr.testing.count_work(device) as recorded:
        step(X, y)
    with gpuarr.testing.count_work(device) as replayed:
        step(X, y)
    assert step.plan_replays == 1
    # the replay counts what the recorded call did, less the input copies it shares
    assert replayed[device].matmuls == recorded[device].matmuls > 0
    assert replayed[device].reductions == recorded[device].reductions > 0
    with gpuarr.profile() as prof:
        step(X, y)
    names = [e.name for e in prof.events if e.kind == "op"]
    assert names.count("capture replay") == 1 and "matmul" not in names, names


MODELED = r"""
import json
import numpy as np
import gpuarr
import gpuarr.nn.functional as F
from gpuarr import nn, optim

d = gpuarr.gpu(0)
net = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10)).to(d)
opt = optim.SGD(net.parameters(), lr=0.1)
X = gpuarr.asarray(np.ones((128, 64), np.float32), device=d)
y = gpuarr.zeros(128, dtype="int64", device=d)

def fn(X, y):
    loss = F.cross_entropy(net(X), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss

def modeled(events):
    ops = [e for e in events if e.device == d and e.kind == "op"
           and e.modeled_end_us is not None]
    return ops, sum(e.modeled_end_us - e.modeled_start_us for e in ops)

fn(X, y)
with gpuarr.profile() as prof:
    fn(X, y)
ops, plain = modeled(prof.events)
step = gpuarr.capture(fn)
step(X, y)
with gpuarr.profile():  # the recording, described as the plain call was
    step(X, y)
with gpuarr.profile() as prof:
    step(X, y)
rec = [e for e in prof.events if e.name == "capture replay" and e.kind == "op"]
assert step.plan_replays == 1 and len(rec) == 1, [e.name for e in prof.events]
latency_us = gpuarr.device_model(d).launch_latency * 1e6
print(json.dumps({"plain_us": plain, "plain_ops": len(ops), "latency_us": latency_us,
                  "replay_us": rec[0].modeled_end_us - rec[0].modeled_start_us}))
"""


def test_a_modeled_gpu_prices_a_replay_as_one_launch():
    """On a simulated T4 the replay costs one launch latency plus the work its
    operations were modeled at, where the uncaptured step pays a latency per launch."""
    import json
    import os
    import subprocess
    import sys
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(gpuarr.__file__)))
    env = dict(os.environ, GPUARR_SIMULATE_GPUS="2:T4", PYTHONPATH=os.pathsep.join(
        [pkg] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    env.pop("GPUARR_CUDA_EMULATE", None)
    r = subprocess.run([sys.executable, "-c", MODELED], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout.strip().splitlines()[-1])
    work = m["plain_us"] - m["plain_ops"] * m["latency_us"]
    assert m["plain_ops"] > 20 and work > 0, m
    # the replay also copies the loss into the step's output buffer (4 bytes: its
    # work is a few nanoseconds on the model)
    assert m["replay_us"] == pytest.approx(m["latency_us"] + work, rel=0.02), m
    assert m["replay_us"] < m["plain_us"] - 10 * m["latency_us"], m


def test_a_plan_frees_its_blocks_when_the_step_goes(device):
    gc.collect()
    before = gpuarr.memory_stats(device)["allocated_bytes"]
    net, opt, fn = _training(device, SGDS["momentum"])
    step = gpuarr.capture(fn)
    for X, y in _batches(device, 4):
        step(X, y)
    assert gpuarr.memory_stats(device)["allocated_bytes"] > before
    del step, fn, net, opt, X, y
    gc.collect()
    gpuarr.synchronize(device)
    assert gpuarr.memory_stats(device)["allocated_bytes"] == before


def test_a_step_cannot_record_or_replay_inside_another(device):
    inner = gpuarr.capture(lambda x: x + 1)
    x = gpuarr.ones(2, device=device)
    for _ in range(3):
        inner(x)  # recorded: the next call replays

    def outer(x):
        return inner(x) * 2

    step = gpuarr.capture(outer)
    step(x)  # the warm-up may replay the inner step: nothing records
    with pytest.raises(RuntimeError, match="inner"):
        step(x)
    assert gpuarr._core._capture_depth() == 0
    np.testing.assert_array_equal(inner(x).numpy(), [2, 2])


def test_a_non_blocking_read_of_an_output_finishes_before_the_next_replay(gpu_device):
    """The next replay overwrites the output buffer only after a queued copy of it to
    the host has read it (as an uncaptured write would wait: ga_array_note_write)."""
    step = gpuarr.capture(lambda x: (x * 2).sum())
    big = gpuarr.ones((512, 512), device=gpu_device)
    for _ in range(2):
        step(big)
    values = []
    for k in range(1, 5):
        out = step(big * k)
        values.append(out.to(gpuarr.cpu(), non_blocking=True))
    gpuarr.synchronize(gpu_device)
    assert [v.item() for v in values] == [2.0 * 512 * 512 * k for k in range(1, 5)]
    assert step.plan_replays == 4


def test_passing_the_steps_own_input_buffers_skips_the_copy(device):
    step = gpuarr.capture(lambda x: x * 3)
    assert step.inputs is None
    step(gpuarr.ones(4, device=device))
    (buf,) = step.inputs
    for k in range(2, 6):
        gpuarr.full(4, float(k), device=device).copyto(buf)  # the loader writes the batch
        with gpuarr.testing.count_work(device) as w:
            out = step(buf)
        np.testing.assert_array_equal(out.numpy(), [3.0 * k] * 4)
        if k > 2:  # a replay: the multiply and the output copy, no copy of the input
            assert w[device].elementwise == 2, w[device]


def test_host_arrays_moved_inside_the_step_are_read_anew_each_replay(gpu_device):
    """A CPU input buffer moved to a GPU inside the step is copied from the buffer at
    each replay (not from the bytes it held when recorded); a result moved between two
    devices follows too."""
    other = gpuarr.gpu(1) if gpuarr.num_gpus() > 1 else gpu_device

    def step(x_cpu):
        h = x_cpu.to(gpu_device) * 2
        return h.to(other) + 1

    captured = gpuarr.capture(step)
    for k in range(5):
        x = gpuarr.asarray(np.arange(4.0) + k)
        out = captured(x)
        assert out.device == other
        np.testing.assert_array_equal(out.numpy(), (np.arange(4.0) + k) * 2 + 1)
    assert captured.plan_replays == 3


def test_a_parameter_assigned_anew_records_the_step_again(device):
    plain, _, step_plain = _training(device, SGDS["plain"])
    capt, _, fn = _training(device, SGDS["plain"])
    step = gpuarr.capture(fn)
    for i, (X, y) in enumerate(_batches(device, 6)):
        if i == 3:  # both models get a new first-layer weight (the optimizers keep the old)
            for net in (plain, capt):
                net[0].weight = nn.Parameter(gpuarr.full((H, D), 0.1, device=device))
        np.testing.assert_array_equal(step(X, y).numpy(), step_plain(X, y).numpy())
    _assert_same_params(plain, capt)
    assert step.plan_replays == 6 - 3  # calls 2 and 4 recorded (and 1 warmed up)
