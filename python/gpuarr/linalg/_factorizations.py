"""The array API's factorisation-based linalg functions (LAPACK on the CPU and
simulated GPUs, cuSOLVER on CUDA devices), as compositions over six primitives of
the core (``_core._solve``, ``_lu``, ``_cholesky``, ``_eigh``, ``_svd``, ``_qr``:
csrc/ops/ga_linalg.c validates, makes the column-major working copy and calls the
device's backend once per batch). matrix_power is here too: a negative power is a
power of the inverse.

Every function takes stacks of matrices (..., M, N) of float32, float64, complex64
or complex128 (integers and bool are computed in float64, as NumPy does); results
stay on the input's device with NumPy's dtypes. A matrix without an answer raises
``LinAlgError`` (a ValueError): "Singular matrix" from solve and inv, "Matrix is not
positive definite" from cholesky, non-convergence from eigh and svd.
"""
import builtins
import operator
from typing import NamedTuple

from .. import _core
from .._core import Array, LinAlgError
from .._creation import arange, eye, zeros
from .._core import abs, conj, log, where
from .._manipulation import broadcast_to, expand_dims, matrix_transpose
from .._rearrange import tril, triu
from .._reduce import max, prod, sum
from .._inspection import finfo
from ._composed import _check as _check_ndim, diagonal

__all__ = ["LinAlgError", "EighResult", "QRResult", "SlogdetResult", "SVDResult",
           "cholesky", "det", "eigh", "eigvalsh", "inv", "matrix_power", "matrix_rank",
           "pinv", "qr", "slogdet", "solve", "svd", "svdvals"]


class EighResult(NamedTuple):
    """eigh's result: eigenvalues (..., n) ascending, eigenvectors (..., n, n) as
    columns."""
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    """qr's result: Q with orthonormal columns, R upper triangular."""
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    """slogdet's result: det = sign * exp(logabsdet)."""
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    """svd's result: x = U @ (S[..., None] * Vh)."""
    U: Array
    S: Array
    Vh: Array


EighResult.__module__ = QRResult.__module__ = "gpuarr.linalg"
SlogdetResult.__module__ = SVDResult.__module__ = "gpuarr.linalg"


def _check(x, name):
    if not isinstance(x, Array):
        raise TypeError(f"linalg.{name}() expects a gpuarr.Array, got {type(x).__name__}; "
                        f"make one with gpuarr.asarray(...) first")


def _stacked_eye(batch, n, like):
    """A fresh (writeable) identity per matrix of `batch`, like `like`'s dtype/device
    (NumPy's U/Vh/Q for a matrix with a zero dimension)."""
    return zeros(batch + (n, n), dtype=like.dtype, device=like.device) + \
        eye(n, dtype=like.dtype, device=like.device)


def solve(x1, x2, /):
    """solve(x1, x2, /)

    The solution X of ``x1 @ X = x2`` for square ``x1`` (..., M, M). ``x2`` is (M,)
    (one vector for every matrix: the result is (..., M)) or (..., M, K); batch axes
    broadcast. LinAlgError("Singular matrix") when a matrix is singular."""
    _check(x1, "solve")
    _check(x2, "solve")
    return _core._solve(x1, x2)


def inv(x, /):
    """inv(x, /)

    The inverse of each square matrix (..., M, M); LinAlgError("Singular matrix")
    when one is singular."""
    _check(x, "inv")
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"linalg.inv needs square matrices (..., M, M), got shape "
                         f"{x.shape}")
    # float32 identity: the promotion with x's linalg dtype is x's (float64 for ints)
    return _core._solve(x, eye(x.shape[-1], dtype=_core.float32, device=x.device))


def matrix_power(x, n, /):
    """matrix_power(x, n, /)

    x @ x @ ... (n times) for square matrices (last two axes), by repeated squaring;
    n = 0 gives identity matrices, negative n powers of the inverse (a singular matrix
    raises LinAlgError, as in NumPy)."""
    _check_ndim(x, "matrix_power", 2)
    n = operator.index(n)
    m = x.shape[-1]
    if x.shape[-2] != m:
        raise ValueError(f"linalg.matrix_power needs square matrices, got shape {x.shape}")
    if n < 0:
        x, n = inv(x), -n
    result = None
    base = x
    while True:
        if n & 1:
            result = base if result is None else _core.matmul(result, base)
        n >>= 1
        if not n:
            break
        base = _core.matmul(base, base)
    if result is None:
        return _core._copy(broadcast_to(eye(m, dtype=x.dtype, device=x.device), x.shape))
    return _core._copy(result) if result is x else result


def cholesky(x, /, *, upper=False):
    """cholesky(x, /, *, upper=False)

    The Cholesky factor of each Hermitian positive-definite matrix: lower L with
    ``x = L @ L^H`` (upper=True: U with ``x = U^H @ U``). Reads the lower (upper)
    triangle only; LinAlgError("Matrix is not positive definite")."""
    _check(x, "cholesky")
    f = _core._cholesky(x, bool(upper))
    return triu(f) if upper else tril(f)


def _lu_parts(x, name):
    _check(x, name)
    lu, piv = _core._lu(x)
    n = lu.shape[-1]
    d = diagonal(lu)
    # each pivot that is not its own row is one row swap: the sign flips per swap
    swaps = sum(piv != arange(1, n + 1, dtype=_core.int32, device=x.device), axis=-1)
    return d, (swaps % 2) == 1


