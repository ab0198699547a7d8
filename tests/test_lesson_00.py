"""Notebook 00 (the course map): its demo, and the facts its core states."""

import pytest
from widget_support import set_and_run

from lsa_helpers import Architecture, dimension, formula_dimension
from lsa_helpers.widgets import parameter_split_explorer


@pytest.mark.parametrize("values, expected", [
    ({"d": 3, "d_out": 3, "a": 3}, (27, 17, 9, 1)),   # the notebook's first certified dimension
    ({"d": 3, "d_out": 3, "a": 5}, (39, 17, 21, 1)),  # a > d: rotation 2ad - d^2, no new dimension
    ({"d": 1, "d_out": 1, "a": 1}, (3, 1, 1, 1)),     # every slider at its minimum
    ({"d": 5, "d_out": 5, "a": 6}, (85, 49, 35, 1)),  # every slider at its maximum
    ({"d": 3, "d_out": 2, "a": 2}, (18, 13, 4, 1)),   # exercise 00.1, the demo's stored view
    ({"d": 3, "d_out": 2, "a": 6}, (42, 14, 27, 1)),  # the demo's question: past a = d, rotation
    ({"d": 1, "d_out": 3, "a": 3}, (9, 3, 5, 1)),     # Bonus 6's question at d = 1: 2ad - d^2
])
def test_parameter_split_explorer(values, expected, caplog):
    facts = set_and_run(parameter_split_explorer(seed=2025), caplog, **values)
    parts = (facts["parameters"], facts["dimension"], facts["rotation"], facts["volume"])
    assert parts == expected
    assert facts["parameters"] == sum(parts[1:])
    arch = Architecture((values["d"], values["d_out"]), (values["a"],))
    assert facts["dimension"] == formula_dimension(arch).value


def test_parameter_split_explorer_clamps_out_of_range(caplog):
    widget = parameter_split_explorer()
    facts = set_and_run(widget, caplog, d=0, d_out=99, a=-3)
    assert [child.value for child in widget.children[:-1]] == [1, 5, 1]
    assert facts == {"parameters": 7, "dimension": 5, "rotation": 1, "volume": 1}


def test_the_overcount_of_equal_sizes():
    """For a = d = d' the certified dimension is 2 d^2 - 1 against 3 d^2 parameters."""
    for d in range(1, 7):
        arch = Architecture((d, d), (d,))
        assert arch.parameter_count == 3 * d * d
        assert dimension(arch, rng=d).certified_dimension == 2 * d * d - 1
