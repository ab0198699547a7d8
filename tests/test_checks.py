"""Argument checks (``lsa_helpers._checks``) and the bad inputs they turn into one-line errors."""

import re

import numpy as np
import pytest

from lsa_helpers import (
    Architecture,
    MultiHead,
    _checks,
    dimension,
    function_distance,
    multihead_dimension,
    random_inputs,
    random_weights,
    rank_one_layers,
    reproduce_softmax_conjecture,
    tangent_dimension,
    teacher_problem,
    widgets,
)
from lsa_helpers.symbolic import symbolic_layer

ARCH = Architecture((3, 2), (2,))
ONE = Architecture((3, 2), (3,))
NAN = float("nan")


def test_miller_rabin_agrees_with_flint():
    """The primality test of the checks against FLINT's, on every n below 5000 and on numbers
    that fool weaker tests: Carmichael numbers, strong pseudoprimes to several bases, primes
    next to 2^62."""
    import flint

    hard = [561, 1105, 1729, 2047, 3215031751, 2152302898747, 3474749660383, 341550071728321,
            3825123056546413051, 2**61 - 1, 2**62 - 57, 2**62 - 1, 1048573, 1048575]
    for n in list(range(5000)) + hard:
        assert _checks.is_prime(n) == bool(flint.fmpz(n).is_prime()), n


@pytest.mark.parametrize("check, value, expected", [
    (_checks.positive_int, np.int64(3), 3),
    (_checks.nonnegative_int, np.uint8(0), 0),
    (_checks.seed, np.int32(7), 7),
    (_checks.finite_positive, np.float32(0.5), 0.5),
    (_checks.finite_positive, np.int64(4_000_000_000), 4e9),
    (_checks.finite_nonnegative, 0, 0.0),
    (_checks.fraction, 1e-9, 1e-9),
    (_checks.bool_flag, np.True_, True),
])
def test_numpy_numbers_are_numbers(check, value, expected):
    result = check("x", value)
    assert result == expected and type(result) is type(expected)


@pytest.mark.parametrize("check, value, message", [
    (_checks.positive_int, True, "x must be an integer >= 1, got x=True"),
    (_checks.positive_int, 2.0, "x must be an integer >= 1, got x=2.0"),
    (_checks.nonnegative_int, -1, "x must be an integer >= 0, got x=-1"),
    (_checks.optional_positive_int, False, "x must be an integer >= 1 or None, got x=False"),
    (_checks.seed, -1, "x must be an integer seed >= 0, got x=-1"),
    (_checks.finite, np.inf, "x must be a finite number, got x=inf"),
    (_checks.finite_positive, NAN, "x must be a finite number > 0, got x=nan"),
    (_checks.finite_positive, float("inf"), "x must be a finite number > 0, got x=inf"),
    (_checks.finite_positive, True, "x must be a finite number > 0, got x=True"),
    (_checks.finite_nonnegative, -0.5, "x must be a finite number >= 0, got x=-0.5"),
    (_checks.fraction, 0, "x must be a number between 0 and 1, got x=0"),
    (_checks.fraction, NAN, "x must be a number between 0 and 1, got x=nan"),
    (_checks.bool_flag, 1, "x must be True or False, got x=1"),
    (_checks.sizes, (2, True), "x must be positive integers, got x=(2, True)"),
    (_checks.prime, 91, "x must be a prime p with 2 <= p < 2^62, got x=91"),
    (_checks.prime, True, "x must be a prime p with 2 <= p < 2^62, got x=True"),
])
def test_checks_refuse_in_one_line(check, value, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        check("x", value)


def test_a_range_and_a_choice_state_their_rule():
    with pytest.raises(ValueError, match=r"^x must be an integer from 1 to 5, got x=6$"):
        _checks.integer("x", 6, 1, maximum=5)
    with pytest.raises(ValueError, match=r"^x must be one of \('a', 'b'\), got 'c'$"):
        _checks.choice("x", "c", ("a", "b"))
    with pytest.raises(ValueError, match=r"^x must be a number in \[0, 1\), got x=1$"):
        _checks.fraction("x", 1, zero=True)
    assert _checks.fraction("x", 0, zero=True) == 0.0


def widget_factories():
    return {name: getattr(widgets, name) for name in
            ("fiber_explorer", "dimension_explorer", "softmax_explorer", "deep_explorer",
             "multihead_explorer", "parameter_split_explorer")}


BAD_CALLS = [
    (lambda: random_inputs(ARCH, True), "count must be an integer >= 1, got count=True"),
    (lambda: function_distance(ARCH, random_weights(ARCH, 0), random_weights(ARCH, 1),
                               samples=0),
     "samples must be an integer >= 1, got samples=0"),
    (lambda: tangent_dimension(ONE, rank_one_layers([1, 0, 0], [0, 1, 0], [1, 1], [1, 1, 0],
                                                    a=3)[0], max_rounds=True),
     "max_rounds must be an integer >= 1, got max_rounds=True"),
    (lambda: dimension(ARCH, max_memory=NAN),
     "max_memory must be a finite number > 0, got max_memory=nan"),
    (lambda: multihead_dimension(MultiHead(2, 2, (1,), (1,)), max_memory=NAN),
     "max_memory must be a finite number > 0, got max_memory=nan"),
    (lambda: reproduce_softmax_conjecture([3], trials=0, workers=1),
     "trials must be an integer >= 1, got trials=0"),
    (lambda: reproduce_softmax_conjecture([3], samples=5, workers=1, max_memory=NAN),
     "max_memory must be a finite number > 0, got max_memory=nan"),
    (lambda: teacher_problem(ARCH, 4, 0, perturbation=NAN),
     "perturbation must be a finite number >= 0, got perturbation=nan"),
    (lambda: dimension(ARCH, progress=1), "progress must be True or False, got progress=1"),
] + [(lambda factory=factory: factory(seed=-1), "seed must be an integer seed >= 0, got seed=-1")
     for factory in widget_factories().values()]


@pytest.mark.parametrize("call, message", BAD_CALLS)
def test_bad_input_gets_one_line_naming_the_argument(call, message):
    with pytest.raises(ValueError) as error:
        call()
    text = str(error.value)
    assert text == message and "\n" not in text
    assert re.match(r"^\w+ must ", text)


def test_numpy_integers_are_accepted_where_architecture_accepts_them():
    layer = symbolic_layer(np.int64(2), 1, np.int64(1), 2)
    assert layer.output.shape == (1, 2)
    arch = Architecture((np.int64(3), 2), (np.int64(2),), tokens=np.int64(3))
    assert arch.tokens == 3 and type(arch.tokens) is int
    assert random_inputs(arch, np.int64(2), np.int64(0)).shape == (2, 3, 3)