def det(x, /):
    """det(x, /)

    The determinant of each square matrix (..., M, M), from its LU factorisation
    (0 for an exactly singular matrix, no error)."""
    d, odd = _lu_parts(x, "det")
    p = prod(d, axis=-1)
    return where(odd, -p, p)


def slogdet(x, /):
    """slogdet(x, /)

    (sign, logabsdet) of each determinant: ``det = sign * exp(logabsdet)``, without
    overflow. A singular matrix gives sign 0 and logabsdet -inf. sign has x's dtype
    (a unit complex number for complex x); logabsdet the real dtype."""
    d, odd = _lu_parts(x, "slogdet")
    a = abs(d)
    zero = a == 0
    unit = where(zero, 0, d / where(zero, 1, a))
    s = prod(unit, axis=-1)
    return SlogdetResult(where(odd, -s, s), sum(log(a), axis=-1))


def eigh(x, /):
    """eigh(x, /)

    Eigenvalues (ascending, real dtype) and eigenvectors (columns) of each
    Hermitian (real symmetric) matrix, read from its lower triangle."""
    _check(x, "eigh")
    return EighResult(*_core._eigh(x, True))


def eigvalsh(x, /):
    """eigvalsh(x, /)

    The eigenvalues (ascending, real dtype) of each Hermitian matrix."""
    _check(x, "eigvalsh")
    return _core._eigh(x, False)


def svd(x, /, *, full_matrices=True):
    """svd(x, /, *, full_matrices=True)

    ``x = U @ (S[..., None] * Vh)`` for each matrix (..., M, N): S (..., K)
    descending, K = min(M, N); U (..., M, M) and Vh (..., N, N), or with
    full_matrices=False (..., M, K) and (..., K, N)."""
    _check(x, "svd")
    u, s, vh = _core._svd(x, 2 if full_matrices else 1)
    if full_matrices and s.shape[-1] == 0:
        batch = x.shape[:-2]
        u = _stacked_eye(batch, x.shape[-2], u)
        vh = _stacked_eye(batch, x.shape[-1], vh)
    return SVDResult(u, s, vh)


def svdvals(x, /):
    """svdvals(x, /)

    The singular values (..., K) of each matrix, descending, in the real dtype."""
    _check(x, "svdvals")
    return _core._svd(x, 0)


def qr(x, /, *, mode="reduced"):
    """qr(x, /, *, mode='reduced')

    ``x = Q @ R`` for each matrix (..., M, N): mode 'reduced' gives Q (..., M, K),
    R (..., K, N), K = min(M, N); 'complete' Q (..., M, M), R (..., M, N)."""
    _check(x, "qr")
    if mode not in ("reduced", "complete"):
        raise ValueError(f"linalg.qr: mode must be 'reduced' or 'complete', got {mode!r}")
    complete = mode == "complete"
    q, r = _core._qr(x, complete)
    m, n = x.shape[-2:]
    rows = m if complete else builtins.min(m, n)
    r = triu(r[..., :rows, :])
    if complete and builtins.min(m, n) == 0:
        q = _stacked_eye(x.shape[:-2], m, q)
    return QRResult(q, r)


def _cutoff(s, rtol, m, n):
    """rtol (None: max(M, N) * eps of s's dtype) times the largest singular value,
    shaped (..., 1) to compare with s (..., K)."""
    if rtol is None:
        rtol = builtins.max(m, n) * finfo(s.dtype).eps
    smax = max(s, axis=-1, keepdims=True)
    if isinstance(rtol, Array):
        return smax * expand_dims(rtol, axis=-1)
    return smax * rtol


def matrix_rank(x, /, *, rtol=None):
    """matrix_rank(x, /, *, rtol=None)

    The number of singular values of each matrix above ``rtol * largest`` (rtol
    None: max(M, N) * eps of the dtype; an array broadcasts over the batch)."""
    _check(x, "matrix_rank")
    s = svdvals(x)
    m, n = x.shape[-2:]
    if s.shape[-1] == 0:
        return zeros(x.shape[:-2], dtype=_core.int64, device=x.device)
    return sum(s > _cutoff(s, rtol, m, n), axis=-1)


def pinv(x, /, *, rtol=None):
    """pinv(x, /, *, rtol=None)

    The Moore-Penrose pseudo-inverse (..., N, M) of each matrix (..., M, N), from its
    SVD: singular values at or below ``rtol * largest`` count as zero (rtol None:
    max(M, N) * eps)."""
    _check(x, "pinv")
    u, s, vh = svd(x, full_matrices=False)
    m, n = x.shape[-2:]
    if s.shape[-1] == 0:
        return zeros(x.shape[:-2] + (n, m), dtype=u.dtype, device=x.device)
    keep = s > _cutoff(s, rtol, m, n)
    s_inv = where(keep, 1 / where(keep, s, 1), 0)
    # pinv = V diag(1/s) U^H; the scaling rides on U^H's rows
    return matrix_transpose(conj(vh)) @ (expand_dims(s_inv, axis=-1) *
                                         matrix_transpose(conj(u)))
