"""Part D: the chapter's exercises. They assert behaviour (values, counts of transfers
and waits), never speed; sizes are kept small."""
import numpy as np
import pytest

import gpuarr
from gpuarr import cpu, gpu, nn, num_gpus, try_gpu
from textbook_helpers import bits, on_gpu


def _devices():
    return [cpu()] + [gpu(i) for i in range(num_gpus())]


def test_exercise_1_the_timing_table_has_a_row_per_size_and_a_column_per_device(capsys):
    from gpuarr import _tour

    _tour.step_timing(sizes=(4, 32))
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.strip()[:2] in ("4 ", "32")]
    assert len(rows) == 2 and all(len(r) == 1 + len(_devices()) for r in rows)
    assert all(float(t) >= 0 for r in rows for t in r[1:])
    header = [line for line in out.splitlines() if "cpu(0)" in line]
    assert header and all(repr(d) in header[0] for d in _devices())
    if gpuarr._core._gpu_mode()[0] == "simulated":
        assert "CPU times" in out


def test_exercise_1_every_device_computes_the_same_product():
    a = np.random.default_rng(0).random((33, 17), dtype=np.float32)
    b = np.random.default_rng(1).random((17, 9), dtype=np.float32)
    ref = a @ b
    for d in _devices():
        r = gpuarr.asarray(a, device=d) @ gpuarr.asarray(b, device=d)
        assert r.device == d
        np.testing.assert_allclose(r.numpy(), ref, rtol=1e-5)


@pytest.mark.parametrize("target", ["cpu", "gpu0", "gpu1"])
def test_exercise_2_parameters_round_trip_through_a_file_bit_for_bit(tmp_path, target):
    dev = {"cpu": cpu(), "gpu0": try_gpu(0), "gpu1": try_gpu(1)}[target]
    net = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)).to(try_gpu())
    path = tmp_path / "params.npz"
    gpuarr.save(path, net.state_dict())
    loaded = gpuarr.load(path, device=dev)
    assert all(v.device == dev for v in loaded.values())
    clone = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2), ).to(dev)
    clone.load_state_dict(loaded)
    for (k1, p1), (k2, p2) in zip(net.named_parameters(), clone.named_parameters()):
        assert k1 == k2 and p2.device == dev and bits(p1) == bits(p2)
    x = gpuarr.asarray(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
    # The same parameters give the same outputs; bit for bit only where the same GEMM
    # code runs (another device may sum in another order).
    y1, y2 = net(x.to(try_gpu())), clone(x.to(dev))
    if dev == try_gpu():
        assert bits(y1) == bits(y2)
    else:
        np.testing.assert_allclose(y2.numpy(), y1.numpy(), rtol=1e-6, atol=1e-7)


def test_exercise_2_a_device_array_round_trips_through_numpy_bit_for_bit():
    a = np.random.default_rng(2).standard_normal((5, 7)).astype(np.float32)
    x = gpuarr.asarray(a, device=try_gpu())
    back = gpuarr.asarray(x.numpy()).to(try_gpu(1))
    assert bits(back) == a.tobytes() and back.device == try_gpu(1)


STEPS = 1000


def _matrices(dev):
    A = gpuarr.asarray(np.eye(8, dtype=np.float32) * 0.5 +
                       np.random.default_rng(3).random((8, 8), dtype=np.float32) * 0.01,
                       device=dev)
    return A


def test_exercise_3_logging_with_item_makes_one_d2h_per_step():
    dev = try_gpu()
    A = _matrices(dev)
    with gpuarr.count_transfers() as t:
        log = [gpuarr.linalg.norm(A @ A).item() for _ in range(STEPS)]
    assert len(log) == STEPS and all(isinstance(v, float) for v in log)
    assert t.d2h_count == (STEPS if on_gpu(A) else 0)


def test_exercise_3_keeping_the_log_on_the_device_makes_one_d2h():
    dev = try_gpu()
    A = _matrices(dev)
    with gpuarr.count_transfers() as t:
        log = [gpuarr.linalg.norm(A @ A) for _ in range(STEPS)]
        assert all(v.device == dev and v.shape == () for v in log)
        host = gpuarr.stack(log).numpy()
    assert t.d2h_count == (1 if on_gpu(A) else 0)
    expected = np.linalg.norm(A.numpy() @ A.numpy())
    np.testing.assert_allclose(host, np.full(STEPS, expected, np.float32), rtol=1e-5)


def test_exercise_4_work_on_two_devices_is_queued_before_one_synchronize():
    d0, d1 = try_gpu(0), try_gpu(1)
    a = np.random.default_rng(4).random((16, 16), dtype=np.float32)
    A0, A1 = gpuarr.asarray(a, device=d0), gpuarr.asarray(a, device=d1)
    with gpuarr.count_transfers() as queued:
        C0 = A0 @ A0
        C1 = A1 @ A1
    assert queued.syncs == 0 and queued.d2h_count == 0 and queued.d2d_count == 0
    with gpuarr.count_transfers() as waited:
        gpuarr.synchronize()
    assert waited.syncs == num_gpus()  # one wait per GPU, none before
    assert C0.device == d0 and C1.device == d1
    np.testing.assert_allclose(C0.numpy(), a @ a, rtol=1e-5)
    assert bits(C0) == bits(C1)


def test_exercise_4_one_device_doing_both_in_turn_gives_the_same_results():
    d = try_gpu()
    a = np.random.default_rng(5).random((16, 16), dtype=np.float32)
    A = gpuarr.asarray(a, device=d)
    with gpuarr.count_transfers() as t:
        C0, C1 = A @ A, A @ A
        gpuarr.synchronize(d)
    assert t.syncs == (1 if on_gpu(A) else 0)  # the CPU computes eagerly: nothing to wait for
    assert bits(C0) == bits(C1)
