"""gpuarr.save / gpuarr.load: NumPy's formats, any device, bit-for-bit."""
import numpy as np
import pytest

import gpuarr
from conftest import ALL_DTYPES, COMPLEX_DTYPES, FLOAT_DTYPES


def _sample(dtype):
    rng = np.random.default_rng(0)
    if dtype == "bool":
        return rng.random((3, 4)) > 0.5
    if dtype in FLOAT_DTYPES or dtype in COMPLEX_DTYPES:
        a = (rng.standard_normal((3, 4)) * 100).astype(dtype)
        if dtype in FLOAT_DTYPES:
            bits = a.view({"float16": np.uint16, "float32": np.uint32,
                           "float64": np.uint64}[dtype])
            nan = {"float16": 0x7E01, "float32": 0x7FC00123, "float64": 0x7FF8000000000ABC}
            bits[0, 0] = nan[dtype]  # a NaN with a payload
            a[0, 1], a[0, 2] = np.inf, -0.0
        return a
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, size=(3, 4), dtype=dtype, endpoint=True)
    a[0, 0], a[0, 1] = info.min, info.max
    return a


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_dtype_round_trips_bit_for_bit(tmp_path, device, dtype):
    a = _sample(dtype)
    x = gpuarr.asarray(a, device=device)
    path = tmp_path / "x.npy"
    gpuarr.save(path, x)
    y = gpuarr.load(path, device=device)
    assert y.device == device and y.dtype == dtype and y.shape == a.shape
    assert y.numpy().tobytes() == a.tobytes()


def test_numpy_reads_what_gpuarr_saves_and_back(tmp_path, device):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    gpuarr.save(tmp_path / "a.npy", gpuarr.asarray(a, device=device))
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), a)
    np.save(tmp_path / "b.npy", a.T)
    b = gpuarr.load(tmp_path / "b.npy", device=device)
    assert b.device == device
    np.testing.assert_array_equal(b.numpy(), a.T)


def test_the_path_is_used_exactly_as_given(tmp_path):
    gpuarr.save(tmp_path / "weights", gpuarr.asarray(np.ones(2)))
    gpuarr.save(str(tmp_path / "both"), {"a": gpuarr.asarray(np.ones(2))})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["both", "weights"]
    assert gpuarr.load(tmp_path / "weights").shape == (2,)
    assert list(gpuarr.load(tmp_path / "both")) == ["a"]


def test_a_dict_of_arrays_is_an_npz_that_numpy_reads(tmp_path, device):
    d = {"0.weight": gpuarr.asarray(np.eye(2, dtype=np.float32), device=device),
         "0.bias": gpuarr.asarray(np.array([1.5], np.float64), device=device),
         "host": np.arange(3)}
    gpuarr.save(tmp_path / "p.npz", d)
    with np.load(tmp_path / "p.npz") as z:
        assert sorted(z.files) == sorted(d)
        np.testing.assert_array_equal(z["0.weight"], np.eye(2))
    back = gpuarr.load(tmp_path / "p.npz", device=device)
    assert list(back) == list(d)
    assert all(v.device == device for v in back.values())
    assert back["0.bias"].dtype == gpuarr.float64


def test_load_defaults_to_the_cpu_like_map_location(tmp_path, gpu_device):
    gpuarr.save(tmp_path / "x.npy", gpuarr.asarray(np.ones(3), device=gpu_device))
    assert gpuarr.load(tmp_path / "x.npy").device == gpuarr.cpu()
    assert gpuarr.load(tmp_path / "x.npy", device="gpu:0").device == gpuarr.gpu(0)


def test_zero_d_and_empty_arrays_round_trip(tmp_path, device):
    for a in (np.array(3.5, np.float32), np.zeros((0, 4), np.int8)):
        gpuarr.save(tmp_path / "z.npy", gpuarr.asarray(a, device=device))
        b = gpuarr.load(tmp_path / "z.npy", device=device)
        assert b.shape == a.shape and b.numpy().tobytes() == a.tobytes()


def test_strided_arrays_save_their_values(tmp_path, device):
    a = np.arange(20.0).reshape(4, 5)[::-1, ::2]
    gpuarr.save(tmp_path / "s.npy", gpuarr.asarray(a, device=device))
    np.testing.assert_array_equal(np.load(tmp_path / "s.npy"), a)


def test_saving_a_device_array_is_a_d2h_and_loading_onto_a_gpu_a_h2d(tmp_path, gpu_device):
    x = gpuarr.asarray(np.ones(4, np.float32), device=gpu_device)
    with gpuarr.count_transfers() as t:
        gpuarr.save(tmp_path / "x.npy", x)
        gpuarr.load(tmp_path / "x.npy", device=gpu_device)
    assert (t.d2h_count, t.h2d_count) == (1, 1)


def test_a_state_dict_round_trips_into_a_module_on_another_device(tmp_path, device):
    net = gpuarr.nn.Sequential(gpuarr.nn.Linear(3, 2))
    gpuarr.save(tmp_path / "net.npz", net.state_dict())
    clone = gpuarr.nn.Sequential(gpuarr.nn.Linear(3, 2)).to(device)
    clone.load_state_dict(gpuarr.load(tmp_path / "net.npz", device=device))
    for p, q in zip(net.parameters(), clone.parameters()):
        assert q.device == device and p.numpy().tobytes() == q.numpy().tobytes()


def test_save_rejects_what_it_cannot_write(tmp_path):
    with pytest.raises(TypeError, match="arrays"):
        gpuarr.save(tmp_path / "x", "text")
    with pytest.raises(TypeError, match="keys must be strings"):
        gpuarr.save(tmp_path / "x", {1: np.ones(1)})
    with pytest.raises(TypeError, match="path first"):
        gpuarr.save(gpuarr.asarray(np.ones(1)), str(tmp_path / "x"))


def test_loading_a_pickled_object_array_is_refused(tmp_path):
    np.save(tmp_path / "o.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError):
        gpuarr.load(tmp_path / "o.npy")


# --- files in the other byte order (numpy.save of a ">f4" array on a little-endian host) --

SWAPPABLE = [d for d in ALL_DTYPES if np.dtype(d).itemsize > 1]


@pytest.mark.parametrize("dtype", SWAPPABLE)
def test_a_non_native_byte_order_npy_loads_swapped(tmp_path, device, dtype):
    values = (np.arange(-3, 9).reshape(3, 4) % 7).astype(dtype)
    other = values.astype(values.dtype.newbyteorder("S"))  # same values, other order
    assert not other.dtype.isnative
    np.save(tmp_path / "a.npy", other)
    got = gpuarr.load(str(tmp_path / "a.npy"), device=device)
    assert got.device == device and got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.numpy(), values)


def test_a_non_native_byte_order_npz_loads_swapped(tmp_path, device):
    w = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    b = np.array([1, -2, 3], dtype=np.int64)
    np.savez(tmp_path / "p.npz", w=w.astype(w.dtype.newbyteorder("S")),
             b=b.astype(b.dtype.newbyteorder("S")), native=w)
    got = gpuarr.load(str(tmp_path / "p.npz"), device=device)
    for name, want in {"w": w, "b": b, "native": w}.items():
        assert got[name].device == device and got[name].dtype == want.dtype
        assert got[name].numpy().tobytes() == want.tobytes()
