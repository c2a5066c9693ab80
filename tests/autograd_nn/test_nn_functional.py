"""gpuarr.nn's layers and losses, as modules and as gpuarr.nn.functional, against NumPy
on every device: values, devices, stability at extreme inputs, errors, and no host
transfer (a loss on a GPU reads nothing back)."""
import numpy as np
import pytest

import gpuarr
import gpuarr.nn.functional as F
from gpuarr import nn
from gpuarr.testing import assert_transfers

FLOATS = ["float32", "float64"]
TOL = {"float32": dict(rtol=2e-6, atol=1e-6), "float64": dict(rtol=1e-13, atol=1e-14)}


def put(a, device):
    return gpuarr.asarray(np.asarray(a), device=device)


def np_log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    s = x - m
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def np_cross_entropy(x, t, weight=None, ignore_index=-100, reduction="mean"):
    logp = np_log_softmax(x, 1)
    counted = t != ignore_index
    safe = np.where(counted, t, 0)
    w = np.ones(x.shape[1], x.dtype) if weight is None else weight
    wn = np.where(counted, w[safe], 0).astype(x.dtype)
    losses = -logp[np.arange(len(t)), safe] * wn
    if reduction == "mean":
        return losses.sum() / wn.sum()
    return losses.sum() if reduction == "sum" else losses


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# --- activations and shapes ------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,ref", [
    ("relu", lambda x: np.maximum(x, 0)),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x))),
    ("tanh", np.tanh),
])
def test_activations_match_numpy_as_functions_and_modules(device, dtype, name, ref, rng):
    x = (rng.standard_normal((3, 5)) * 4).astype(dtype)
    module = {"relu": nn.ReLU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh}[name]()
    for y in (getattr(F, name)(put(x, device)), module(put(x, device))):
        assert y.device == device and y.dtype == dtype and y.shape == x.shape
        # tanh is a transcendental function: the emulated GPU rounds it as CUDA may
        np.testing.assert_allclose(y.numpy(), ref(x), rtol=4 * TOL[dtype]["rtol"],
                                   atol=TOL[dtype]["atol"])


@pytest.mark.parametrize("dtype", FLOATS)
def test_sigmoid_neither_overflows_nor_loses_small_values(device, dtype):
    x = np.array([-1000.0, -80.0, -30.0, 0.0, 30.0, 80.0, 1000.0], dtype)
    y = F.sigmoid(put(x, device)).numpy()
    assert np.isfinite(y).all()
    with np.errstate(over="ignore"):
        ref = 1 / (1 + np.exp(-x.astype(np.float64)))
    # relative precision even where the value is tiny (1 - tanh would give 0 here)
    np.testing.assert_allclose(y, ref.astype(dtype), rtol=8 * TOL[dtype]["rtol"], atol=0)


def test_flatten_keeps_the_batch_axis_as_a_view(device):
    x = put(np.arange(2 * 1 * 3 * 4, dtype=np.float32).reshape(2, 1, 3, 4), device)
    y = nn.Flatten()(x)
    assert y.shape == (2, 12) and y.device == device and y._storage_id == x._storage_id
    np.testing.assert_array_equal(y.numpy(), x.numpy().reshape(2, 12))
    assert F.flatten(x).shape == (24,)
    assert nn.Flatten(1, 2)(x).shape == (2, 3, 4)
    assert nn.Flatten(-2)(x).shape == (2, 1, 12)
    with pytest.raises(IndexError, match="out of range"):
        F.flatten(x, 5)
    with pytest.raises(ValueError, match="after end_dim"):
        F.flatten(x, 2, 1)


def test_linear_function_is_the_layer(device, rng):
    x = rng.standard_normal((4, 3)).astype(np.float32)
    lin = nn.Linear(3, 2, device=device)
    np.testing.assert_allclose(F.linear(put(x, device), lin.weight, lin.bias).numpy(),
                               lin(put(x, device)).numpy(), rtol=1e-6)
    np.testing.assert_allclose(F.linear(put(x, device), lin.weight).numpy(),
                               x @ lin.weight.numpy().T, rtol=1e-5, atol=1e-6)


# --- dropout ---------------------------------------------------------------------------


