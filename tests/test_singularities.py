import re

import numpy as np
import pytest
from widget_support import set_and_run

from lsa_helpers import (
    PRIME,
    Architecture,
    Layer,
    factor_quadric,
    formula_dimension,
    gradient_descent,
    is_same_function,
    jacobian,
    layer_forward,
    layer_from_attention,
    loss_and_gradient,
    quadratic_factor,
    random_inputs,
    rank_one_layers,
    slice_coordinates,
    slice_matrix,
    slice_position,
    swap_tangent_dimension,
    tangent_dimension,
    value_map_matrix,
    weights_to_vector,
)
from lsa_helpers.widgets import boundary_explorer


def integers(rng, *shape):
    return rng.integers(-5, 6, size=shape).astype(float)


def nonparallel(rng, d):
    while True:
        k, z = integers(rng, d), integers(rng, d)
        if np.linalg.matrix_rank(np.stack([k, z])) == 2:
            return k, z


# --- the quadratic factor and the d = 2 slice ------------------------------------------------

def test_rank_one_layer_is_v_times_the_quadric_times_q(rng):
    k, q, z, v = (rng.normal(size=n) for n in (3, 3, 3, 2))
    X = rng.normal(size=(5, 3, 4))
    S = quadratic_factor(z, k)
    quadric = np.einsum("nit,ij,njt->n", X, S, X)            # tr(X^T S X)
    expected = quadric[:, None, None] * v[None, :, None] * (q @ X)[:, None, :]
    for layer in rank_one_layers(k, q, v, z, a=3):
        np.testing.assert_allclose(layer_forward(layer, X), expected, rtol=1e-10, atol=1e-12)


def test_boundary_function_is_the_squared_norm_times_a_linear_map(rng):
    k, q, v = rng.normal(size=2), rng.normal(size=2), rng.normal(size=1)
    X = rng.normal(size=(4, 2, 3))
    layer = rank_one_layers(k, q, v, k, a=1)[0]
    squared = np.sum((np.swapaxes(X, 1, 2) @ k) ** 2, axis=1)  # ||X^T k||^2
    expected = squared[:, None, None] * v[None, :, None] * (q @ X)[:, None, :]
    np.testing.assert_allclose(layer_forward(layer, X), expected, rtol=1e-10)


def test_determinant_of_the_quadratic_factor(rng):
    z, k = rng.normal(size=(2, 1000, 2))
    S = (z[:, :, None] * k[:, None, :] + k[:, :, None] * z[:, None, :]) / 2
    alpha, beta, gamma = slice_coordinates(S).T
    np.testing.assert_allclose(np.linalg.det(S), alpha**2 - beta**2 - gamma**2, atol=1e-12)
    cross = z[:, 0] * k[:, 1] - z[:, 1] * k[:, 0]
    np.testing.assert_allclose(np.linalg.det(S), -(cross / 2) ** 2, atol=1e-12)
    assert all(slice_position(*c) == "inside" for c in slice_coordinates(S))


def test_slice_coordinates_round_trip(rng):
    for alpha, beta, gamma in rng.normal(size=(20, 3)):
        back = slice_coordinates(slice_matrix(alpha, beta, gamma))
        np.testing.assert_allclose(back, [alpha, beta, gamma], atol=1e-14)


def test_attained_exactly_outside_the_cone(rng):
    for point in rng.uniform(-2, 2, size=(300, 3)):
        S = slice_matrix(*point)
        if slice_position(*point) == "outside":
            with pytest.raises(ValueError, match="one positive and one negative eigenvalue"):
                factor_quadric(S)
        else:
            z, k = factor_quadric(S)
            np.testing.assert_allclose(quadratic_factor(z, k), S, atol=1e-12)


@pytest.mark.parametrize("point, position", [
    ((0.5, 1.0, 0.0), "inside"), ((1.0, 0.6, 0.8), "boundary"), ((-1.0, 0.0, 1.0), "boundary"),
    ((0.0, 0.0, 0.0), "boundary"), ((1.0, 0.0, 0.0), "outside"), ((-2.0, 1.0, 1.0), "outside"),
])
def test_slice_position_table(point, position):
    assert slice_position(*point) == position


def test_boundary_points_are_parallel_factors(rng):
    k = rng.normal(size=2)
    for c in (1.0, -2.0, 0.5):
        assert slice_position(*slice_coordinates(quadratic_factor(c * k, k))) == "boundary"


