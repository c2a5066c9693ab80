"""Autograd's behaviour, as PyTorch and MXNet users expect it, on every device: the
recording rule and grad modes (per thread), accumulation, retain_graph, detach,
requires_grad on creation, in-place rules and saved-array versions, MXNet's
attach_grad/record/pause, moves between devices, what is not differentiable, and the
errors. Gradient values are checked against finite differences in
test_autograd_gradcheck.py."""
import threading

import numpy as np
import pytest

import gpuarr
from gpuarr import autograd


def leaf(values, device, dtype="float32"):
    return gpuarr.asarray(values, dtype=dtype, device=device, requires_grad=True)


# --- attributes and the recording rule ---------------------------------------------------

def test_a_new_array_is_a_leaf_that_does_not_require_grad(device):
    x = gpuarr.ones(3, device=device)
    assert not x.requires_grad and x.is_leaf and x.grad is None and x.grad_fn is None


def test_requires_grad_makes_operations_recorded(device):
    x = leaf([1.0, 2.0], device)
    y = x * 3.0
    assert y.requires_grad and not y.is_leaf
    assert type(y.grad_fn).__name__ == "MulBackward" and y.grad_fn.name() == "MulBackward"
    assert y.grad is None  # non-leaves keep no gradient
    z = gpuarr.ones(2, device=device) * 3.0
    assert not z.requires_grad and z.grad_fn is None


def test_grad_fn_names_the_operation(device):
    x = leaf([[1.0, 2.0], [3.0, 4.0]], device)
    assert type((x @ x).grad_fn).__name__ == "MatmulBackward"
    assert type((x + 1).grad_fn).__name__ == "AddBackward"
    assert type(x.sum().grad_fn).__name__ == "SumBackward"
    assert type(x.T.grad_fn).__name__ == "PermuteBackward"
    assert type(x[0].grad_fn).__name__ == "IndexBackward"
    assert (x @ x).grad_fn.next_functions == ((x, 0), (x, 0))


def test_repr_shows_grad_fn_and_requires_grad_as_pytorch_does(device):
    x = leaf([1.0, 2.0], device)
    assert repr(x).endswith("requires_grad=True)")
    y = (x @ x)
    assert repr(y).endswith("grad_fn=<MatmulBackward>)")
    assert "requires_grad" not in repr(x.detach()) and "grad_fn" not in repr(x.detach())


def test_requires_grad_on_every_creation_function(device):
    made = [
        gpuarr.asarray([1.0, 2.0], device=device, requires_grad=True),
        gpuarr.array([1.0, 2.0], device=device, requires_grad=True),
        gpuarr.zeros(2, device=device, requires_grad=True),
        gpuarr.ones(2, device=device, requires_grad=True),
        gpuarr.empty(2, device=device, requires_grad=True),
        gpuarr.full(2, 3.0, device=device, requires_grad=True),
        gpuarr.arange(3.0, device=device, requires_grad=True),
        gpuarr.linspace(0, 1, 3, device=device, requires_grad=True),
        gpuarr.eye(2, device=device, requires_grad=True),
        gpuarr.rand(2, device=device, requires_grad=True),
        gpuarr.randn(2, device=device, requires_grad=True),
        gpuarr.random.uniform(size=2, device=device, requires_grad=True),
        gpuarr.random.normal(size=2, device=device, requires_grad=True),
    ]
    base = gpuarr.ones(2, device=device)
    made += [f(base, requires_grad=True) for f in
             (gpuarr.zeros_like, gpuarr.ones_like, gpuarr.empty_like)]
    made.append(gpuarr.full_like(base, 2.0, requires_grad=True))
    for x in made:
        assert x.requires_grad and x.is_leaf and x.device == device
    assert not gpuarr.zeros(2, device=device).requires_grad


def test_asarray_with_requires_grad_gives_a_new_leaf_sharing_memory(device):
    x = gpuarr.ones(3, device=device)
    y = gpuarr.asarray(x, requires_grad=True)
    assert y is not x and not x.requires_grad and y.requires_grad
    assert y._storage_id == x._storage_id


