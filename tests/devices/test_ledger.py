"""The transfer ledger: every crossing between host and devices, and every wait, is
counted; TransferWarning points at reads of device arrays when asked to."""
import warnings

import numpy as np
import pytest

import gpuarr

FIELDS = ["h2d_bytes", "h2d_count", "d2h_bytes", "d2h_count", "d2d_bytes", "d2d_count",
          "syncs"]


def test_transfer_stats_has_every_field_as_an_int():
    s = gpuarr.transfer_stats()
    assert isinstance(s, gpuarr.TransferStats)
    for f in FIELDS:
        assert isinstance(getattr(s, f), int) and getattr(s, f) >= 0


def test_reset_sets_every_counter_to_zero(gpu_device):
    gpuarr.asarray(np.ones(4), device=gpu_device).numpy()
    gpuarr.reset_transfer_stats()
    assert gpuarr.transfer_stats() == gpuarr.TransferStats()


def test_transfer_stats_print_readably():
    text = str(gpuarr.TransferStats(h2d_bytes=12, h2d_count=1))
    assert "host->device: 1 copy, 12 bytes" in text and "waits: 0" in text


def test_creating_from_host_data_on_a_gpu_is_one_h2d(gpu_device):
    a = np.arange(10, dtype=np.float32)
    with gpuarr.count_transfers() as t:
        gpuarr.asarray(a, device=gpu_device)
    assert (t.h2d_count, t.h2d_bytes, t.d2h_count, t.d2d_count) == (1, 40, 0, 0)


def test_cpu_arrays_never_cross():
    with gpuarr.count_transfers() as t:
        x = gpuarr.asarray(np.arange(6.0))
        x.numpy()
        gpuarr.asarray(np.array([2.0])).item()
        x.to(gpuarr.cpu())
        x.copyto(gpuarr.cpu())
    assert t.stats == gpuarr.TransferStats()


def test_numpy_of_a_gpu_array_is_one_d2h_of_its_bytes(gpu_device):
    x = gpuarr.asarray(np.arange(8, dtype=np.int16), device=gpu_device)
    with gpuarr.count_transfers() as t:
        x.numpy()
    assert (t.d2h_count, t.d2h_bytes, t.h2d_count) == (1, 16, 0)
    assert t.syncs >= 1


@pytest.mark.parametrize("read", [
    lambda x: x.item(), float, int, bool, lambda x: gpuarr.asnumpy(x),
])
def test_reading_one_element_of_a_gpu_array_is_one_d2h(gpu_device, read):
    x = gpuarr.asarray(np.array([3.0], np.float32), device=gpu_device)
    with gpuarr.count_transfers() as t:
        read(x)
    assert t.d2h_count == 1 and t.d2h_bytes == 4


def test_printing_a_gpu_array_is_a_d2h(gpu_device):
    x = gpuarr.asarray(np.arange(4.0), device=gpu_device)
    with gpuarr.count_transfers() as t:
        str(x)
    assert t.d2h_count >= 1
    with gpuarr.count_transfers() as t:
        repr(x)
    assert t.d2h_count >= 1


def test_a_copy_between_gpus_is_one_d2d(two_gpus):
    g0, g1 = two_gpus
    x = gpuarr.asarray(np.arange(16, dtype=np.float64), device=g0)
    with gpuarr.count_transfers() as t:
        y = x.to(g1)
    assert (t.d2d_count, t.d2d_bytes, t.h2d_count, t.d2h_count) == (1, 128, 0, 0)
    with gpuarr.count_transfers() as t:
        x.copyto(y)
    assert t.d2d_count == 1


def test_gpu_to_cpu_is_a_d2h_and_cpu_to_gpu_a_h2d(gpu_device):
    x = gpuarr.asarray(np.arange(4, dtype=np.int64))
    with gpuarr.count_transfers() as t:
        y = x.to(gpu_device)
        y.to(gpuarr.cpu())
    assert (t.h2d_count, t.h2d_bytes, t.d2h_count, t.d2h_bytes) == (1, 32, 1, 32)


def test_to_the_same_device_crosses_nothing(device):
    x = gpuarr.asarray(np.ones(3), device=device)
    with gpuarr.count_transfers() as t:
        x.to(device)
    assert t.stats == gpuarr.TransferStats()


def test_synchronize_counts_a_wait(gpu_device):
    with gpuarr.count_transfers() as t:
        gpuarr.synchronize(gpu_device)
    assert t.syncs == 1


def test_count_transfers_freezes_at_the_end_of_the_block(gpu_device):
    x = gpuarr.asarray(np.ones(2), device=gpu_device)
    with gpuarr.count_transfers() as t:
        x.numpy()
    x.numpy()
    assert t.d2h_count == 1
    assert "device->host: 1 copy" in repr(t)


def test_a_loop_of_item_calls_counts_one_d2h_each(gpu_device):
    x = gpuarr.asarray(np.array([1.5], np.float32), device=gpu_device)
    with gpuarr.count_transfers() as t:
        for _ in range(25):
            x.item()
    assert t.d2h_count == 25 and t.d2h_bytes == 100


def test_the_ledger_counts_work_on_every_thread(gpu_device):
    import threading

    x = gpuarr.asarray(np.ones(3), device=gpu_device)
    with gpuarr.count_transfers() as t:
        th = [threading.Thread(target=x.numpy) for _ in range(4)]
        for h in th:
            h.start()
        for h in th:
            h.join()
    assert t.d2h_count == 4


# --- TransferWarning ----------------------------------------------------------------------

def test_transfer_warning_is_off_by_default(gpu_device):
    x = gpuarr.asarray(np.array([1.0]), device=gpu_device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.item()


def test_transfer_warning_is_opt_in_and_names_the_read(gpu_device):
    x = gpuarr.asarray(np.array([1.0]), device=gpu_device)
    with gpuarr.warn_on_transfers():
        with pytest.warns(gpuarr.TransferWarning, match="item\\(\\)"):
            x.item()
        with pytest.warns(gpuarr.TransferWarning):
            float(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.item()  # the setting was restored


def test_transfer_warning_is_silent_for_cpu_arrays_and_explicit_numpy(gpu_device):
    c = gpuarr.asarray(np.array([1.0]))
    g = gpuarr.asarray(np.array([1.0]), device=gpu_device)
    with gpuarr.warn_on_transfers(), warnings.catch_warnings():
        warnings.simplefilter("error")
        c.item()
        g.numpy()


def test_warn_on_transfers_returns_the_previous_setting():
    assert not gpuarr.warn_on_transfers(True)
    try:
        assert gpuarr.warn_on_transfers(True)
    finally:
        gpuarr.warn_on_transfers(False)
    assert gpuarr.warn_on_transfers(False) == False  # noqa: E712


def test_transfer_warning_is_a_user_warning():
    assert issubclass(gpuarr.TransferWarning, UserWarning)
