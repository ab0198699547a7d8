"""The Hessian at a zero-loss point: its zero block is the symmetry count with enough inputs, and
larger with too few."""

import numpy as np
import pytest

from lsa_helpers import (
    PRIME,
    Architecture,
    dimension,
    exact_rank,
    jacobian,
    random_weights,
    symmetry_tangents,
)
from lsa_helpers.landscape import (
    flat_directions,
    hessian_at_minimum,
    hessian_spectrum,
    loss_hessian,
    squared_loss,
    teacher_problem,
    train_to_zero_loss,
)

SEED = 2025
ARCHITECTURES = [((3, 3, 3), (2, 2)), ((3, 2, 3), (2, 2)), ((4, 4, 4), (2, 2))]


def symmetry_count(arch):
    return sum(a * a for a in arch.ranks) + sum(d * d for d in arch.widths[1:-1]) + arch.layers


@pytest.fixture(scope="module", params=ARCHITECTURES, ids=str)
def minimum(request):
    arch = Architecture(*request.param)
    problem = teacher_problem(arch, 12, SEED)
    run = train_to_zero_loss(arch, problem.start, problem.inputs, problem.targets)
    return arch, problem, run


def test_training_reaches_zero_loss_away_from_the_teacher(minimum):
    arch, problem, run = minimum
    assert run.converged
    loss = squared_loss(arch, run.weights, problem.inputs, problem.targets)
    assert loss <= 1e-24 * 0.5 * np.sum(problem.targets**2)
    assert squared_loss(arch, problem.start, problem.inputs, problem.targets) > 1e6 * loss
    moved = [np.abs(w - v).max()
             for a, b in zip(run.weights, problem.teacher) for w, v in zip(a, b)]
    assert max(moved) > 1e-2  # a zero-loss point found by the optimizer, not the teacher itself


def test_zero_block_is_the_symmetry_count(minimum):
    arch, problem, run = minimum
    flat = flat_directions(arch, run.weights, problem.inputs)
    certified = dimension(arch, rng=SEED).certified_dimension
    orbit = exact_rank(symmetry_tangents(arch, random_weights(arch, SEED, modulus=PRIME),
                                         modulus=PRIME), PRIME)
    assert flat.flat == arch.parameter_count - certified == symmetry_count(arch) == orbit
    assert flat.gap > 1e16
    assert flat.basis.shape == (flat.flat, arch.parameter_count)
    J = jacobian(arch, run.weights, problem.inputs)
    assert np.abs(J @ flat.basis.T).max() < 1e-10 * np.abs(J).max()


def test_the_symmetry_tangents_lie_in_the_zero_block(minimum):
    arch, problem, run = minimum
    flat = flat_directions(arch, run.weights, problem.inputs)
    T = symmetry_tangents(arch, run.weights)
    inside = T @ flat.basis.T @ flat.basis
    assert np.allclose(inside, T, atol=1e-9 * np.abs(T).max())


def test_fewer_inputs_leave_extra_flat_directions(minimum):
    arch, problem, run = minimum
    full = flat_directions(arch, run.weights, problem.inputs)
    sizes = [flat_directions(arch, run.weights, problem.inputs[:n]).flat for n in (1, 2, 3)]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] > full.flat
    few = flat_directions(arch, run.weights, problem.inputs[:2])
    J = jacobian(arch, run.weights, problem.inputs)
    # the extra flat directions change the outputs on the forgotten inputs
    s = np.linalg.svd(J @ few.basis.T, compute_uv=False)
    assert np.count_nonzero(s > 1e-8 * s[0]) == few.flat - full.flat


def test_the_hessian_at_the_minimum_is_the_gauss_newton_matrix(minimum):
    arch, problem, run = minimum
    G = hessian_at_minimum(arch, run.weights, problem.inputs)
    H = loss_hessian(arch, run.weights, problem.inputs, problem.targets)
    assert np.abs(H - G).max() < 1e-6 * np.abs(G).max()
    spectrum = hessian_spectrum(arch, run.weights, problem.inputs)
    assert spectrum.shape == (arch.parameter_count,) and np.all(np.diff(spectrum) <= 0)
    assert np.allclose(spectrum[:5], np.linalg.eigvalsh(G)[::-1][:5], rtol=1e-8)


def test_away_from_a_minimum_the_residual_term_counts():
    arch = Architecture((3, 2, 3), (2, 2))
    problem = teacher_problem(arch, 12, SEED)
    G = hessian_at_minimum(arch, problem.start, problem.inputs)
    H = loss_hessian(arch, problem.start, problem.inputs, problem.targets)
    assert np.abs(H - G).max() > 1e-3 * np.abs(G).max()


def test_one_input_pads_the_spectrum_with_zeros():
    arch = Architecture((3, 2, 3), (2, 2))
    problem = teacher_problem(arch, 1, SEED)
    spectrum = hessian_spectrum(arch, problem.teacher, problem.inputs)
    assert spectrum.shape == (32,) and np.all(spectrum[9:] == 0)