def test_integer_and_bool_arrays_cannot_require_grad(device):
    with pytest.raises(RuntimeError, match="only arrays of a floating dtype"):
        gpuarr.arange(3, device=device).requires_grad_()
    with pytest.raises(RuntimeError, match="int64.*astype"):
        gpuarr.zeros(2, dtype="int64", device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="bool"):
        gpuarr.asarray([True], device=device).requires_grad = True
    with pytest.raises(RuntimeError, match="real floating arrays only"):
        gpuarr.zeros(2, dtype="complex64", device=device).requires_grad_()
    with pytest.raises(TypeError, match="must be a bool"):
        gpuarr.zeros(2, device=device).requires_grad = 1


def test_requires_grad_is_settable_on_leaves_only(device):
    x = leaf([1.0], device)
    y = x * 2
    y.requires_grad_(True)  # already true: allowed, as in PyTorch
    with pytest.raises(RuntimeError, match="leaf arrays.*detach"):
        y.requires_grad = False
    x.requires_grad = False
    assert not (x * 2).requires_grad


def test_non_differentiable_operations_give_no_graph(device):
    x = leaf([1.5, -2.5, 3.0], device)
    results = [x > 0, x == x, gpuarr.argmax(x), gpuarr.floor(x), gpuarr.ceil(x),
               gpuarr.sign(x), gpuarr.round(x), gpuarr.isnan(x), x.astype("int32"),
               gpuarr.argsort(x), x // 2, gpuarr.nextafter(x, 0.0), gpuarr.trunc(x),
               gpuarr.any(x), gpuarr.imag(x)]
    for r in results:
        assert not r.requires_grad and r.grad_fn is None


def test_operations_that_cannot_be_differentiated_say_so(device):
    x = leaf([[2.0, 1.0], [1.0, 3.0]], device)
    for call in (lambda: gpuarr.linalg.solve(x, x), lambda: gpuarr.linalg.cholesky(x),
                 lambda: gpuarr.sort(x), lambda: gpuarr.cumulative_prod(x, axis=0),
                 lambda: gpuarr.linalg.matrix_norm(x)):
        with pytest.raises(NotImplementedError, match="not differentiable.*no_grad"):
            call()
    with gpuarr.no_grad():
        gpuarr.linalg.solve(x, x)
        gpuarr.sort(x)
    gpuarr.sort(x.detach())


def test_complex_results_are_refused(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(NotImplementedError, match="complex result.*real floating"):
        x * 1j
    with pytest.raises(NotImplementedError, match="complex"):
        x.astype("complex64")


# --- backward --------------------------------------------------------------------------

def test_backward_of_a_scalar_puts_the_gradient_in_grad(device):
    x = leaf([1.0, 2.0, 3.0], device)
    (x * x).sum().backward()
    assert x.grad.device == device and x.grad.dtype == gpuarr.float32
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_gradients_accumulate_across_backward_calls(device):
    x = leaf([1.0, 2.0], device)
    for _ in range(3):
        (x * 2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])
    x.grad = None
    (x * 2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_accumulation_adds_into_the_same_grad_array(device):
    x = leaf([1.0, 2.0], device)
    (x * 1.0).sum().backward()
    g = x.grad
    (x * 1.0).sum().backward()
    assert x.grad is g
    np.testing.assert_allclose(g.numpy(), [2.0, 2.0])


def test_two_leaves_never_share_a_gradient_array(device):
    a, b = leaf([1.0, 2.0], device), leaf([3.0, 4.0], device)
    (a + b).sum().backward()
    assert a.grad is not b.grad and a.grad._storage_id != b.grad._storage_id
    with gpuarr.no_grad():
        a.grad *= 10.0
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 1.0])


def test_the_callers_gradient_is_never_stored_as_a_grad(device):
    x = leaf([1.0, 2.0], device)
    g = gpuarr.asarray([1.0, 1.0], device=device)
    (x + 0.0).backward(g)
    assert x.grad is not g
    g += 5.0
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])


def test_backward_of_a_non_scalar_needs_a_gradient(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="only for scalar outputs.*gradient="):
        (x * 2).backward()
    (x * 2).backward(gpuarr.asarray([1.0, 10.0], device=device))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 20.0])
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(gpuarr.ones(3, device=device))


def test_backward_of_an_array_that_does_not_require_grad_raises(device):
    with pytest.raises(RuntimeError, match="does not require grad"):
        gpuarr.ones(1, device=device).backward()
    x = leaf([1.0], device)
    with gpuarr.no_grad():
        y = x * 2
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.backward()


