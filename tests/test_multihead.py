"""Multi-head lightning attention: forward, head permutations, Jacobian, exact dimensions."""

import numpy as np
import pytest

from lsa_helpers import (
    Head,
    MultiHead,
    head_symmetry_tangents,
    layer_forward,
    multihead_dimension,
    multihead_forward,
    multihead_jacobian,
    permute_heads,
    random_heads,
)


def test_parameters_and_counts():
    heads = MultiHead(4, 4, ranks=(2, 2), value_ranks=(2, 2))
    assert heads.heads == 2 and heads.parameter_count == 2 * (2 * 2 * 4 + 2 * 8) == 64
    assert heads.symmetry_dimension == 2 * (4 + 4 + 1) and heads.mixing_pairs == ()
    assert heads.expected_dimension == 64 - 18
    full = MultiHead(3, 3, ranks=(3, 3, 3), value_ranks=(3, 3, 3))
    assert len(full.mixing_pairs) == 6  # every ordered pair: GL_3 mixes the heads
    assert MultiHead(2, 2, (2, 1), (1, 2)).mixing_pairs == ((0, 1),)


@pytest.mark.parametrize("kwargs, message", [
    ({"d": 0, "d_out": 2, "ranks": (1,), "value_ranks": (1,)},
     "d must be an integer >= 1, got d=0"),
    ({"d": 2, "d_out": 2, "ranks": (1, 1), "value_ranks": (1,)}, "value_ranks must have one entry"),
    ({"d": 2, "d_out": 2, "ranks": (), "value_ranks": ()}, "ranks must be positive integers"),
    ({"d": 2, "d_out": 2, "ranks": (1,), "value_ranks": (1,), "tokens": 0},
     "tokens must be an integer >= 1"),
])
def test_bad_architecture(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MultiHead(**kwargs)


def test_forward_is_the_sum_of_heads_and_heads_commute(rng):
    heads = MultiHead(3, 2, ranks=(2, 1, 3), value_ranks=(1, 2, 2))
    w = random_heads(heads, rng)
    X = rng.normal(size=(5, 3, 4))
    total = sum(layer_forward((h.Q, h.K, h.U @ h.W), X) for h in w)
    assert np.allclose(multihead_forward(w, X), total)
    for order in ([1, 0, 2], [2, 1, 0]):
        assert np.allclose(multihead_forward(permute_heads(w, order), X), total)
    with pytest.raises(ValueError, match=r"order must be a permutation of 0\.\.2"):
        permute_heads(w, [0, 0, 1])


def test_value_rank_is_at_most_rho(rng):
    heads = MultiHead(4, 4, ranks=(2,), value_ranks=(1,))
    (head,) = random_heads(heads, rng)
    assert np.linalg.matrix_rank(head.layer.V) == 1


def _flat(w):
    return np.concatenate([np.ravel(m) for head in w for m in head])


def _unflat(heads, v):
    out, i = [], 0
    for shapes in heads.head_shapes:
        parts = []
        for r, c in shapes:
            parts.append(v[i:i + r * c].reshape(r, c))
            i += r * c
        out.append(Head(*parts))
    return out


def test_jacobian_matches_finite_differences(rng):
    heads = MultiHead(3, 2, ranks=(2, 1), value_ranks=(1, 2))
    w = random_heads(heads, rng)
    X = rng.normal(size=(4, 3, 3))
    J = multihead_jacobian(heads, w, X)
    v, eps = _flat(w), 1e-6
    fd = np.stack([(multihead_forward(_unflat(heads, v + eps * e), X)
                    - multihead_forward(_unflat(heads, v - eps * e), X)).ravel() / (2 * eps)
                   for e in np.eye(len(v))], axis=1)
    assert J.shape == (4 * 2 * 3, heads.parameter_count)
    assert np.abs(J - fd).max() < 1e-7 * np.abs(fd).max()


def test_exact_jacobian_is_the_integer_jacobian_reduced(rng):
    heads = MultiHead(2, 2, ranks=(2, 1), value_ranks=(1, 2))
    w = [Head(*(rng.integers(-2, 3, size=s).astype(float) for s in shapes))
         for shapes in heads.head_shapes]
    X = rng.integers(-2, 3, size=(3, 2, 3)).astype(float)
    p = 1048573
    assert np.array_equal(multihead_jacobian(heads, w, X, modulus=p),
                          np.mod(multihead_jacobian(heads, w, X), p))


def test_symmetry_and_mixing_tangents_are_fiber_directions(rng):
    heads = MultiHead(2, 2, ranks=(2, 1), value_ranks=(1, 2))
    w = random_heads(heads, rng)
    T = head_symmetry_tangents(heads, w)
    assert T.shape[0] == (4 + 1 + 1) + (1 + 4 + 1) + 1
    J = multihead_jacobian(heads, w, rng.normal(size=(6, 2, 3)))
    assert np.abs(J @ T.T).max() < 1e-10 * np.abs(J).max()


@pytest.mark.parametrize("d, d_out, ranks, value_ranks", [
    (4, 4, (4,), (4,)), (4, 4, (2, 2), (2, 2)), (4, 4, (1, 1, 1, 1), (1, 1, 1, 1)),
    (3, 3, (3, 3), (3, 3)), (2, 2, (2, 1), (1, 2)), (2, 2, (1,) * 5, (1,) * 5),
    (3, 2, (3, 1, 3), (1, 2, 2)), (3, 2, (5, 1), (4, 3)),
    (4, 1, (2, 1), (3, 1)),  # min(d, d') < rho < max(d, d'): more than the GL_rho orbit
])
def test_certified_dimension_is_the_expected_count(d, d_out, ranks, value_ranks):
    heads = MultiHead(d, d_out, ranks, value_ranks)
    result = multihead_dimension(heads, rng=0)
    assert result.certified_dimension == heads.expected_dimension
    assert result.stopped == "met upper bound"


def test_bounds_hold_on_random_layers():
    """Exact rank <= upper bound on random shapes (d = 1 included, where heads overlap most)."""
    rng = np.random.default_rng(7)
    for _ in range(40):
        d, d_out, h = (int(x) for x in rng.integers(1, 4, 3))
        heads = MultiHead(d, d_out, tuple(int(a) for a in rng.integers(1, d + 2, h)),
                          tuple(int(r) for r in rng.integers(1, max(d, d_out) + 2, h)))
        result = multihead_dimension(heads, rng=0)
        assert result.rank <= result.upper_bound <= heads.parameter_count, heads
        assert result.stopped != "exceeds upper bound"


def test_more_heads_at_a_fixed_budget_give_a_larger_function_space():
    dims = [multihead_dimension(MultiHead(4, 4, (4 // h,) * h, (4 // h,) * h), rng=0)
            for h in (1, 2, 4)]
    assert {r.heads.parameter_count for r in dims} == {64}
    assert [r.certified_dimension for r in dims] == [31, 46, 52]


@pytest.mark.parametrize("values, expected", [
    ({"d": 4, "d_out": 4, "heads": 2, "a": 2, "rho": 2},
     {"parameters": 64, "expected": 46, "certified": 46}),
    ({"d": 2, "d_out": 2, "heads": 2, "a": 2, "rho": 2},
     {"parameters": 32, "expected": 12, "certified": 12}),
    ({"d": 1, "d_out": 1, "heads": 1, "a": 1, "rho": 1},
     {"parameters": 4, "expected": 1, "certified": 1}),
    ({"d": 5, "d_out": 5, "heads": 2, "a": 5, "rho": 5},
     {"parameters": 200, "expected": 96, "certified": 96}),
    ({"d": 4, "d_out": 4, "heads": 2, "a": 2, "rho": 2, "prediction": 46},
     {"prediction": 46, "certified": 46}),
    # beyond certify_up_to (200 parameters): the counts only, and a message instead of a slow move
    ({"d": 5, "d_out": 5, "heads": 3, "a": 5, "rho": 5},
     {"parameters": 300, "expected": 141, "certified": None}),
    ({"d": 5, "d_out": 5, "heads": 5, "a": 5, "rho": 5, "prediction": 600},
     {"parameters": 500, "expected": 225, "exact rank": None, "certified": None}),
])
def test_multihead_explorer(values, expected, caplog, capsys):
    from widget_support import set_and_run

    from lsa_helpers.widgets import multihead_explorer

    facts = set_and_run(multihead_explorer(), caplog, **values)
    assert {key: facts[key] for key in expected} == expected
    if facts["certified"] is None:
        assert "too many to certify in one move" in capsys.readouterr().out


def test_multihead_explorer_starts_where_asked(caplog):
    from widget_support import set_and_run

    from lsa_helpers.widgets import multihead_explorer

    demo = multihead_explorer(heads=3, a=1, rho=1)
    assert {key: demo.kwargs[key] for key in ("d", "d_out", "heads", "a", "rho")} == {
        "d": 4, "d_out": 4, "heads": 3, "a": 1, "rho": 1}
    facts = set_and_run(demo, caplog, prediction=39)
    assert (facts["parameters"], facts["certified"], facts["prediction"]) == (48, 39, 39)
    with pytest.raises(ValueError, match=r"^heads must be an integer from 1 to 5, got heads=6$"):
        multihead_explorer(heads=6)


def test_bad_weights_name_the_head(rng):
    heads = MultiHead(3, 2, ranks=(2, 1), value_ranks=(1, 2))
    w = list(random_heads(heads, rng))
    with pytest.raises(ValueError, match="weights must have 2 heads, got 1"):
        multihead_jacobian(heads, w[:1], rng.normal(size=(1, 3, 3)))
    w[1] = Head(w[1].Q, w[1].K, w[1].W.T, w[1].U)
    with pytest.raises(ValueError, match=r"head 2 weights \(Q, K, W, U\) must have shapes"):
        head_symmetry_tangents(heads, w)


def test_a_composite_modulus_is_refused_before_flint_sees_it():
    heads = MultiHead(4, 4, ranks=(2, 2), value_ranks=(2, 2))
    with pytest.raises(ValueError,
                       match=r"^modulus must be a prime p with 2 <= p < 2\^62, got modulus=9$"):
        multihead_dimension(heads, rng=0, modulus=9)


def test_a_layer_too_large_for_memory_is_refused_before_computing():
    heads = MultiHead(64, 64, ranks=(32, 32), value_ranks=(32, 32))
    with pytest.raises(ValueError, match=r"^this request may need up to [\d.]+ GB of memory, "
                                         r"above max_memory = 4 GB"):
        multihead_dimension(heads, rng=0)
