"""Event.synchronize() reports failed queued work as the device's synchronize() does
(issue 44, item 7): a gather with a bad device index, queued before the event was
recorded, raises its IndexError at the event's wait, once, on every device kind (the
CPU raises it at the operation, as NumPy does, so nothing is left for the event)."""
import numpy as np
import pytest

import gpuarr


def queue_failed_take(d):
    x = gpuarr.arange(10.0, device=d)
    idx = gpuarr.asarray(np.array([3, 55, 1]), device=d)
    if d.type == "cpu":
        with pytest.raises(IndexError, match="index 55 is out of bounds"):
            gpuarr.take(x, idx)
        return
    gpuarr.take(x, idx)  # the result is dropped unread: the failure is still kept


def test_event_synchronize_raises_a_failure_queued_before_it(device):
    queue_failed_take(device)
    ev = gpuarr.Event()
    ev.record(device)
    if device.type == "cpu":
        ev.synchronize()  # raised at the operation already
    else:
        with pytest.raises(IndexError, match=r"index 55 is out of bounds.*failed in take"):
            ev.synchronize()
    ev.synchronize()  # each failure is raised once
    gpuarr.synchronize(device)  # and the device has nothing more to report


def test_event_synchronize_after_good_work_raises_nothing(device):
    x = gpuarr.arange(10.0, device=device)
    y = gpuarr.take(x, gpuarr.asarray(np.array([3, 1]), device=device))
    ev = gpuarr.Event()
    ev.record(device)
    ev.synchronize()
    assert y.numpy().tolist() == [3.0, 1.0]
