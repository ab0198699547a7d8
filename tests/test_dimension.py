import re

import numpy as np
import pytest

from lsa_helpers import Architecture, dimension
from lsa_helpers.dimension import memory_estimate


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
    assert floating.rank == 34 and floating.float_rank.is_clear and floating.modulus is None
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
    ({"method": "fast"}, "method must be one of ('auto', 'float', 'exact', 'certified'), got 'fast'"),
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
    from lsa_helpers.dimension import _sketch

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
     "max_samples must be a positive integer or None, got max_samples=-1"),
    (lambda: dimension(Architecture((60, 60), (60,))),
     ("this request may need up to 16.9 GB of memory, above max_memory = 4 GB; raise max_memory "
      "to compute it anyway")),
    (lambda: dimension(Architecture((3, 3), (2,)), max_memory=float("nan")),
     "max_memory must be a positive number of bytes, got max_memory=nan"),
    (lambda: Architecture({3, 4}, (2,)),
     "widths must be a sequence of positive integers, got widths={3, 4}"),
    (lambda: dimension(Architecture((3, 3), (2,)), rng=-1),
     "rng must be a numpy Generator, a non-negative int seed or None, got rng=-1"),
])
def test_bad_requests_are_refused_before_computing(call, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()


def test_the_memory_estimate_grows_with_the_jacobian():
    """First round: about parameters^2 entries, a few bytes each, more for exact ranks; later
    float rounds keep every row, exact ones only a sketch."""
    from lsa_helpers.dimension import OVERHEAD

    small, large = Architecture((8, 8), (4,)), Architecture((16, 16), (8,))
    ratio = (memory_estimate(large) - OVERHEAD) / (memory_estimate(small) - OVERHEAD)
    assert 14 < ratio < 18  # 4x the parameters: 16x the entries
    assert memory_estimate(small, "float") < memory_estimate(small, "certified")
    for method, grows in (("float", True), ("certified", False)):
        later = memory_estimate(large, method, inputs=100) - memory_estimate(large, method)
        assert (later > 0) is grows, method