def test_backward_of_a_leaf_is_its_own_gradient(device):
    x = leaf([3.0], device)
    x.backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])


def test_the_graph_is_freed_by_backward_unless_retained(device):
    x = leaf([1.0, 2.0], device)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (np.exp([1, 2]) * (1 + np.array([1, 2]))),
                               rtol=1e-6)
    with pytest.raises(RuntimeError, match="backward through the graph a second time.*"
                                           "retain_graph=True"):
        y.backward()


def test_a_shared_subgraph_serves_two_losses_with_retain_graph(device):
    x = leaf([1.0, 2.0], device)
    h = x * x
    a, b = h.sum(), (h * 3.0).sum()
    a.backward(retain_graph=True)
    b.backward()
    np.testing.assert_allclose(x.grad.numpy(), 8 * np.array([1.0, 2.0]))


def test_autograd_backward_takes_several_roots(device):
    x = leaf([1.0, 2.0], device)
    autograd.backward([x.sum(), (x * x).sum()])
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 5.0])


def test_autograd_grad_returns_gradients_without_touching_grad(device):
    x, w = leaf([1.0, 2.0], device), leaf([3.0, 4.0], device)
    h = x * w
    y = (h * h).sum()
    gx, gh = autograd.grad(y, [x, h])
    np.testing.assert_allclose(gx.numpy(), 2 * np.array([3.0, 8.0]) * [3.0, 4.0])
    np.testing.assert_allclose(gh.numpy(), [6.0, 16.0])
    assert x.grad is None and w.grad is None
    z = leaf([1.0], device)
    with pytest.raises(RuntimeError, match="allow_unused"):
        autograd.grad((x * 2).sum(), [z])
    assert autograd.grad((x * 2).sum(), [z], allow_unused=True) == (None,)


def test_gradient_dtype_follows_the_leaf(device):
    x = leaf([1.0, 2.0], device, "float32")
    y = leaf([3.0, 4.0], device, "float64")
    (x * y).sum().backward()  # float64 result
    assert x.grad.dtype == gpuarr.float32 and y.grad.dtype == gpuarr.float64
    h = leaf([1.0, 2.0], device, "float16")
    (h.astype("float32") * 2.0).sum().backward()
    assert h.grad.dtype == gpuarr.float16
    np.testing.assert_allclose(h.grad.numpy(), [2.0, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])


def test_create_graph_is_not_supported(device):
    x = leaf([1.0], device)
    with pytest.raises(NotImplementedError, match="create_graph"):
        (x * 2).sum().backward(create_graph=True)


def test_a_long_chain_is_freed_without_deep_recursion(device):
    x = leaf([1.0], device)
    y = x
    for _ in range(20000):
        y = y + 0.0
    del y  # the chain's nodes are freed one after another, not recursively


# --- detach and grad -------------------------------------------------------------------

