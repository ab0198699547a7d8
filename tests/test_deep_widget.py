import pytest
from widget_support import set_and_run

from lsa_helpers import PRIME, Architecture, exact_rank, fiber_tangents, random_weights
from lsa_helpers.widgets import deep_explorer


def test_default_state():
    result = deep_explorer(seed=2025).result
    assert result["widths"] == (4, 3, 4) and result["ranks"] == (2, 2)
    assert (result["parameters"], result["formula"], result["certified"]) == (52, 33, 33)
    assert result["symmetry orbit"] == 2 * 2 + 2 * 2 + 3 * 3 + 2 and result["other fiber"] == 0


@pytest.mark.parametrize("values, expected", [
    # a wider hidden layer adds nothing
    ({"depth": 2, "d0": 4, "d1": 6, "d2": 4, "a1": 2, "a2": 2},
     {"parameters": 88, "formula": 38, "certified": 38, "dimension": 38}),
    ({"depth": 2, "d0": 3, "d1": 3, "d2": 3, "a1": 1, "a2": 3},  # rank-one collapse
     dict(formula=None, certified=18, dimension=18, **{"other fiber": 3})),
    ({"depth": 2, "d0": 3, "d1": 3, "d2": 3, "a1": 1, "a2": 2},  # bounds that do not meet
     {"formula": None, "lower": 18, "upper": 20, "certified": None, "dimension": None}),
    ({"depth": 2, "d0": 5, "d1": 4, "d2": 1, "a1": 5, "a2": 1},  # layer 2 reads 3 forms
     dict(formula=37, certified=37, **{"other fiber": 1})),
    ({"depth": 3, "d0": 6, "d1": 6, "d2": 6, "d3": 6, "a1": 6, "a2": 6, "a3": 6},  # formula only
     {"parameters": 324, "formula": 141, "certified": None, "lower": None, "dimension": 141}),
    ({"depth": 1, "d0": 1, "d1": 1, "d2": 1, "d3": 1, "a1": 1, "a2": 1, "a3": 1},      # minima
     {"widths": (1, 1), "parameters": 3, "formula": 1, "certified": 1}),
    ({"depth": 3, "d0": 4, "d1": 4, "d2": 4, "d3": 4, "a1": 2, "a2": 3, "a3": 2},
     dict(parameters=104, formula=52, certified=52, **{"symmetry orbit": 52})),
])
def test_deep_explorer(values, expected, caplog):
    result = set_and_run(deep_explorer(seed=2025), caplog, **values)
    for key, value in expected.items():
        assert result[key] == value, key
    if result["certified"] is not None:  # other fiber directions: the known ones, computed here
        arch = Architecture(result["widths"], result["ranks"])
        known = exact_rank(fiber_tangents(arch, random_weights(arch, 1, modulus=PRIME),
                                          modulus=PRIME))
        assert result["other fiber"] == known - result["symmetry orbit"] >= 0
    elif result["dimension"] is not None:
        assert result["other fiber"] >= 0


def test_out_of_range_values_clamp(caplog):
    widget = deep_explorer()
    result = set_and_run(widget, caplog, depth=9, d0=0, a1=-3)
    assert widget.children[0].value == 3 and result["widths"][0] == 1 and result["ranks"][0] == 1


@pytest.mark.parametrize("depth, disabled", [
    (1, ["d2", "d3", "a2", "a3"]), (2, ["d3", "a3"]), (3, []),
])
def test_sliders_past_the_depth_are_disabled(depth, disabled, caplog):
    widget = deep_explorer(seed=2025)
    result = set_and_run(widget, caplog, depth=depth)
    assert result["disabled"] == disabled
    sliders = {child.description: child for child in widget.children[:-1]}
    assert [name for name, slider in sliders.items() if slider.disabled] == \
        sorted(disabled, key=list(sliders).index)


def test_sliders_are_enabled_again_when_the_depth_grows(caplog):
    widget = deep_explorer(seed=2025)
    set_and_run(widget, caplog, depth=1)
    result = set_and_run(widget, caplog, depth=3, d3=2, a3=1)
    sliders = {child.description: child for child in widget.children[:-1]}
    assert not any(slider.disabled for slider in sliders.values())
    assert result["widths"][3] == 2 and result["ranks"][2] == 1


@pytest.mark.parametrize("values, expected", [                 # the demo answers of notebook 04
    ({"depth": 3, "d0": 4, "d1": 4, "d2": 4, "d3": 4, "a1": 2, "a2": 3, "a3": 2},   # predict first
     {"parameters": 104, "dimension": 52, "symmetry orbit": 52, "other fiber": 0}),
    ({"depth": 2, "d0": 3, "d1": 3, "d2": 3, "a1": 1, "a2": 1},                     # question 1
     {"parameters": 30, "formula": 17, "status": "derived", "dimension": 17, "symmetry orbit": 13,
      "other fiber": 0}),
    ({"depth": 2, "d0": 3, "d1": 3, "d2": 3, "a1": 1, "a2": 3},
     {"parameters": 42, "formula": None, "certified": 18, "symmetry orbit": 21, "other fiber": 3}),
    ({"depth": 1, "d0": 4, "d1": 3, "a1": 2},                                        # question 2
     {"parameters": 28, "dimension": 23, "symmetry orbit": 5, "other fiber": 0,
      "disabled": ["d2", "d3", "a2", "a3"]}),
])
def test_the_answers_of_notebook_04(values, expected, caplog):
    result = set_and_run(deep_explorer(seed=2025), caplog, **values)
    for key, value in expected.items():
        assert result[key] == value, key
