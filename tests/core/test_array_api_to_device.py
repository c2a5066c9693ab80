"""The array API's to_device(device, /, *, stream=None) (issue 44, item 10): stream=None
is accepted, so array_api_compat.to_device(x, d) works on every device; any other
stream is refused with a message saying why, since gpuarr has no stream objects."""
import array_api_compat
import numpy as np
import pytest

import gpuarr


def test_to_device_accepts_stream_none(device):
    x = gpuarr.asarray([1.0, 2.0, 3.0], device=gpuarr.cpu())
    y = x.to_device(device, stream=None)
    assert y.device == device and y.numpy().tolist() == [1, 2, 3]
    assert y.to_device(device, stream=None) is y  # already there: the same array
    back = y.to_device(gpuarr.cpu(), stream=None)
    assert back.device == gpuarr.cpu() and back.numpy().tolist() == [1, 2, 3]


def test_array_api_compat_to_device_works(device):
    x = gpuarr.asarray(np.arange(4.0), device=gpuarr.cpu())
    y = array_api_compat.to_device(x, device)
    assert array_api_compat.device(y) == device
    np.testing.assert_array_equal(y.numpy(), np.arange(4.0))
    z = array_api_compat.to_device(y, gpuarr.cpu())
    assert z.device == gpuarr.cpu()


@pytest.mark.parametrize("stream", [1, 0, "default", object()])
def test_to_device_refuses_a_stream_it_cannot_honour(device, stream):
    x = gpuarr.ones(2, device=device)
    with pytest.raises(ValueError, match="gpuarr has no stream objects.*stream=None"):
        x.to_device(gpuarr.cpu(), stream=stream)
    with pytest.raises(ValueError, match="gpuarr has no stream objects"):
        array_api_compat.to_device(x, device, stream=stream)


def test_to_device_keeps_its_positional_only_device_and_non_blocking(device):
    x = gpuarr.ones(2, device=device)
    with pytest.raises(TypeError):
        x.to_device(device, None)  # stream is keyword-only
    assert x.to_device(gpuarr.cpu(), non_blocking=True).numpy().tolist() == [1, 1]