def test_detach_shares_memory_and_leaves_the_graph(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    d = y.detach()
    assert d._storage_id == y._storage_id and not d.requires_grad and d.is_leaf
    d += 1.0  # allowed: d is outside any graph
    np.testing.assert_allclose(y.numpy(), [3.0, 5.0])


def test_grad_is_settable_and_deletable_with_checks(device):
    x = leaf([1.0, 2.0], device)
    g = gpuarr.ones(2, device=device)
    x.grad = g
    assert x.grad is g
    del x.grad
    assert x.grad is None
    with pytest.raises(TypeError, match="gpuarr.Array or None"):
        x.grad = [1.0, 2.0]
    with pytest.raises(ValueError, match="shape"):
        x.grad = gpuarr.ones(3, device=device)
    with pytest.raises(TypeError, match="dtype float64"):
        x.grad = gpuarr.ones(2, dtype="float64", device=device)


def test_grad_of_another_device_is_refused(two_gpus):
    x = leaf([1.0, 2.0], two_gpus[0])
    with pytest.raises(gpuarr.DeviceMismatchError, match="its array's device"):
        x.grad = gpuarr.ones(2, device=two_gpus[1])


def test_a_grad_with_autograd_state_is_stored_as_a_plain_alias(device):
    x = leaf([1.0, 2.0], device)
    x.grad = x  # would be a reference cycle through .grad
    assert x.grad is not x and not x.grad.requires_grad
    assert x.grad._storage_id == x._storage_id


# --- grad modes ------------------------------------------------------------------------

def test_no_grad_and_enable_grad_as_context_managers(device):
    x = leaf([1.0], device)
    assert gpuarr.is_grad_enabled()
    with gpuarr.no_grad():
        assert not gpuarr.is_grad_enabled() and not (x * 2).requires_grad
        with gpuarr.enable_grad():
            assert (x * 2).requires_grad
        assert not gpuarr.is_grad_enabled()
    assert gpuarr.is_grad_enabled() and (x * 2).requires_grad


def test_grad_modes_as_decorators(device):
    x = leaf([1.0], device)

    @gpuarr.no_grad()
    def f():
        return x * 2

    @gpuarr.no_grad
    def g():
        return x * 2

    @gpuarr.enable_grad()
    def h():
        return x * 2

    @autograd.record()
    def r():
        return x * 2

    @autograd.pause()
    def p():
        return x * 2

    assert not f().requires_grad and not g().requires_grad and not p().requires_grad
    with gpuarr.no_grad():
        assert h().requires_grad and r().requires_grad
    assert f.__name__ == "f"


def test_set_grad_enabled_as_a_decorator_leaves_the_mode_alone(device):
    x = leaf([1.0], device)

    @gpuarr.set_grad_enabled(False)
    def f():
        return x * 2

    assert gpuarr.is_grad_enabled()
    assert not f().requires_grad and gpuarr.is_grad_enabled()


def test_a_mode_is_restored_when_the_block_raises(device):
    with pytest.raises(ZeroDivisionError):
        with gpuarr.no_grad():
            1 / 0
    assert gpuarr.is_grad_enabled()


def test_set_grad_enabled_as_a_call_and_a_context_manager(device):
    gpuarr.set_grad_enabled(False)
    try:
        assert not gpuarr.is_grad_enabled()
    finally:
        gpuarr.set_grad_enabled(True)
    with gpuarr.set_grad_enabled(False):
        assert not gpuarr.is_grad_enabled()
    assert gpuarr.is_grad_enabled()


def test_grad_mode_is_per_thread():
    seen = {}

    def worker():
        seen["start"] = gpuarr.is_grad_enabled()
        gpuarr.set_grad_enabled(False)
        seen["set"] = gpuarr.is_grad_enabled()

    with gpuarr.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert not gpuarr.is_grad_enabled()
    assert seen == {"start": True, "set": False}
    assert gpuarr.is_grad_enabled()


def test_mxnet_record_pause_and_is_recording(device):
    assert autograd.is_recording() and not autograd.is_training()
    with autograd.pause():
        assert not autograd.is_recording()
        with autograd.record():
            assert autograd.is_recording() and autograd.is_training()
            with autograd.pause():
                assert not autograd.is_recording()
        assert not autograd.is_recording()
    with autograd.record(train_mode=False):
        assert not autograd.is_training()


# --- in-place operations and saved arrays ------------------------------------------------

def test_in_place_on_a_leaf_that_requires_grad_raises_unless_no_grad(device):
    x = leaf([1.0, 2.0], device)
    # the message names the write (made only when a write is refused)
    for op, name in ((lambda: x.__iadd__(1.0), "in-place add"),
                     (lambda: x.__imul__(x.detach()), "in-place multiply"),
                     (lambda: x.__setitem__(0, 5.0), "x[key] = value"),
                     (lambda: gpuarr.add(x, 1.0, out=x), "add(..., out=)"),
                     (lambda: gpuarr.exp(x.detach(), out=x), "exp(..., out=)"),
                     (lambda: x.detach().copyto(x), "copyto into an array"),
                     (lambda: gpuarr._core._fill(x, 0.0), "fill")):
        with pytest.raises(RuntimeError, match="leaf array that requires grad.*no_grad"
                           ) as e:
            op()
        assert f"({name})" in str(e.value)
    with gpuarr.no_grad():
        x -= 0.5
        x[0] = 3.0
    np.testing.assert_allclose(x.numpy(), [3.0, 1.5])
    assert x.requires_grad and x.is_leaf


def test_in_place_on_a_recorded_array_is_refused(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    with pytest.raises(RuntimeError, match="part of a recorded graph.*y = y \\+ 1"):
        y += 1
    with pytest.raises(RuntimeError, match="recorded graph"):
        y[0] = 0.0


def test_writing_an_array_that_requires_grad_into_a_plain_one_is_refused(device):
    x = leaf([1.0, 2.0], device)
    buf = gpuarr.zeros(2, device=device)
    with pytest.raises(RuntimeError, match="requires grad into one that does not"):
        buf[...] = x
    with pytest.raises(RuntimeError, match="requires grad into one that does not"):
        buf += x
    with pytest.raises(RuntimeError, match="out="):
        gpuarr.multiply(x, 2.0, out=buf)
    buf[...] = x.detach()


def test_modifying_a_saved_array_is_detected_at_backward(device):
    w = leaf([1.0, 2.0], device)
    x = gpuarr.asarray([3.0, 4.0], device=device)
    y = (w * x).sum()  # saves w and x
    with gpuarr.no_grad():
        w -= 0.1  # an optimizer step before backward
    with pytest.raises(RuntimeError, match="modified by an in-place operation.*version"):
        y.backward()
    y2 = (w * x).sum()
    x[0] = 0.0  # through another array of the same memory too
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y2.backward()


def test_in_place_writes_to_arrays_the_formula_does_not_read_are_fine(device):
    x = leaf([1.0, 2.0], device)
    c = gpuarr.asarray([3.0, 4.0], device=device)
    y = (x + c).sum()  # add reads neither operand
    c += 1.0
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])