def test_slice_errors():
    with pytest.raises(ValueError, match=re.escape(
            "alpha must be a finite number, got alpha=nan")):
        slice_position(float("nan"), 0.0, 0.0)
    with pytest.raises(ValueError, match=re.escape("rtol must be a number in [0, 1), got rtol=2")):
        slice_position(1.0, 0.0, 0.0, rtol=2)
    with pytest.raises(ValueError, match=re.escape("S must have shape (..., 2, 2), got (3, 3)")):
        slice_coordinates(np.eye(3))
    with pytest.raises(ValueError, match=re.escape("S must be symmetric, got S_12 != S_21")):
        slice_coordinates([[1.0, 2.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match=re.escape(
            "z and k must have the same length, got shapes (2,) and (3,)")):
        quadratic_factor([1.0, 0.0], [1.0, 0.0, 0.0])


# --- closedness -----------------------------------------------------------------------------------

def test_value_map_matrix_gives_the_outputs(rng):
    A, V = rng.normal(size=(3, 3)), rng.normal(size=(2, 3))
    X = rng.normal(size=(4, 3, 3))
    M = value_map_matrix(A, X)
    outputs = layer_forward(layer_from_attention(A, V), X)
    np.testing.assert_allclose(V @ M, np.concatenate(list(outputs), axis=1), rtol=1e-10)


def test_value_map_is_injective_for_every_nonzero_attention(rng):
    X = rng.normal(size=(6, 3, 3))
    for rank in (1, 2, 3):
        for _ in range(20):
            A = rng.normal(size=(3, rank)) @ rng.normal(size=(rank, 3))
            M = value_map_matrix(A / np.linalg.norm(A), X)
            assert np.linalg.svd(M, compute_uv=False)[-1] > 1e-6


def test_value_map_errors():
    with pytest.raises(ValueError, match=re.escape("A must be a square matrix, got shape (2, 3)")):
        value_map_matrix(np.ones((2, 3)), np.ones((1, 2, 2)))
    with pytest.raises(ValueError, match=re.escape("inputs must have shape (N, 2, t), got (3, 2)")):
        value_map_matrix(np.eye(2), np.ones((3, 2)))


# --- tangent dimensions ---------------------------------------------------------------------------

def test_rank_one_layers_give_one_function(rng):
    for d, d_out, a in ((3, 2, 3), (3, 2, 4), (3, 1, 1), (3, 2, 2)):
        arch = Architecture((d, d_out), (a,))
        k, q, z, v = (rng.normal(size=n) for n in (d, d, d, d_out))
        one, swapped = rank_one_layers(k, q, v, z, a=a)
        assert one.Q.shape == one.K.shape == (a, d)
        assert is_same_function(arch, [one], [swapped], rng=rng)


def test_tangent_dimension_at_generic_points_is_the_dimension(rng):
    for d, d_out, a in ((3, 2, 3), (3, 2, 2), (2, 1, 1), (3, 1, 1)):
        arch = Architecture((d, d_out), (a,))
        layer = Layer(integers(rng, a, d), integers(rng, a, d), integers(rng, d_out, d))
        assert tangent_dimension(arch, layer, rng=rng) == formula_dimension(arch).value


@pytest.mark.parametrize("d, d_out, span",
                         [(2, 1, 6), (2, 2, 9), (3, 1, 15), (3, 2, 20), (3, 3, 25)])
def test_swap_branches_span_more_than_the_dimension(rng, d, d_out, span):
    arch = Architecture((d, d_out), (d,))
    k, z = nonparallel(rng, d)
    q, v = integers(rng, d) + 6, integers(rng, d_out) + 6  # non-zero
    one, swapped = rank_one_layers(k, q, v, z, a=d)
    assert tangent_dimension(arch, one, rng=rng) == formula_dimension(arch).value
    assert tangent_dimension(arch, swapped, rng=rng) == formula_dimension(arch).value
    assert span == (2 * d - 1) * (d + d_out - 1)  # the pattern of exercise 2 [derived]
    assert swap_tangent_dimension(arch, k, q, v, z, rng=rng) == span


def test_parallel_factors_drop_the_differential_and_its_kernel(rng):
    arch = Architecture((3, 2), (3,))
    k, q, v = integers(rng, 3) + 6, integers(rng, 3) + 6, integers(rng, 2) + 6
    point = rank_one_layers(k, q, v, k, a=3)[0]
    assert tangent_dimension(arch, point, rng=rng) == 12 < formula_dimension(arch).value
    # (dA, dV) = (w q^T, -v w^T) is in the kernel for every w: with K = I, dQ = dA
    X = random_inputs(arch, 10, rng, modulus=PRIME)
    J = jacobian(arch, [point], X, modulus=PRIME)
    for w in np.eye(3):
        u = weights_to_vector([Layer(np.outer(w, q), np.zeros((3, 3)), -np.outer(v, w))])
        assert not np.any(np.mod(J @ u, PRIME))


def test_corner_cases(rng):
    arch = Architecture((3, 1), (1,))                    # a = d' = 1: the swap branches agree
    k, z = nonparallel(rng, 3)
    assert swap_tangent_dimension(arch, k, [1, 2, 3], [2], z, rng=rng) == 7
    assert formula_dimension(arch).value == 7
    arch = Architecture((3, 2), (2,))                    # rk A = 1 < a = 2 < d = 3, rk V = 2
    k, q = np.array([2.0, -1.0, 1.0]), np.array([1.0, 2.0, 3.0])
    V = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0]])
    preimages = [Layer(np.stack([q, u]), np.stack([k, np.zeros(3)]), V)  # all with A = k q^T
                 for u in ([1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [1.0, -1.0, 0])]
    single = [tangent_dimension(arch, p, rng=rng) for p in preimages]
    assert single == [12] * 4 and tangent_dimension(arch, *preimages, rng=rng) == 14
    assert formula_dimension(arch).value == 13


def test_tangent_dimension_errors(rng):
    arch = Architecture((3, 2), (3,))
    one, _swapped = rank_one_layers([1, 0, 0], [0, 1, 0], [1, 1], [0, 0, 1], a=3)
    with pytest.raises(ValueError, match=re.escape(
            "layers must have integer weights (ranks are computed exactly mod p)")):
        tangent_dimension(arch, Layer(one.Q / 2, one.K, one.V))
    with pytest.raises(ValueError, match=re.escape(
            "layers must all compute the same function, layer 2 differs from layer 1")):
        tangent_dimension(arch, one, Layer(one.Q, one.K, 2 * one.V))
    with pytest.raises(ValueError, match=re.escape(
            "layers must hold at least one layer (a preimage of the point)")):
        tangent_dimension(arch)
    with pytest.raises(ValueError, match="arch must be a one-layer lightning Architecture"):
        tangent_dimension(Architecture((3, 3, 3), (1, 1)), one)
    with pytest.raises(ValueError, match=re.escape(
            "k, q, v, z must have shapes {'k': (3,), 'q': (3,), 'v': (2,), 'z': (3,)}")):
        swap_tangent_dimension(arch, [1, 0, 0], [0, 1, 0], [1], [0, 0, 1])
    with pytest.raises(ValueError, match=re.escape("a must be an integer >= 1, got a=0")):
        rank_one_layers([1, 0], [0, 1], [1], [1, 1], a=0)


# --- gradient descent -----------------------------------------------------------------------------

def test_gradient_is_the_jacobian_transpose_times_the_residual(rng):
    arch = Architecture((3, 2), (2,))
    layer = Layer(rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), rng.normal(size=(2, 3)))
    X, Y = rng.normal(size=(7, 3, 3)), rng.normal(size=(7, 2, 3))
    loss, grad = loss_and_gradient(layer, X, Y)
    R = layer_forward(layer, X) - Y
    assert loss == pytest.approx(0.5 * np.sum(R**2) / 7)
    J = jacobian(arch, [layer], X)
    np.testing.assert_allclose(weights_to_vector([grad]), J.T @ R.ravel() / 7, rtol=1e-10)


