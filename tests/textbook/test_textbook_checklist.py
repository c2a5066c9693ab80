"""TEXTBOOK.md's behaviour checklist, one test per line."""
import numpy as np
import pytest

import gpuarr
from gpuarr import cpu, gpu, nn, num_gpus, try_gpu
from textbook_helpers import bits, on_gpu, run_python


def _devices():
    return [cpu()] + [gpu(i) for i in range(num_gpus())]


def test_1_devices_are_cheap_values_and_missing_ones_fail_only_when_used():
    d = gpu(9)
    assert d == gpuarr.Device("gpu:9") and hash(d) == hash(gpu(9))
    with pytest.raises(Exception) as e:
        gpuarr.zeros((2,), device=d)
    assert "gpu(9)" in str(e.value)
    assert all(repr(x) in str(e.value) for x in _devices())


def test_2_num_gpus_never_raises_and_follows_the_simulation():
    assert run_python("import gpuarr; print(gpuarr.num_gpus())", GPUARR_SIMULATE_GPUS=0) == "0"
    assert run_python("import gpuarr; print(gpuarr.num_gpus())", GPUARR_SIMULATE_GPUS=3) == "3"
    assert run_python("import gpuarr; print(gpuarr.num_gpus())",
                      CUDA_VISIBLE_DEVICES="") == "0"


def test_3_default_placement_is_the_cpu_and_device_is_read_only():
    x = gpuarr.array([1, 2, 3])
    assert x.device == cpu()
    with pytest.raises(AttributeError):
        x.device = try_gpu()


@pytest.mark.parametrize("make", [
    lambda d: gpuarr.zeros((2, 3), device=d),
    lambda d: gpuarr.ones((2, 3), device=d),
    lambda d: gpuarr.full((2, 3), 7.0, device=d),
    lambda d: gpuarr.empty((2, 3), device=d),
    lambda d: gpuarr.arange(6, device=d),
    lambda d: gpuarr.linspace(0, 1, 5, device=d),
    lambda d: gpuarr.eye(3, device=d),
    lambda d: gpuarr.random.uniform(size=(2, 3), device=d),
    lambda d: gpuarr.random.normal(size=(2, 3), device=d),
    lambda d: gpuarr.rand(2, 3, device=d),
    lambda d: gpuarr.randn(2, 3, device=d),
], ids=["zeros", "ones", "full", "empty", "arange", "linspace", "eye", "uniform", "normal",
        "rand", "randn"])
def test_4_creation_takes_device_and_makes_the_data_there(device, make):
    with gpuarr.count_transfers() as t:
        x = make(device)
    assert x.device == device
    assert t.h2d_count == 0  # made on the device, not copied from the host


def test_4_creation_takes_device_strings():
    x = gpuarr.zeros((2,), device="cpu")
    assert x.device == cpu()
    if num_gpus():
        assert gpuarr.ones((2,), device="cuda:0").device == gpu(0)


def test_5_to_is_a_no_op_and_copyto_always_copies(device):
    x = gpuarr.ones((3,), device=device)
    assert x.to(device) is x
    y = x.copyto(device)
    assert y is not x and y._storage_id != x._storage_id


def test_6_the_source_of_a_copy_is_unchanged_and_stays(device):
    src = gpuarr.arange(5, device=device)
    before = bits(src)
    for d in _devices():
        dst = src.copyto(d)
        dst += 1
    assert src.device == device and bits(src) == before


def test_7_mixed_devices_raise_and_scalars_are_welcome(device):
    x = gpuarr.ones((3,), device=device)
    assert (x + 1).device == device and (2.5 * x).device == device
    for other in _devices():
        if other != device:
            with pytest.raises(gpuarr.DeviceMismatchError):
                x + gpuarr.ones((3,), device=other)


def test_8_results_live_with_their_operands(device):
    x = gpuarr.arange(6, dtype=gpuarr.float32, device=device).reshape((2, 3))
    for r in (x + x, x.exp(), x @ x.T, x.sum(), gpuarr.linalg.norm(x), gpuarr.maximum(x, 1)):
        assert r.device == device


def test_9_printing_and_numpy_copy_to_the_host_and_change_nothing(device):
    x = gpuarr.arange(4, dtype=gpuarr.float32, device=device)
    before = bits(x)
    str(x), repr(x)
    h = x.numpy()
    assert x.device == device and bits(x) == before
    np.testing.assert_array_equal(h, np.arange(4, dtype=np.float32))


def test_9_printing_a_huge_device_array_copies_only_what_is_shown():
    d = try_gpu()
    x = gpuarr.zeros((1000, 1000), device=d)
    with gpuarr.count_transfers() as t:
        text = str(x)
    assert "..." in text
    if on_gpu(x):
        assert 0 < t.d2h_bytes < x.nbytes // 100


def test_10_a_linear_layers_parameters_and_outputs_live_on_the_chosen_device(device):
    net = nn.Sequential(nn.Linear(3, 1)).to(device)
    assert all(p.device == device for p in net.parameters())
    assert net(gpuarr.ones((2, 3), device=device)).device == device


def test_11_a_matmul_timing_table_with_cpu_and_each_gpu(capsys):
    from gpuarr import _tour

    _tour.step_timing(sizes=(8, 64))
    out = capsys.readouterr().out
    for d in _devices():
        assert repr(d) in out


def test_12_parameters_round_trip_through_a_file_bit_for_bit_onto_any_device(tmp_path):
    net = nn.Sequential(nn.Linear(3, 2)).to(try_gpu())
    gpuarr.save(tmp_path / "p.npz", net.state_dict())
    for d in _devices():
        loaded = gpuarr.load(tmp_path / "p.npz", device=d)
        for k, p in net.state_dict().items():
            assert loaded[k].device == d and bits(loaded[k]) == bits(p)


def test_13_item_per_step_costs_a_transfer_each_and_a_device_log_one():
    d = try_gpu()
    A = gpuarr.eye(4, device=d)
    with gpuarr.count_transfers() as each:
        for _ in range(50):
            gpuarr.linalg.norm(A @ A).item()
    with gpuarr.count_transfers() as once:
        gpuarr.stack([gpuarr.linalg.norm(A @ A) for _ in range(50)]).numpy()
    assert (each.d2h_count, once.d2h_count) == ((50, 1) if on_gpu(A) else (0, 0))


def test_14_products_on_two_devices_are_queued_without_waiting():
    d0, d1 = try_gpu(0), try_gpu(1)
    A0, A1 = gpuarr.eye(8, device=d0), gpuarr.eye(8, device=d1)
    with gpuarr.count_transfers() as t:
        C0, C1 = A0 @ A0, A1 @ A1
    assert t.syncs == 0
    gpuarr.synchronize()
    assert (C0.device, C1.device) == (d0, d1)