def test_dropout_zeroes_about_p_and_scales_the_rest_on_the_device(device):
    x = gpuarr.ones((200, 100), device=device)
    with assert_transfers(max_h2d=0, max_d2h=0, max_syncs=0):
        y = nn.Dropout(0.25)(x)
    assert y.device == device
    v = y.numpy()
    kept = v != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(v[kept], 1 / 0.75, rtol=1e-6)


def test_dropout_draws_the_same_mask_on_every_device_for_one_seed(device):
    gpuarr.random.seed(3)
    a = F.dropout(gpuarr.ones(64), 0.5).numpy()
    gpuarr.random.seed(3)
    b = F.dropout(gpuarr.ones(64, device=device), 0.5).numpy()
    np.testing.assert_array_equal(a, b)


def test_dropout_passes_the_input_through_in_eval_mode_and_at_p_zero(device):
    x = gpuarr.ones((3, 3), device=device)
    d = nn.Dropout(0.5)
    assert d.eval()(x) is x
    assert F.dropout(x, 0.5, training=False) is x and F.dropout(x, 0.0) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, -0.1)


# --- softmax ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_and_log_softmax_match_numpy_and_are_stable(device, dtype, dim, rng):
    x = (rng.standard_normal((4, 6)) * 3).astype(dtype)
    x[0, :] += 1000  # exp would overflow without the shift
    xs = put(x, device)
    lp = F.log_softmax(xs, dim)
    assert lp.device == device and lp.dtype == dtype
    np.testing.assert_allclose(lp.numpy(), np_log_softmax(x, dim), rtol=8e-6 if dtype ==
                               "float32" else 1e-12, atol=1e-5 if dtype == "float32" else 1e-12)
    sm = F.softmax(xs, dim).numpy()
    assert np.isfinite(sm).all()
    np.testing.assert_allclose(sm, np.exp(np_log_softmax(x, dim)), rtol=1e-5, atol=1e-7)
    with pytest.raises(IndexError, match="dim=2"):
        F.softmax(xs, 2)


# --- MSE -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_matches_numpy(device, dtype, reduction, rng):
    x = rng.standard_normal((5, 3)).astype(dtype)
    t = rng.standard_normal((5, 3)).astype(dtype)
    ref = (x - t) ** 2
    ref = {"mean": ref.mean(), "sum": ref.sum(), "none": ref}[reduction]
    for loss in (nn.MSELoss(reduction=reduction)(put(x, device), put(t, device)),
                 F.mse_loss(put(x, device), put(t, device), reduction)):
        assert loss.device == device and loss.shape == np.shape(ref)
        np.testing.assert_allclose(loss.numpy(), ref, **TOL[dtype])


def test_mse_loss_refuses_shapes_that_would_broadcast(device):
    with pytest.raises(ValueError, match=r"\(4, 1\).*\(4,\).*reshape"):
        nn.MSELoss()(gpuarr.ones((4, 1), device=device), gpuarr.ones(4, device=device))
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss(reduction="avg")


def test_mse_loss_with_the_target_on_another_device_says_how_to_move_it(gpu_device):
    with pytest.raises(gpuarr.DeviceMismatchError, match="target is on cpu.*prepare_batch"):
        F.mse_loss(gpuarr.ones(2, device=gpu_device), gpuarr.ones(2))


# --- cross entropy ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_matches_numpy(device, dtype, reduction, weighted, rng):
    x = (rng.standard_normal((6, 4)) * 3).astype(dtype)
    t = np.array([0, 3, 1, 1, 2, 3])
    w = np.array([0.5, 2.0, 1.0, 0.25], dtype) if weighted else None
    ref = np_cross_entropy(x, t, w, reduction=reduction)
    loss_fn = nn.CrossEntropyLoss(weight=None if w is None else put(w, device),
                                  reduction=reduction)
    for loss in (loss_fn(put(x, device), put(t, device)),
                 F.cross_entropy(put(x, device), put(t, device),
                                 None if w is None else put(w, device), reduction=reduction)):
        assert loss.device == device and loss.dtype == dtype and loss.shape == np.shape(ref)
        np.testing.assert_allclose(loss.numpy(), ref, rtol=1e-5 if dtype == "float32"
                                   else 1e-12)


