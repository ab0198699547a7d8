import re

import numpy as np
import pytest

from lsa_helpers import Architecture, dimension
from lsa_helpers.function_space import memory_estimate


def test_certified_one_layer():
    result = dimension(Architecture((3, 3), (3,)), rng=0)
    assert (result.method, result.rank, result.upper_bound) == ("certified", 17, 17)
    assert result.certified_dimension == 17 and result.stopped == "met upper bound"
    assert result.samples * 3 * 3 >= result.parameters == 27
    assert "certified=17" in repr(result)


def test_methods():
    arch = Architecture((4, 3, 4), (2, 3))
    exact = dimension(arch, method="exact", rng=1)
    assert exact.certified_dimension is None and exact.rank == exact.upper_bound == 34
    floating = dimension(arch, method="float", rng=1)
    assert floating.rank == 34 and floating.float_reading.is_clear and floating.modulus is None
    softmax = dimension(Architecture((4, 3, 4), (2, 3), "softmax"), rng=1)
    assert softmax.method == "float" and softmax.rank == 36


def test_deep_network_needs_more_inputs_than_parameters_over_rows():
    """Adaptive sampling: the first batch (rows = parameters) falls short in deep networks."""
    arch = Architecture((6, 6, 6, 6), (2, 2, 2))
    result = dimension(arch, rng=0)
    first = -(-arch.parameter_count // (6 * 3))
    assert result.samples > first and result.certified_dimension == result.formula.value == 93


def test_sample_limit():
    result = dimension(Architecture((6, 6, 6, 6), (2, 2, 2)), rng=0, max_samples=3)
    assert result.stopped == "sample limit" and result.samples == 3 and result.rank < 93


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "fast"},
     "method must be one of ('auto', 'float', 'exact', 'certified'), got 'fast'"),
    ({"method": "certified", "arch": Architecture((3, 3), (2,), "softmax")},
     "exact arithmetic needs normalization='lightning' (softmax is not polynomial)"),
    ({"rng": "x"}, "rng must be a numpy Generator, a non-negative int seed or None, got rng='x'"),
])
def test_errors(kwargs, message):
    arch = kwargs.pop("arch", Architecture((3, 3), (2,)))
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        dimension(arch, **kwargs)


def test_sketches_keep_the_exact_rank(rng):
    """Rows fed in chunks, cut to random combinations of rows and columns: the rank of the whole."""
    from lsa_helpers import PRIME, exact_rank
    from lsa_helpers.function_space import _sketch

    tall = np.mod(rng.integers(0, PRIME, (400, 7)) @ rng.integers(0, 5, (7, 30)), PRIME)
    space, columns = None, None
    for chunk in np.split(tall.astype(float), 8):
        space, columns = _sketch(chunk, space, columns, 9, PRIME, rng)  # 9: a bound, not tight
    assert space.rank == exact_rank(tall) == 7 and columns.shape == (30, 25)