def test_gradient_descent_is_pure_and_fits_a_teacher(rng):
    teacher = layer_from_attention(rng.normal(size=(3, 3)), rng.normal(size=(2, 3)))
    X = rng.normal(size=(32, 3, 3)) / np.sqrt(3)
    start = Layer(*(0.3 * rng.normal(size=s) for s in ((3, 3), (3, 3), (2, 3))))
    copy = Layer(*(w.copy() for w in start))
    run = gradient_descent(start, X, layer_forward(teacher, X), learning_rate=0.02, steps=2000,
                           record_every=500)
    assert all(np.array_equal(a, b) for a, b in zip(start, copy))
    assert run.steps.tolist() == [0, 500, 1000, 1500, 2000]
    assert run.losses[-1] < 1e-8 * run.losses[0]
    assert run.attention_singular_values.shape == (5, 3)
    assert run.value_singular_values.shape == (5, 2)
    assert is_same_function(Architecture((3, 2), (3,)), [run.final], [teacher], rng=rng, rtol=1e-4)
    assert "Trajectory(steps=2000, records=5" in repr(run)


def test_rank_one_ratio():
    X = np.ones((1, 3, 1))
    point = rank_one_layers([1.0, 0, 0], [0, 1.0, 0], [1.0, 2.0], [0, 0, 1.0], a=3)[0]
    generic = layer_from_attention(np.diag([1.0, 0.5, 0.1]), np.array([[1.0, 0, 0], [0, 0.25, 0]]))
    for layer, ratio in ((point, 0.0), (generic, 0.5)):
        run = gradient_descent(layer, X, np.zeros((1, 2, 1)), learning_rate=1e-12, steps=1)
        assert run.rank_one_ratio[0] == pytest.approx(ratio)


