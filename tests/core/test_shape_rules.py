"""Shape rules live in the core, once: every function that takes an axis raises NumPy's
AxisError for one out of range (it was three different exceptions), broadcast_shapes
and arange's length come from C."""
import numpy as np
import pytest

import gpuarr

AXIS_TAKERS = {
    "sum": lambda x: gpuarr.sum(x, axis=2),
    "argmax": lambda x: gpuarr.argmax(x, axis=-3),
    "cumulative_sum": lambda x: gpuarr.cumulative_sum(x, axis=2),
    "moveaxis": lambda x: gpuarr.moveaxis(x, 2, 0),
    "stack": lambda x: gpuarr.stack([x, x], axis=4),
    "roll": lambda x: gpuarr.roll(x, 1, axis=2),
    "repeat": lambda x: gpuarr.repeat(x, 2, axis=2),
    "unstack": lambda x: gpuarr.unstack(x, axis=-3),
    "diff": lambda x: gpuarr.diff(x, axis=2),
    "vector_norm": lambda x: gpuarr.linalg.vector_norm(x, axis=2),
}


@pytest.mark.parametrize("fn", list(AXIS_TAKERS))
def test_an_axis_out_of_range_is_numpys_axis_error(device, fn):
    x = gpuarr.ones((2, 3), device=device)
    with pytest.raises(np.exceptions.AxisError, match="out of bounds for array of dimension"):
        AXIS_TAKERS[fn](x)


def test_a_repeated_axis_is_a_value_error():
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        gpuarr.ones((2, 3)).sum(axis=(1, -1))


@pytest.mark.parametrize("shapes", [[(2, 1), (3,)], [(5, 1, 4), (1, 3, 1), ()], [3, (2, 1)],
                                    [(0, 1), (1, 5)]])
def test_broadcast_shapes_is_numpys(shapes):
    assert gpuarr.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)


def test_broadcast_shapes_that_disagree_raise():
    with pytest.raises(ValueError, match="could not be broadcast"):
        gpuarr.broadcast_shapes((2, 3), (4,))


@pytest.mark.parametrize("args", [(10,), (3, 11, 4), (5, -5, -3), (0, 0), (5, 0),
                                  (-2**63, 2**63 - 1, 2**62), (2**63 - 2, 2**63 - 1),
                                  (0.0, 1.0, 0.25), (1.0, 0.0, -0.3), (0.1, 0.3, 0.1)])
def test_arange_has_numpys_length(args):
    assert gpuarr.arange(*args).shape == np.arange(*args).shape


def test_arange_refuses_a_zero_step_and_non_finite_bounds():
    with pytest.raises(ValueError, match="step must not be zero"):
        gpuarr.arange(0, 5, 0)
    with pytest.raises(ValueError, match="finite"):
        gpuarr.arange(0.0, float("inf"))


def test_the_c_core_never_imports_the_python_package():
    """Layers: _core reaches gpuarr's asarray only because the package hands it over
    at import (_core._register_asarray); no C file imports `gpuarr`."""
    import pathlib
    import re

    csrc = pathlib.Path(__file__).parents[2] / "csrc"
    if not csrc.is_dir():
        pytest.skip("needs a source checkout")
    offenders = [p.name for p in csrc.rglob("*.c")
                 if re.search(r'PyImport_Import\w*\("gpuarr', p.read_text())]
    assert offenders == []