@pytest.mark.parametrize("call, message", [
    (lambda a, p: teacher_problem(a, 0, SEED), "count must be an integer >= 1"),
    (lambda a, p: teacher_problem(a, 3, SEED, perturbation=-1.0), "perturbation must be"),
    (lambda a, p: squared_loss(a, p.teacher, p.inputs[:, :2], p.targets), "inputs must have shape"),
    (lambda a, p: squared_loss(a, p.teacher, p.inputs, p.targets[:2]), "targets must have shape"),
    (lambda a, p: train_to_zero_loss(a, p.start, p.inputs, p.targets, max_steps=0),
     "max_steps must be an integer >= 1"),
    (lambda a, p: train_to_zero_loss(a, p.start, p.inputs, p.targets, rtol=0.0),
     "rtol must be a finite number > 0"),
    (lambda a, p: train_to_zero_loss(a, p.start[:1], p.inputs, p.targets), "weights must have"),
    (lambda a, p: loss_hessian(a, p.teacher, p.inputs, p.targets, step=0), "step must be"),
    (lambda a, p: flat_directions(a, p.teacher, np.zeros((0, 3, 3))), "inputs must have shape"),
])
def test_bad_input_gets_a_clear_error(call, message):
    arch = Architecture((3, 2, 3), (2, 2))
    problem = teacher_problem(arch, 3, SEED)
    with pytest.raises(ValueError, match=message):
        call(arch, problem)


# --- Gradient descent of one layer, many runs at once ---------------------------------------------

from lsa_helpers import Layer, gradient_descent, layer_forward, loss_and_gradient  # noqa: E402
from lsa_helpers.landscape import (  # noqa: E402
    LossMoments,
    descend_together,
    first_step_below,
    loss_along,
    loss_moments,
)


def one_layer_problem(d=3, d_out=2, a=3, t=3, count=12, seed=SEED):
    rng = np.random.default_rng(seed)
    teacher = Layer(*(0.5 * rng.normal(size=shape) for shape in ((a, d), (a, d), (d_out, d))))
    X = rng.normal(size=(count, d, t)) / np.sqrt(d)
    direction = Layer(*(0.5 * rng.normal(size=shape) for shape in ((a, d), (a, d), (d_out, d))))
    return X, layer_forward(teacher, X), direction


@pytest.mark.parametrize("d, d_out, a, t", [(3, 2, 3, 3), (2, 3, 1, 4)])
def test_the_moments_give_the_loss(d, d_out, a, t):
    X, Y, direction = one_layer_problem(d, d_out, a, t)
    G, h, c = loss_moments(X, Y)
    A = direction.K.T @ direction.Q
    b = (direction.V[:, :, None] * A.reshape(1, 1, -1)).reshape(d_out, -1)   # b_s = v_s (x) A
    quadratic = 0.5 * np.einsum("si,ij,sj->", b, G, b) - np.sum(h * b) + 0.5 * c
    assert np.isclose(quadratic, loss_and_gradient(direction, X, Y)[0], rtol=1e-12)
    assert np.allclose(G, G.T) and np.all(np.linalg.eigvalsh(G) > -1e-12 * np.abs(G).max())


def test_descending_together_is_gradient_descent():
    X, Y, direction = one_layer_problem()
    starts = [Layer(*(s * w for w in direction)) for s in (0.05, 0.3, 0.3)]
    moments = [loss_moments(X, Y), loss_moments(X, Y), loss_moments(X[:4], Y[:4])]
    runs = descend_together(starts, moments, learning_rate=0.01, steps=400, record_every=50)
    for start, data, run in zip(starts, [(X, Y), (X, Y), (X[:4], Y[:4])], runs):
        alone = gradient_descent(start, *data, learning_rate=0.01, steps=400, record_every=50)
        assert np.array_equal(run.steps, alone.steps)
        assert np.allclose(run.losses, alone.losses, rtol=1e-9, atol=1e-12 * alone.losses[0])
        for mine, theirs in zip(run.weights, alone.weights):
            assert all(np.allclose(u, v, rtol=1e-8, atol=1e-10) for u, v in zip(mine, theirs))
    assert runs[0].losses[-1] != runs[1].losses[-1] != runs[2].losses[-1]


def test_zero_rows_of_q_and_k_stay_zero():
    X, Y, direction = one_layer_problem()
    rows = np.arange(3)[:, None]
    padded = Layer(np.where(rows < 1, direction.Q, 0.0), np.where(rows < 1, direction.K, 0.0),
                   direction.V)
    narrow = Layer(direction.Q[:1], direction.K[:1], direction.V)
    moments = loss_moments(X, Y)
    run, = descend_together([padded], moments, learning_rate=0.02, steps=300, record_every=100)
    alone, = descend_together([narrow], moments, learning_rate=0.02, steps=300, record_every=100)
    assert all(not layer.Q[1:].any() and not layer.K[1:].any() for layer in run.weights)
    assert np.allclose(run.losses, alone.losses, rtol=1e-12)


