"""The course's corrected statements, each checked by computing its counterexample or its fact,
and one voice about the paper in every course file."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from lsa_helpers import (
    PRIME,
    Architecture,
    dimension,
    exact_rank,
    formula_dimension,
    forward,
    random_inputs,
    random_weights,
    rank_one_layers,
    span_dimension,
    symmetry_tangents,
    tangent_dimension,
    virtual_jacobian,
    width_tangents,
)
from lsa_helpers.landscape import flat_directions, teacher_problem, train_to_zero_loss

ROOT = Path(__file__).resolve().parents[1]
SEED = 2025


def gl_orbit(arch):
    """sum_i a_i^2 + sum_{i<l} d_i^2: the GL_{a_i} and GL_{d_i} actions, no scalings (softmax)."""
    return sum(a * a for a in arch.ranks) + sum(d * d for d in arch.widths[1:-1])


def symmetry_count(arch):
    """The lightning symmetries: the GL orbit and l scalings."""
    return gl_orbit(arch) + arch.layers


# --- the deep softmax conjecture: identifiability in (M, L), not "fibers = GL orbits" ------------

@pytest.mark.parametrize("widths, ranks, parameters, rank, orbit", [
    ((3, 4, 3), (2, 2), 52, 25, 24),   # hidden width 4 > d_0, d_l: fiber 27 > 24
    ((4, 6, 3), (2, 2), 82, 36, 44),   # fiber 46 > 44
    ((3, 3, 3), (2, 2), 42, 25, 17),   # the bottleneck: the fiber is the GL orbit, 17
])
def test_the_softmax_fiber_is_the_gl_orbit_only_under_the_bottleneck(widths, ranks, parameters,
                                                                    rank, orbit):
    softmax = Architecture(widths, ranks, "softmax")
    found = dimension(softmax, rng=SEED)
    assert softmax.parameter_count == parameters
    assert found.rank == found.upper_bound == rank and found.float_reading.is_clear
    weights = random_weights(softmax, SEED, modulus=PRIME)
    orbit_rank = exact_rank(symmetry_tangents(softmax, weights, modulus=PRIME))
    assert orbit_rank == gl_orbit(softmax) == orbit
    bottleneck = max(widths[1:-1]) <= min(widths[0], widths[-1])
    assert (parameters - rank == orbit) == bottleneck
    # the width directions fill the rest: nothing reaches or reads part of the hidden layer
    known = np.concatenate([symmetry_tangents(softmax, weights, modulus=PRIME),
                            width_tangents(softmax, weights, modulus=PRIME)])
    assert exact_rank(known) == parameters - rank
    # the conjecture: one-to-one in the virtual weights (M, L), whose dimension is that rank
    lightning = Architecture(widths, ranks)
    virtual = virtual_jacobian(lightning, random_weights(lightning, SEED, modulus=PRIME),
                               modulus=PRIME)
    assert exact_rank(virtual) == rank


def test_softmax_is_not_lightning_plus_l_after_a_rank_one_collapse():
    """Widths (3, 3, 3), ranks (1, 3): softmax 23, lightning 18 + 2 = 20."""
    softmax = dimension(Architecture((3, 3, 3), (1, 3), "softmax"), rng=SEED)
    lightning = dimension(Architecture((3, 3, 3), (1, 3)), rng=SEED).certified_dimension
    assert softmax.rank == 23 and softmax.float_reading.is_clear and lightning == 18
    assert softmax.rank != lightning + 2
    no_collapse = dimension(Architecture((3, 3, 3), (2, 3), "softmax"), rng=SEED).rank
    without = dimension(Architecture((3, 3, 3), (2, 3)), rng=SEED).certified_dimension
    assert no_collapse == without + 2 == 26


# --- singular points need d >= 2: for d = 1 the function space is linear -------------------------

@pytest.mark.parametrize("d_out, a, expected", [(2, 1, 2), (3, 2, 3), (1, 2, 1)])
def test_one_dimensional_tokens_give_a_linear_function_space(d_out, a, expected):
    arch = Architecture((1, d_out), (a,))
    assert dimension(arch, rng=SEED).certified_dimension == span_dimension(1, d_out, 3) == expected
    # phi(X)_{:, j} = (A V) x_j sum_i x_i^2: the sum of two layers is the layer of A V + A' V'
    rng = np.random.default_rng(SEED)
    X = rng.normal(size=(4, 1, 3))
    (Q, K, V), (Q2, K2, V2) = (random_weights(arch, rng)[0] for _ in range(2))
    c = (K.T @ Q).item() * V + (K2.T @ Q2).item() * V2
    expected_sum = c[None, :, :] * X * np.sum(X**2, axis=2, keepdims=True)
    total = forward([(Q, K, V)], X) + forward([(Q2, K2, V2)], X)
    np.testing.assert_allclose(total, expected_sum, rtol=1e-12)


# --- flat minima: parameters - rank J, the symmetry count only where the formula applies ---------

def test_flat_minima_after_a_rank_one_collapse():
    """Widths (3, 3, 3), ranks (1, 3): zero block 24 = 42 - 18 at zero loss, symmetry count 21."""
    arch = Architecture((3, 3, 3), (1, 3))
    problem = teacher_problem(arch, 12, SEED)
    run = train_to_zero_loss(arch, problem.start, problem.inputs, problem.targets)
    assert run.converged
    flat = flat_directions(arch, run.weights, problem.inputs)
    certified = dimension(arch, rng=SEED).certified_dimension
    orbit = exact_rank(symmetry_tangents(arch, random_weights(arch, SEED, modulus=PRIME),
                                         modulus=PRIME))
    assert flat.flat == arch.parameter_count - certified == 24 and flat.gap > 1e16
    assert orbit == symmetry_count(arch) == 21 < flat.flat


def test_flat_minima_at_a_boundary_teacher():
    """(3, 2, 3) with z = k: the zero block is 12, not parameters - dim M = 10."""
    arch = Architecture((3, 2), (3,))
    teacher = rank_one_layers([1, 2, 0], [1, 0, 1], [1, 1], [1, 2, 0], a=3)[0]
    inputs = random_inputs(arch, 12, SEED)
    flat = flat_directions(arch, [teacher], inputs)   # zero loss on the teacher's own data
    assert flat.flat == 12 and flat.gap > 1e16
    assert arch.parameter_count - formula_dimension(arch).value == 10
    assert arch.parameter_count - tangent_dimension(arch, teacher, rng=SEED) == 12  # exact rank
    generic = flat_directions(arch, random_weights(arch, SEED), inputs)
    assert generic.flat == 10 == symmetry_count(arch)


# --- one voice: no sentence about what could or could not be read of the paper -------------------

HEDGES = re.compile(r"could not be read|not available here|as summari[sz]ed|unconfirmed|"
                    r"earlier version|exact wording|요약된 형태|미확인", re.IGNORECASE)


COURSE_FILES = [*sorted((ROOT / "notebooks").glob("**/*.ipynb")),
                *(ROOT / name for name in ("notebooks/CHEATSHEET.md", "notebooks/INSTRUCTORS.md",
                                           "GLOSSARY.md", "README.md", "README.ko.md",
                                           "CONTRIBUTING.md")),
                *sorted((ROOT / "lsa_helpers").glob("*.py"))]


def text_of(path):
    """A notebook's cell sources, or a file's text (Python: docstrings and comments included)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".ipynb":
        return text
    return "\n".join("".join(cell["source"]) for cell in json.loads(text)["cells"])


@pytest.mark.parametrize("path", COURSE_FILES, ids=lambda path: str(path.relative_to(ROOT)))
def test_no_sentence_about_reading_the_paper(path):
    text = text_of(path)
    found = [text[max(m.start() - 50, 0):m.end() + 30].replace("\n", " ")
             for m in HEDGES.finditer(text)]
    assert not found, f"{path.relative_to(ROOT)}: {found}"
