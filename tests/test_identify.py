import re

import numpy as np
import pytest

from lsa_helpers import (
    Architecture,
    factor_quadric,
    fiber_kind,
    function_distance,
    layer_forward,
    layer_from_attention,
    quadric_matrices,
    random_weights,
    rank_one_swap,
    recover_layer,
)


def of_rank(rng, rows, cols, rank):
    return rng.normal(size=(rows, rank)) @ rng.normal(size=(rank, cols))


def black_box(A, V):
    layer = layer_from_attention(A, V)
    return lambda X: layer_forward(layer, X)


def scale_of(A_rec, A):
    """The lambda with A_rec = lambda A, after checking that the ratio A_rec / A is constant."""
    ratio = A_rec / A
    np.testing.assert_allclose(ratio, ratio.flat[0], rtol=1e-8)
    return ratio.flat[0]


def is_multiple(B, A):
    return np.linalg.matrix_rank(np.stack([A.ravel(), B.ravel()]), tol=1e-8 * np.abs(A).max()) == 1


def test_quadrics_are_products_of_rows_of_V_and_columns_of_A(rng):
    A, V = rng.normal(size=(3, 3)), rng.normal(size=(2, 3))
    M = quadric_matrices(black_box(A, V), 3)
    assert M.shape == (2, 3, 3, 3)
    expected = (np.einsum("si,jf->sfij", V, A) + np.einsum("sj,if->sfij", V, A)) / 2
    np.testing.assert_allclose(M, expected, atol=1e-12)


@pytest.mark.parametrize("d", [1, 2, 4])
def test_factor_quadric_returns_the_two_lines(rng, d):
    v, a = rng.normal(size=d), rng.normal(size=d)
    p, m = factor_quadric((np.outer(v, a) + np.outer(a, v)) / 2)
    np.testing.assert_allclose((np.outer(p, m) + np.outer(m, p)) / 2,
                               (np.outer(v, a) + np.outer(a, v)) / 2, atol=1e-12)
    lines = sorted([(is_multiple(p, v), is_multiple(m, a)), (is_multiple(p, a), is_multiple(m, v))])
    assert lines[-1] == (True, True)


def test_factor_quadric_of_a_square_and_of_zero(rng):
    v = rng.normal(size=3)
    for sign in (1, -1):
        p, m = factor_quadric(sign * np.outer(v, v))
        assert is_multiple(p, v) and is_multiple(m, v)
        np.testing.assert_allclose(np.outer(p, m), sign * np.outer(v, v), atol=1e-12)
    assert all(np.all(w == 0) for w in factor_quadric(np.zeros((3, 3))))


def test_factor_quadric_rejects_what_is_not_a_product():
    with pytest.raises(ValueError, match=re.escape(
            "M must have at most one positive and one negative eigenvalue (a product of two "
            "linear forms), got eigenvalues [1.0, 1.0]")):
        factor_quadric(np.eye(2))  # x1^2 + x2^2 has no real linear factor
    with pytest.raises(ValueError, match=re.escape(
            "M must be a symmetric square matrix, got shape (2, 3)")):
        factor_quadric(np.ones((2, 3)))
    with pytest.raises(ValueError, match=re.escape(
            "M must be a symmetric square matrix, got shape (2, 2)")):
        factor_quadric([[0.0, 1.0], [0.0, 0.0]])


@pytest.mark.parametrize("d, d_out, rank_A, rank_V", [
    (3, 2, 2, 2), (4, 3, 4, 3), (3, 3, 3, 3), (2, 1, 2, 1), (2, 2, 2, 2),
    (5, 2, 2, 2), (4, 2, 3, 1), (3, 2, 1, 2), (3, 3, 1, 3),
])
def test_generic_recovery_is_exact_up_to_the_scaling(rng, d, d_out, rank_A, rank_V):
    A, V = of_rank(rng, d, d, rank_A), of_rank(rng, d_out, d, rank_V)
    rec = recover_layer(black_box(A, V), d, rng=rng)
    assert rec.case == fiber_kind(layer_from_attention(A, V)) == "curve"
    assert rec.ranks == (rank_A, rank_V)
    assert rec.alternative is None and len(rec.candidates) == 1
    assert rec.residual < 1e-10
    lam = scale_of(rec.A, A)
    np.testing.assert_allclose(rec.V * lam, V, rtol=1e-8, atol=1e-10)


def test_recovery_through_Q_and_K_with_zero_rows_and_columns(rng):
    arch = Architecture((4, 3), (2,))
    layer, = random_weights(arch, rng)
    Q, K, V = layer
    Q[:, 1] = 0  # column 1 of A = K^T Q is zero
    V[2] = 0     # row 2 of V is zero
    rec = recover_layer(lambda X: layer_forward(layer, X), 4, rng=rng)
    assert rec.case == "curve" and rec.ranks == (2, 2)
    A = K.T @ Q
    lam = rec.A[0, 0] / A[0, 0]
    np.testing.assert_allclose(rec.A, lam * A, atol=1e-10)
    np.testing.assert_allclose(rec.V * lam, V, atol=1e-10)
    full = Architecture((4, 3), (4,))  # rec.layer has Q = A, K = I: attention rank d
    assert function_distance(full, [layer_from_attention(A, V)], [rec.layer], rng=rng) < 1e-10


