import numpy as np

import gpuarr as ga


def test_parameters_round_trip_bit_for_bit(student, gpuarr_device, tmp_path):
    ex = student("ex2_roundtrip")
    params = {"weight": ga.randn(4, 3, device=ga.try_gpu()),
              "bias": ga.array([0.1, -0.0, 3.5e-38], device=ga.try_gpu())}
    loaded = ex.save_and_load(params, str(tmp_path / "params.npz"), gpuarr_device)
    assert set(loaded) == set(params)
    for name, value in params.items():
        assert loaded[name].device == gpuarr_device
        assert loaded[name].dtype == value.dtype
        assert loaded[name].numpy().tobytes() == value.numpy().tobytes()
