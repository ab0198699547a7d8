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
    moved = [np.abs(w - v).max() for a, b in zip(run.weights, problem.teacher) for w, v in zip(a, b)]
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
    (lambda a, p: teacher_problem(a, 0, SEED), "count must be a positive integer"),
    (lambda a, p: teacher_problem(a, 3, SEED, perturbation=-1.0), "perturbation must be"),
    (lambda a, p: squared_loss(a, p.teacher, p.inputs[:, :2], p.targets), "inputs must have shape"),
    (lambda a, p: squared_loss(a, p.teacher, p.inputs, p.targets[:2]), "targets must have shape"),
    (lambda a, p: train_to_zero_loss(a, p.start, p.inputs, p.targets, max_steps=0),
     "max_steps must be a positive integer"),
    (lambda a, p: train_to_zero_loss(a, p.start, p.inputs, p.targets, rtol=0.0),
     "rtol must be a positive number"),
    (lambda a, p: train_to_zero_loss(a, p.start[:1], p.inputs, p.targets), "weights must have"),
    (lambda a, p: loss_hessian(a, p.teacher, p.inputs, p.targets, step=0), "step must be"),
    (lambda a, p: flat_directions(a, p.teacher, np.zeros((0, 3, 3))), "inputs must have shape"),
])
def test_bad_input_gets_a_clear_error(call, message):
    arch = Architecture((3, 2, 3), (2, 2))
    problem = teacher_problem(arch, 3, SEED)
    with pytest.raises(ValueError, match=message):
        call(arch, problem)
