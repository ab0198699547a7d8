import re

import pytest

from lsa_helpers import Architecture


def test_parameter_count_sums_layers():
    arch = Architecture((4, 3, 2), (2, 1))
    assert arch.layer_parameter_counts == ((2 * 2 + 3) * 4, (2 * 1 + 2) * 3)
    assert arch.parameter_count == 28 + 12
    assert arch.layers == 2 and arch.degree == 9


def test_shapes_and_defaults():
    arch = Architecture([3, 2], [5])
    assert arch.widths == (3, 2) and arch.ranks == (5,)
    assert arch.layer_shapes == (((5, 3), (5, 3), (2, 3)),)
    assert arch.normalization == "lightning" and arch.tokens == 3
    assert str(arch) == "lightning widths=(3,2) ranks=(5) t=3"


def test_frozen():
    arch = Architecture((3, 2), (1,))
    with pytest.raises(AttributeError):
        arch.tokens = 4


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"widths": (3, 0), "ranks": (1,)}, "widths must be positive integers, got widths=(3, 0)"),
        ({"widths": (3, -2), "ranks": (1,)},
         "widths must be positive integers, got widths=(3, -2)"),
        ({"widths": (3, 2.5), "ranks": (1,)},
         "widths must be positive integers, got widths=(3, 2.5)"),
        ({"widths": (3, True), "ranks": (1,)},
         "widths must be positive integers, got widths=(3, True)"),
        ({"widths": 3, "ranks": (1,)},
         "widths must be a sequence of positive integers, got widths=3"),
        ({"widths": (3,), "ranks": ()}, "ranks must be positive integers, got ranks=()"),
        ({"widths": (3,), "ranks": (1,)}, "widths must list at least d_0 and d_1, got widths=(3,)"),
        ({"widths": (3, 3), "ranks": (0,)}, "ranks must be positive integers, got ranks=(0,)"),
        ({"widths": (3, 3, 3), "ranks": (2,)},
         "ranks must have one entry per layer (len(widths) - 1 = 2), got ranks=(2,)"),
        ({"widths": (3, 3), "ranks": (2,), "normalization": "relu"},
         "normalization must be one of ('lightning', 'softmax'), got 'relu'"),
        ({"widths": (3, 3), "ranks": (2,), "tokens": 0},
         "tokens must be an integer >= 1, got tokens=0"),
        ({"widths": (3, 3), "ranks": (2,), "tokens": 2.0},
         "tokens must be an integer >= 1, got tokens=2.0"),
    ],
)
def test_validation_errors(kwargs, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        Architecture(**kwargs)