@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_cross_entropy_ignores_targets_equal_to_ignore_index(device, ignore_index, rng):
    x = rng.standard_normal((5, 3)).astype(np.float32)
    t = np.array([0, ignore_index, 1, ignore_index, 2 if ignore_index != 2 else 0])
    w = np.array([1.0, 2.0, 3.0], np.float32)
    for weight in (None, w):
        ref = np_cross_entropy(x, t, weight, ignore_index)
        got = nn.CrossEntropyLoss(None if weight is None else put(weight, device),
                                  ignore_index=ignore_index)(put(x, device), put(t, device))
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-5)
    none = F.cross_entropy(put(x, device), put(t, device), ignore_index=ignore_index,
                           reduction="none").numpy()
    assert (none[t == ignore_index] == 0).all()


def test_cross_entropy_is_stable_for_huge_logits(device):
    x = np.array([[1e4, 0.0, -1e4], [0.0, 3e4, 0.0]], np.float32)
    t = np.array([1, 1])
    loss = F.cross_entropy(put(x, device), put(t, device), reduction="none").numpy()
    np.testing.assert_allclose(loss, [1e4, 0.0], rtol=1e-6)


def test_cross_entropy_takes_probabilities_and_single_examples(device, rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    p = rng.random((3, 4)).astype(np.float32)
    p /= p.sum(axis=1, keepdims=True)
    ref = -(p * np_log_softmax(x, 1)).sum(axis=1).mean()
    np.testing.assert_allclose(F.cross_entropy(put(x, device), put(p, device)).numpy(),
                               ref, rtol=1e-5)
    one = F.cross_entropy(put(x[0], device), put(np.array(2), device))
    assert one.shape == ()
    np.testing.assert_allclose(one.numpy(), -np_log_softmax(x[:1], 1)[0, 2], rtol=1e-5)


def test_cross_entropy_rejects_what_it_cannot_mean(device):
    x = gpuarr.zeros((2, 3), device=device)
    with pytest.raises(ValueError, match=r"class indices of shape \(2,\)"):
        F.cross_entropy(x, gpuarr.zeros((2, 1), dtype="int64", device=device))
    with pytest.raises(ValueError, match="probability targets"):
        F.cross_entropy(x, gpuarr.zeros((2, 2), device=device))
    with pytest.raises(TypeError, match="class indices"):
        F.cross_entropy(x, gpuarr.zeros(2, dtype="bool", device=device))
    with pytest.raises(TypeError, match="floating-point logits"):
        F.cross_entropy(gpuarr.zeros((2, 3), dtype="int32", device=device),
                        gpuarr.zeros(2, dtype="int64", device=device))
    with pytest.raises(ValueError, match=r"shape \(N, C\)"):
        F.cross_entropy(gpuarr.zeros((2, 3, 4), device=device),
                        gpuarr.zeros(2, dtype="int64", device=device))
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        F.cross_entropy(x, gpuarr.zeros(2, dtype="int64", device=device),
                        weight=gpuarr.ones(2, device=device))
    with pytest.raises(TypeError, match="gpuarr array"):
        F.cross_entropy(x, np.zeros(2, np.int64))
    with pytest.raises(TypeError, match="gpuarr array"):
        nn.CrossEntropyLoss(weight=np.ones(3))


def test_a_class_index_out_of_range_is_an_index_error(device):
    x = gpuarr.zeros((2, 3), device=device)
    with pytest.raises(IndexError):
        F.cross_entropy(x, gpuarr.asarray([0, 3], device=device))
        gpuarr.synchronize()  # a GPU reports it at the next wait


def test_a_negative_class_index_is_an_index_error_not_a_class_from_the_end(device):
    x = gpuarr.zeros((2, 3), device=device)
    with pytest.raises(IndexError):
        F.cross_entropy(x, gpuarr.asarray([0, -1], device=device))
        gpuarr.synchronize()
    # ignore_index may be negative: those rows count for nothing
    loss = F.cross_entropy(x, gpuarr.asarray([1, -7], device=device), ignore_index=-7)
    np.testing.assert_allclose(loss.numpy(), np.log(3), rtol=1e-6)


@pytest.mark.parametrize("bad", [-1, -5, 5, 7])
@pytest.mark.parametrize("read", ["item", "synchronize"])
def test_a_bad_class_is_reported_in_the_loss_terms(device, bad, read):
    # issue 44 item 4: was "index -6 is out of bounds for axis 0 with size 5" on the
    # CPU and "index -6 ... (failed in x[index] ...)" on a GPU, for target -1
    x = gpuarr.zeros((3, 5), device=device)
    w = gpuarr.ones(5, device=device)
    for weight in (None, w):
        with pytest.raises(IndexError) as e:
            loss = F.cross_entropy(x, gpuarr.asarray([0, bad, 2], device=device),
                                   weight=weight)
            loss.item() if read == "item" else gpuarr.synchronize()
        msg = str(e.value)
        assert f"target class {bad} is out of range for 5 classes" in msg, msg
        assert "cross_entropy" in msg and "x[index]" not in msg, msg
        assert "more failed" not in msg, msg  # the weight's gather adds no failure
    gpuarr.synchronize()  # each reported once
    # the terms do not leak to a later gather of the same thread
    a = gpuarr.arange(4.0, device=device)
    with pytest.raises(IndexError, match="index 9 is out of bounds") as e:
        a[gpuarr.asarray([9], device=device)].item()
    assert "target class" not in str(e.value)


def test_relu_gradient_is_zero_at_zero_and_passes_nan_on(device):
    # PyTorch's and MXNet's rule (maximum's tie rule would give half at 0)
    x = put(np.array([-1.0, 0.0, 2.0, np.nan], np.float32), device)
    x.requires_grad_()
    y = F.relu(x)
    assert type(y.grad_fn).__name__ == "ReluBackward"
    y.backward(put(np.array([3.0, 5.0, 7.0, 11.0], np.float32), device))
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 7.0, 11.0])
    np.testing.assert_array_equal(y.detach().numpy(), [0.0, 0.0, 2.0, np.nan])