def test_gradient_descent_errors(rng):
    layer = Layer(np.ones((1, 2)), np.ones((1, 2)), np.ones((1, 2)))
    X, Y = np.ones((3, 2, 2)), np.zeros((3, 1, 2))
    with pytest.raises(ValueError, match=re.escape(
            "learning_rate=100.0 is too large: the loss diverged at step")):
        gradient_descent(layer, 10 * X, Y + 1, learning_rate=100.0, steps=50)
    with pytest.raises(ValueError, match=re.escape(
            "learning_rate must be a finite number > 0, got learning_rate=0")):
        gradient_descent(layer, X, Y, learning_rate=0, steps=5)
    with pytest.raises(ValueError, match=re.escape(
            "steps must be an integer >= 1, got steps=0")):
        gradient_descent(layer, X, Y, learning_rate=0.1, steps=0)
    with pytest.raises(ValueError, match=re.escape(
            "targets must have shape (3, 1, 2), got (3, 2, 2)")):
        loss_and_gradient(layer, X, X)
    with pytest.raises(ValueError, match=re.escape(
            "inputs must have shape (N, 2, t), got (3, 3, 2)")):
        loss_and_gradient(layer, np.ones((3, 3, 2)), Y)


# --- the widget -----------------------------------------------------------------------------------

@pytest.mark.parametrize("values, position, cos", [
    ({"alpha": 0.5, "beta": 1.0, "gamma": 0.0}, "inside", 0.5),
    ({"alpha": 0.0, "beta": 1.0, "gamma": 0.0}, "inside", 0.0),
    ({"alpha": 0.75, "beta": 1.25, "gamma": 0.0}, "inside", 0.6),
    ({"alpha": 1.0, "beta": 0.6, "gamma": 0.8}, "boundary", 1.0),
    ({"alpha": 1.0, "beta": 0.0, "gamma": 0.0}, "outside", None),
    ({"alpha": 0.0, "beta": 0.0, "gamma": 0.0}, "boundary", None),
    ({"alpha": -2.0, "beta": -2.0, "gamma": -2.0}, "inside", 0.707),
    ({"alpha": 2.0, "beta": 2.0, "gamma": 0.0}, "boundary", 1.0),
    ({"alpha": -2.0, "beta": 0.0, "gamma": 0.0}, "outside", None),
])
def test_boundary_explorer(values, position, cos, caplog, monkeypatch):
    from lsa_helpers import widgets

    drawn, render = [], widgets._render
    monkeypatch.setattr(widgets, "_render", lambda *args: (drawn.append(args[0]), render(*args)))
    result = set_and_run(boundary_explorer(), caplog, **values)
    assert result["position"] == position and result["cos"] == cos
    assert result["reproduced"] is (None if cos is None else True)
    assert result["prediction"] is None and result["correct"] is None
    assert not drawn, "a picture before a prediction"
    for guess in ("inside", "boundary", "outside"):       # the verdict, and a picture, after it
        result = set_and_run(boundary_explorer(), caplog, **values, prediction=guess)
        assert result["prediction"] == guess and result["correct"] is (guess == position)
        assert result["position"] == position and result["cos"] == cos
        assert drawn, "no picture after a prediction"
        drawn.clear()


def test_boundary_explorer_clamps_and_defaults(caplog, close_figures):
    widget = boundary_explorer()
    assert widget.result["position"] == "inside" and widget.result["prediction"] is None
    result = set_and_run(widget, caplog, alpha=9.0, beta=-9.0, gamma=0.0)
    assert [c.value for c in widget.children[:3]] == [2.0, -2.0, 0.0]
    assert result["position"] == "boundary"
    result = set_and_run(widget, caplog, prediction="boundary")
    assert result["correct"] is True


@pytest.mark.parametrize("point", [(0.5, 1.0, 0.0), (1.0, 0.6, 0.8), (1.0, 0.0, 0.0),
                                   (1.0, 2.0, 0.0)])
@pytest.mark.parametrize("scale", [1e200, 1e-300, -1e300])
def test_slice_position_does_not_depend_on_the_scale(point, scale):
    """det(cS) = c^2 det S: the double cone is a cone, so S and cS lie on the same side."""
    assert slice_position(*(scale * x for x in point)) == slice_position(*point)