def test_version_counts_writes_and_views_share_it(device):
    x = gpuarr.zeros(3, device=device)
    v = x[1:]
    before = x._version
    v += 1
    x[0] = 2
    assert x._version == v._version == before + 2


# --- MXNet's spelling --------------------------------------------------------------------

def test_attach_grad_record_backward_as_mxnet(device):
    x = gpuarr.asarray([1.0, 2.0], device=device)
    x.attach_grad()
    assert x.requires_grad and x.grad_req == "write"
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0])
    assert x.grad.device == device
    for _ in range(2):  # grad_req='write': each backward replaces the gradient
        with autograd.record():
            y = (x * x).sum()
        y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_attach_grad_add_accumulates(device):
    x = gpuarr.asarray([1.0], device=device)
    x.attach_grad(grad_req="add")
    for _ in range(2):
        with autograd.record():
            y = x * 3.0
        y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0])
    x.attach_grad("null")
    assert not x.requires_grad and x.grad is None
    with pytest.raises(ValueError, match="grad_req"):
        x.attach_grad("sum")


def test_attach_grad_makes_a_computed_array_a_leaf_as_mxnet(device):
    w = gpuarr.asarray([1.0, 2.0], device=device)
    w.attach_grad()
    with autograd.record():
        v = w * 2.0  # d2l moves parameters inside record(), then attaches them
    v.attach_grad()
    assert v.is_leaf and v.requires_grad and v.grad_fn is None
    with autograd.record():
        y = (v * v).sum()
    y.backward()
    np.testing.assert_allclose(v.grad.numpy(), [4.0, 8.0])
    np.testing.assert_allclose(w.grad.numpy(), [0.0, 0.0])  # the history was cut


def test_mxnet_parameters_update_in_place_outside_record(device):
    w = gpuarr.asarray([1.0, 2.0], device=device)
    w.attach_grad()
    with autograd.record():
        loss = (w * w).sum()
        with pytest.raises(RuntimeError, match="inside autograd.record"):
            w -= 0.1
    loss.backward()
    w[:] = w - 0.1 * w.grad  # d2l's sgd (MXNet tab)
    w -= 0.1 * w.grad
    np.testing.assert_allclose(w.numpy(), [0.6, 1.2], rtol=1e-6)
    assert w.is_leaf and w.requires_grad


# --- devices ---------------------------------------------------------------------------

def test_gradients_flow_back_across_devices(two_gpus):
    g0, g1 = two_gpus
    w0, w1 = leaf([1.0, 2.0], g0), leaf([3.0, 4.0], g1)
    h = (w0 * 2.0).to(g1)  # the activation moves to the second GPU
    assert type(h.grad_fn).__name__ == "ToCopyBackward"
    gpuarr.reset_transfer_stats()
    loss = (h * w1).sum()
    loss.backward()
    assert w0.grad.device == g0 and w1.grad.device == g1
    np.testing.assert_allclose(w0.grad.numpy(), [6.0, 8.0])
    np.testing.assert_allclose(w1.grad.numpy(), [2.0, 4.0])