def test_a_classifier_loss_is_two_nodes_and_its_gradient_is_softmax_minus_onehot(device,
                                                                                  rng):
    x_n = rng.standard_normal((4, 3))
    t_n = np.array([2, 0, 1, 2])
    x = put(x_n, device)
    x.requires_grad_()
    loss = F.cross_entropy(x, put(t_n, device))
    assert type(loss.grad_fn).__name__ == "NllLossBackward"
    ((inner, _),) = loss.grad_fn.next_functions
    assert type(inner).__name__ == "LogSoftmaxBackward"
    loss.backward()
    p = np.exp(x_n - x_n.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(4), t_n] -= 1
    np.testing.assert_allclose(x.grad.numpy(), p / 4, rtol=1e-12, atol=1e-15)


def test_a_loss_on_a_gpu_reads_nothing_back(gpu_device, rng):
    x = put(rng.standard_normal((8, 5)).astype(np.float32), gpu_device)
    t = put(rng.integers(0, 5, 8), gpu_device)
    loss_fn = nn.CrossEntropyLoss(weight=gpuarr.ones(5)).to(gpu_device)
    with assert_transfers(max_h2d=0, max_d2h=0, max_d2d=0, max_syncs=0):
        loss = loss_fn(x, t) + F.mse_loss(x, x * 2)
    assert loss.device == gpu_device


# --- the weight buffer and its device --------------------------------------------------


def test_cross_entropy_loss_keeps_its_weight_as_a_buffer():
    crit = nn.CrossEntropyLoss(weight=gpuarr.asarray([1.0, 2.0]))
    assert [k for k, _ in crit.named_buffers()] == ["weight"]
    assert list(crit.parameters()) == [] and list(crit.state_dict()) == ["weight"]
    assert nn.CrossEntropyLoss().weight is None
    assert list(nn.CrossEntropyLoss().state_dict()) == []


def test_a_weight_left_on_the_cpu_names_the_buffer_and_the_fix(gpu_device):
    crit = nn.CrossEntropyLoss(weight=gpuarr.asarray([1.0, 2.0, 3.0]))
    x = gpuarr.zeros((2, 3), device=gpu_device)
    t = gpuarr.asarray([0, 2], device=gpu_device)
    with pytest.raises(gpuarr.DeviceMismatchError) as e:
        crit(x, t)
    msg = str(e.value)
    assert "'weight'" in msg and "CrossEntropyLoss" in msg and "cpu(0)" in msg
    assert "criterion.to(gpu(0))" in msg and "criterion.cuda()" in msg
    assert crit.cuda() is crit and crit.weight.device == gpu_device
    np.testing.assert_allclose(crit(x, t).numpy(), np.log(3), rtol=1e-6)
    with pytest.raises(gpuarr.DeviceMismatchError, match=r"criterion.cpu\(\)"):
        crit(gpuarr.zeros((2, 3)), gpuarr.asarray([0, 2]))