def test_the_memory_of_a_certified_run_stays_with_one_chunk():
    """Rows are combined as they come: the traced peak stays near one chunk, whatever the rounds."""
    import tracemalloc

    arch = Architecture((10, 10, 10, 10), (3, 3, 3))  # 480 parameters, rounds of 16+ inputs
    tracemalloc.start()
    result = dimension(arch, rng=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert result.certified_dimension == 250 and result.samples > 16
    assert peak < 8 * 8 * arch.parameter_count ** 2  # a few parameter-square float64 arrays


@pytest.mark.parametrize("call, message", [
    (lambda: dimension(Architecture((3, 3), (2,)), max_samples=-1),
     "max_samples must be an integer >= 1 or None, got max_samples=-1"),
    (lambda: dimension(Architecture((80, 80), (80,))),
     ("this request may need up to 7.57 GB of memory, above max_memory = 4 GB; raise max_memory "
      "to compute it anyway")),
    (lambda: dimension(Architecture((3, 3), (2,)), max_memory=float("nan")),
     "max_memory must be a finite number > 0, got max_memory=nan"),
    (lambda: Architecture({3, 4}, (2,)),
     "widths must be a sequence of positive integers, got widths={3, 4}"),
    (lambda: dimension(Architecture((3, 3), (2,)), rng=-1),
     "rng must be a numpy Generator, a non-negative int seed or None, got rng=-1"),
])
def test_bad_requests_are_refused_before_computing(call, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()


def test_the_memory_estimate_grows_with_the_jacobian():
    """A float first round: about parameters^2 entries, a few bytes each, more for exact ranks;
    later float rounds keep every row, exact ones only a chunk."""
    from lsa_helpers.function_space import OVERHEAD

    small, large = Architecture((8, 8), (4,)), Architecture((16, 16), (8,))
    ratio = (memory_estimate(large, "float") - OVERHEAD) / (memory_estimate(small, "float")
                                                            - OVERHEAD)
    assert 14 < ratio < 18  # 4x the parameters: 16x the entries
    assert memory_estimate(small, "float") < memory_estimate(small, "certified")
    for method, grows in (("float", True), ("certified", False)):
        later = memory_estimate(large, method, inputs=100) - memory_estimate(large, method)
        assert (later > 0) is grows, method


def float_against_certified(arch, seed, max_samples=None):
    """The float run, after checking that it is the certified dimension or says why it is not."""
    floating = dimension(arch, method="float", rng=seed, max_samples=max_samples)
    certified = dimension(arch, rng=seed).certified_dimension
    assert certified is not None, arch
    found = floating.float_reading
    if found.is_clear:
        assert floating.rank == certified and found.reason is None, (arch, seed, found)
    else:
        assert found.reason, (arch, seed, found)
    return floating, certified


@pytest.mark.parametrize("widths, ranks, seed", [
    ((3,) * 6, (2,) * 5, 0), ((3,) * 6, (2,) * 5, 1), ((3,) * 6, (2,) * 5, 2),
    ((2,) * 8, (1,) * 7, 0), ((4,) * 7, (4,) * 6, 0)])
def test_a_deep_float_rank_is_right_or_says_why_not(widths, ranks, seed):
    """Degree 3^l in the input: unscaled, the rows of these Jacobians span ~170 decades and
    underflow, a clear gap can certify a wrong rank (42 for 44, 7 for 18), and overflow leaves
    entries that are not finite (4 x 7)."""
    float_against_certified(Architecture(widths, ranks), seed, max_samples=64)


def test_inputs_scaled_to_unit_outputs_give_the_rank_that_underflow_hid():
    """Widths 2 x 8, ranks 1 x 7: unscaled, most rows underflow to 0 and the float rank is 7;
    on inputs scaled to unit outputs it is the certified 18."""
    floating, certified = float_against_certified(Architecture((2,) * 8, (1,) * 7), 0)
    assert floating.rank == certified == 18 and floating.stopped == "met upper bound"


def test_unit_outputs_are_unit_and_keep_the_directions_of_the_inputs(rng):
    from lsa_helpers import forward, random_inputs, random_weights
    from lsa_helpers.function_space import _unit_outputs

    arch = Architecture((3,) * 7, (2,) * 6)
    weights, X = random_weights(arch, rng), random_inputs(arch, 5, rng)
    scaled = _unit_outputs(arch, weights, X)
    norms = np.linalg.norm(forward(weights, scaled), axis=(1, 2))
    np.testing.assert_allclose(norms, 1.0, rtol=1e-9)
    ratios = scaled / X
    np.testing.assert_allclose(ratios, ratios[:, :1, :1] * np.ones_like(X), rtol=1e-12)
    assert np.all(ratios > 0)


@pytest.mark.parametrize("depth", range(1, 9))
def test_float_ranks_of_depths_one_to_eight_are_right_or_say_why_not(depth):
    for width, rank in ((2, 1), (2, 2)):
        float_against_certified(Architecture((width,) * (depth + 1), (rank,) * depth), depth,
                                max_samples=48)


def test_a_float_rank_above_the_upper_bound_is_not_clear():
    """Deep softmax averages its tokens: derivatives of late attention weights fall to rounding
    level (1e-16) and, scaled up, counted as directions: rank 57 above the proved bound 49."""
    result = dimension(Architecture((3,) * 6, (2,) * 5, "softmax"), rng=0)
    assert result.rank > result.upper_bound == 49
    assert not result.float_reading.is_clear and "upper bound 49" in result.float_reading.reason


def test_floating_point_exceptions_in_the_jacobian_are_reported():
    """A deep residual network is not homogeneous, so its inputs are not rescaled: Y + phi(Y)
    grows like a cube per layer and overflows; the rows that overflow are left out."""
    result = dimension(Architecture((2,) * 10, (1,) * 9, skip=True), method="float", rng=0,
                       max_samples=8)
    assert "overflow in computing the Jacobian" in result.float_reading.reason


def test_a_known_upper_bound_narrows_the_exact_estimate():
    """Before the fiber rank ``P`` directions of ``J C`` are counted, then ``upper + 16``; a float
    rank has no directions to count."""
    arch = Architecture((24, 24, 24), (6, 6))  # 1728 parameters, upper bound 1078
    assert memory_estimate(arch, upper=1078) < memory_estimate(arch)
    assert memory_estimate(arch, "float", upper=1078) == memory_estimate(arch, "float")
    with pytest.raises(ValueError, match=r"^upper must be an integer >= 0, got upper=-1$"):
        memory_estimate(arch, upper=-1)