def test_rank_one_case_returns_both_candidates_of_the_swap(rng):
    k, q, z, v = (rng.normal(size=n) for n in (3, 3, 3, 2))
    A, V = np.outer(k, q), np.outer(v, z)
    rec = recover_layer(black_box(A, V), 3, rng=rng)
    assert rec.case == fiber_kind(layer_from_attention(A, V)) == "swap"
    assert rec.ranks == (1, 1) and len(rec.candidates) == 2
    arch = Architecture((3, 2), (3,))
    for A_c, V_c in rec.candidates:
        assert function_distance(arch, [layer_from_attention(A, V)],
                                 [layer_from_attention(A_c, V_c)], rng=rng) < 1e-10
    (A1, _V1), (A2, _V2) = rec.candidates
    assert not is_multiple(A2, A1)  # two different components of the fiber
    # one candidate is (lambda A, V / lambda); the other is the swap (z q^T, v k^T)
    assert is_multiple(A1, A) != is_multiple(A2, A)
    swap = rank_one_swap(layer_from_attention(A, V))
    for B in (A, swap.attention):
        assert is_multiple(A1, B) or is_multiple(A2, B)


def test_rank_one_case_with_z_parallel_to_k_has_one_candidate_up_to_scaling(rng):
    k, q, v = rng.normal(size=3), rng.normal(size=3), rng.normal(size=2)
    rec = recover_layer(black_box(np.outer(k, q), np.outer(v, -2 * k)), 3, rng=rng)
    assert rec.case == "swap"
    (A1, V1), (A2, V2) = rec.candidates
    assert is_multiple(A2, A1) and is_multiple(V2, V1)
    assert is_multiple(A1, np.outer(k, q))


@pytest.mark.parametrize("zero", ["A", "V"])
def test_zero_case(rng, zero):
    A, V = rng.normal(size=(3, 3)), rng.normal(size=(2, 3))
    A, V = (0 * A, V) if zero == "A" else (A, 0 * V)
    rec = recover_layer(black_box(A, V), 3, rng=rng)
    assert rec.case == fiber_kind(layer_from_attention(A, V)) == "zero"
    assert rec.ranks == (0, 0) and rec.residual == 0
    assert rec.A.shape == (3, 3) and rec.V.shape == (2, 3)
    assert not rec.A.any() and not rec.V.any()


def test_repr_is_readable(rng):
    rec = recover_layer(black_box(of_rank(rng, 3, 3, 2), rng.normal(size=(2, 3))), 3, rng=rng)
    assert repr(rec) == ("Recovery(case='curve', rank_A=2, rank_V=2, residual<1e-09): "
                         "(A, V) up to (lambda A, V / lambda)")


def test_a_black_box_that_is_not_lightning_is_detected(rng):
    arch = Architecture((3, 2), (2,), normalization="softmax")
    layer, = random_weights(arch, 0)
    with pytest.raises(ValueError, match=r"^black_box is not a lightning self-attention layer: "):
        recover_layer(lambda X: layer_forward(layer, X, normalization="softmax"), 3, rng=rng)
    V = rng.normal(size=(2, 3))
    linear = recover_layer(lambda X: V @ X, 3, rng=rng)  # no quadratic part at all
    assert linear.case == "zero" and linear.residual == 1
    assert "residual=1.00e+00" in repr(linear)


@pytest.mark.parametrize("kwargs, message", [
    ({"black_box": 3}, "black_box must be a callable X -> phi(X), got 3"),
    ({"d": 0}, "d must be an integer >= 1, got d=0"),
    ({"d": 2.0}, "d must be an integer >= 1, got d=2.0"),
    ({"tokens": 1}, "tokens must be an integer >= 2, got tokens=1"),
    ({"samples": 0}, "samples must be an integer >= 1, got samples=0"),
    ({"rtol": 0}, "rtol must be a number between 0 and 1, got rtol=0"),
    ({"rng": "seed"},
     "rng must be a numpy Generator, a non-negative int seed or None, got rng='seed'"),
    ({"black_box": lambda X: X.sum(axis=0)},
     "black_box must map a d x t input to a d' x t output, got shape (2,) for a 3 x 2 input"),
    ({"black_box": lambda X: np.full((2, X.shape[1]), np.nan)},
     "black_box must return finite values, got [[nan, nan], [nan, nan]]"),
])
def test_bad_inputs(rng, kwargs, message):
    arguments = {"black_box": black_box(rng.normal(size=(3, 3)), rng.normal(size=(2, 3))), "d": 3,
                 **kwargs}
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        recover_layer(arguments.pop("black_box"), arguments.pop("d"), **arguments)