def test_a_weight_on_the_other_gpu_says_cuda_of_that_index(two_gpus):
    crit = nn.CrossEntropyLoss(weight=gpuarr.ones(3)).cuda(0)
    x = gpuarr.zeros((2, 3), device=two_gpus[1])
    with pytest.raises(gpuarr.DeviceMismatchError, match=r"criterion.cuda\(1\)"):
        crit(x, gpuarr.asarray([0, 2], device=two_gpus[1]))
    with pytest.raises(gpuarr.DeviceMismatchError, match=r"weight.to\(gpu\(1\)\)"):
        F.cross_entropy(x, gpuarr.asarray([0, 2], device=two_gpus[1]), crit.weight)


def test_loss_modules_have_pytorch_reprs():
    assert repr(nn.MSELoss()) == "MSELoss()"
    assert repr(nn.CrossEntropyLoss(reduction="sum")) == "CrossEntropyLoss(reduction='sum')"
    assert repr(nn.Dropout(0.1)) == "Dropout(p=0.1)"
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"


def test_losses_and_activations_take_strided_views(device, rng):
    base = rng.standard_normal((6, 8)).astype(np.float32)
    x_n = base[:, ::2].T  # (4, 6), neither C- nor F-contiguous
    x = put(base, device)[:, ::2].T
    assert not x.is_contiguous
    t_n = np.array([0, 5, 2, 3])
    np.testing.assert_allclose(F.cross_entropy(x, put(t_n, device)).numpy(),
                               np_cross_entropy(x_n, t_n), rtol=1e-5)
    np.testing.assert_allclose(F.log_softmax(x, 0).numpy(), np_log_softmax(x_n, 0),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(F.mse_loss(x, x[::-1]).numpy(),
                               ((x_n - x_n[::-1]) ** 2).mean(), rtol=1e-5)
    np.testing.assert_allclose(F.sigmoid(x).numpy(), 1 / (1 + np.exp(-x_n)), rtol=1e-5)
    lin = nn.Linear(6, 3, device=device)
    np.testing.assert_allclose(lin(x).numpy(),
                               x_n @ lin.weight.numpy().T + lin.bias.numpy(), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_sigmoid_and_mse_loss_run_fused_outside_autograd_with_the_same_bits(device, rng,
                                                                            reduction):
    # outside autograd one fused operation each (a full sum made as it runs on the CPU);
    # while autograd records, the operations one by one: the same bits either way
    from gpuarr.testing import count_work
    a = (rng.standard_normal((64, 10)) * 20).astype(np.float32)
    x, t = put(a, device), put(a[::-1].copy(), device)
    xg = put(a, device).requires_grad_()
    with gpuarr.no_grad():
        with count_work(device) as w:
            s = F.sigmoid(x)
        assert w[device].elementwise == 1, str(w)
        with count_work(device) as w:
            loss = F.mse_loss(x, t, reduction)
    recorded = F.sigmoid(xg)
    assert recorded.requires_grad
    assert s.numpy().tobytes() == recorded.detach().numpy().tobytes()
    with count_work(device) as u:
        lg = F.mse_loss(xg, t, reduction)
    assert lg.requires_grad
    # unfused: a subtract and a multiply (and mean's division); fused: the chain is
    # reduced as it is made (not on CUDA, where it is one operation), then mean divides
    on_cuda = device.type == "gpu" and gpuarr._core._gpu_mode()[0] in ("cuda", "emulated")
    fused = {"none": 1, "sum": int(on_cuda), "mean": 1 + on_cuda}[reduction]
    assert (w[device].elementwise, u[device].elementwise) == (fused, 2 + (reduction == "mean")), \
        (str(w), str(u))
    assert w[device].reductions == u[device].reductions == (reduction != "none")
    assert loss.numpy().tobytes() == lg.detach().numpy().tobytes()