def test_a_cubic_start_leaves_zero_after_about_one_over_its_scale():
    # phi = Q K V x^3, target x^3 at x = 1: with Q = K = V = s the step is s += lr s^2 (1 - s^3),
    # the flow ds/dt = lr s^2 leaves s_0 after 1 / (lr s_0) - 1 / (lr s) steps
    X, lr = np.ones((1, 1, 1)), 0.1
    scales = (0.005, 0.01, 0.02)
    runs = descend_together([Layer(*np.full((3, 1, 1), s)) for s in scales], loss_moments(X, X),
                            learning_rate=lr, steps=3000, record_every=1)
    s_end = (1 - np.sqrt(0.9)) ** (1 / 3)                        # loss = 0.9 loss(0) there
    for s, run in zip(scales, runs):
        predicted = 1 / (lr * s) - 1 / (lr * s_end)
        assert abs(first_step_below(run, 0.9) - predicted) < 0.02 * predicted


def test_first_step_below_and_the_loss_along_a_run():
    X, Y, direction = one_layer_problem(count=16)
    run, = descend_together([Layer(*(0.1 * w for w in direction))], loss_moments(X[:8], Y[:8]),
                            learning_rate=0.02, steps=600, record_every=20)
    step = first_step_below(run, 0.5)
    index = int(np.flatnonzero(run.steps == step)[0])
    assert run.losses[index] < 0.5 * run.losses[0] <= run.losses[index - 1]
    assert first_step_below(run, 1e-300) is None
    held = loss_along(run, X[8:], Y[8:])                          # the forward map, not moments
    direct = [loss_and_gradient(layer, X[8:], Y[8:])[0] for layer in run.weights]
    assert np.allclose(held, direct, rtol=1e-12)
    assert np.allclose(loss_along(run, X[:8], Y[:8]), run.losses, rtol=1e-9)


@pytest.mark.parametrize("call, message", [
    (lambda X, Y, L: loss_moments(X[0], Y), r"inputs must have shape \(N, d, t\) with N >= 1"),
    (lambda X, Y, L: loss_moments(X, Y[:2]), r"targets must have shape \(12, d', 3\)"),
    (lambda X, Y, L: descend_together([], loss_moments(X, Y), learning_rate=0.1, steps=1),
     "starts must be a non-empty sequence of layers"),
    (lambda X, Y, L: descend_together([L, Layer(L.Q[:1], L.K[:1], L.V)], loss_moments(X, Y),
                                      learning_rate=0.1, steps=1), "of one shape"),
    (lambda X, Y, L: descend_together([L], [loss_moments(X, Y)] * 2, learning_rate=0.1, steps=1),
     r"moments must be one LossMoments or one per start \(1\), got 2 item\(s\)"),
    (lambda X, Y, L: descend_together([L], loss_moments(X[:, :2], Y), learning_rate=0.1, steps=1),
     "moments must be those of a training set with d = 3, d' = 2"),
    (lambda X, Y, L: descend_together([L], loss_moments(X, Y), learning_rate=0, steps=1),
     "learning_rate must be a finite number > 0, got learning_rate=0"),
    (lambda X, Y, L: descend_together([L], loss_moments(X, Y), learning_rate=0.1, steps=0),
     "steps must be an integer >= 1, got steps=0"),
    (lambda X, Y, L: descend_together([L], loss_moments(X, Y), learning_rate=0.1, steps=2,
                                      record_every=True), "record_every must be an integer >= 1"),
    (lambda X, Y, L: descend_together([Layer(*(30 * w for w in L))], loss_moments(X, Y),
                                      learning_rate=1.0, steps=50),
     r"learning_rate=1.0 is too large: the loss of start 0 diverged at step \d+"),
    (lambda X, Y, L: first_step_below(descend_together([L], loss_moments(X, Y), learning_rate=0.1,
                                                       steps=1)[0], 0),
                                                       "fraction must be a finite number > 0"),
    (lambda X, Y, L: loss_along(descend_together([L], loss_moments(X, Y), learning_rate=0.1,
                                                 steps=1)[0], X[:, :2], Y),
     r"inputs and targets must have shapes \(N, 3, t\) and \(N, 2, t\) for this run"),
])
def test_descent_bad_input_gets_a_clear_error(call, message):
    X, Y, direction = one_layer_problem()
    with pytest.raises(ValueError, match=message):
        call(X, Y, direction)


def test_loss_moments_are_a_named_value():
    moments = loss_moments(*one_layer_problem()[:2])
    assert isinstance(moments, LossMoments) and moments.constant > 0