def test_the_gradient_of_a_move_is_one_counted_peer_copy(two_gpus):
    g0, g1 = two_gpus
    w = leaf(np.ones(256), g0)
    y = w.copyto(g1).sum()
    with gpuarr.count_transfers() as t:
        y.backward()
        gpuarr.synchronize()
    assert t.d2d_count == 1 and t.d2d_bytes == 256 * 4
    assert t.h2d_count == 0 and t.d2h_count == 0


def test_the_gradient_of_a_host_to_device_move_lands_on_the_cpu(gpu_device):
    x = leaf([1.0, 2.0], gpuarr.cpu())
    (x.to(gpu_device) * 3.0).sum().backward()
    assert x.grad.device == gpuarr.cpu()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])
    y = leaf([1.0], gpu_device)
    (y.cuda(0) * 2.0 + y.cpu().to(gpu_device)).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [3.0])


def _training_step(x, w1, w2, target):
    h = gpuarr.maximum(x @ w1, 0.0)
    out = h @ w2
    loss = ((out - target) ** 2).mean() + gpuarr.logsumexp(out, axis=1).mean()
    loss.backward()
    return loss


def test_backward_on_a_gpu_makes_no_transfer_and_no_wait(gpu_device):
    rng = np.random.default_rng(0)
    x = gpuarr.asarray(rng.standard_normal((8, 5)), dtype="float32", device=gpu_device)
    t = gpuarr.asarray(rng.standard_normal((8, 3)), dtype="float32", device=gpu_device)
    idx = gpuarr.asarray([0, 2, 2, 1], device=gpu_device)
    mask = gpuarr.asarray(rng.standard_normal(5) > 0, device=gpu_device)
    w1 = leaf(rng.standard_normal((5, 4)) * 0.5, gpu_device)
    w2 = leaf(rng.standard_normal((4, 3)) * 0.5, gpu_device)
    with gpuarr.no_grad():
        w1.grad = gpuarr.zeros_like(w1)
    h = gpuarr.maximum(x @ w1, 0.0) @ w2
    loss = (((h - t) ** 2).mean() + gpuarr.logsumexp(h, axis=1).mean()
            + w1[idx].sum() + w1[:, 1:3].prod() + gpuarr.concat([w1, w1]).var()
            + gpuarr.take(w2, idx, axis=0).std() + w2.max() + w1[mask].sum()
            + w1[:, mask[:4]].sum()
            + gpuarr.linalg.vector_norm(w2) + (w1 / 3.0).tanh().sum())
    gpuarr.synchronize()  # the forward pass (a boolean mask reads its count)
    with gpuarr.count_transfers() as tr, gpuarr.testing.count_kernels(gpu_device) as k:
        loss.backward()
    assert (tr.h2d_count, tr.d2h_count, tr.d2d_count, tr.syncs) == (0, 0, 0, 0), tr
    assert k.syncs == 0 and k.h2d == 0 and k.d2h == 0, vars(k)
    assert not k.supported or k.launches > 0
    assert w1.grad.device == gpu_device


def test_a_training_loop_on_a_gpu_matches_the_cpu(gpu_device):
    rng = np.random.default_rng(1)
    data = [rng.standard_normal(s) for s in ((8, 5), (8, 3), (5, 4), (4, 3))]
    results = {}
    for dev in (gpuarr.cpu(), gpu_device):
        x, t = (gpuarr.asarray(a, dtype="float64", device=dev) for a in data[:2])
        w1, w2 = (gpuarr.array(a, device=dev, requires_grad=True) for a in data[2:])
        for _ in range(3):
            _training_step(x, w1, w2, t)
            with gpuarr.no_grad():
                w1 -= 0.1 * w1.grad
                w2 -= 0.1 * w2.grad
            w1.grad = w2.grad = None
        results[dev] = (w1.numpy(), w2.numpy())
    for a, b in zip(results[gpuarr.cpu()], results[gpu_device]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
