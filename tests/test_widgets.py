import pytest
from widget_support import pixels, set_and_run

from lsa_helpers.widgets import (
    boundary_explorer,
    deep_explorer,
    dimension_explorer,
    fiber_explorer,
    multihead_explorer,
    parameter_split_explorer,
    polynomial_explorer,
    softmax_explorer,
    training_explorer,
)


def test_polynomial_explorer_counts(caplog):
    widget = polynomial_explorer()
    facts = set_and_run(widget, caplog)  # the default (6, 4, 2, 8) drawn in notebook 01
    assert facts["tokens where both orders cost the same"] == [6]
    assert (facts["multiplications, V X (X^T A X)"], facts["multiplications, (V X X^T)(A X)"]) == (
        1024, 816)
    facts = set_and_run(widget, caplog, d=2, d_out=1, a=1, t=2)
    assert facts["monomials per output entry"] == 10
    assert facts["span dimension of the neuromanifold"] == 6
    facts = set_and_run(widget, caplog, d=6, d_out=4, a=6, t=64)
    assert facts["multiplications, (V X X^T)(A X)"] < facts["multiplications, V X (X^T A X)"]
    assert facts["tokens where both orders cost the same"] == [6]  # a does not move the tie
    facts = set_and_run(widget, caplog, d=1, d_out=1, a=1, t=1)  # the sliders' lower ends
    assert facts["monomials per output entry"] == 1
    assert facts["tokens where both orders cost the same"] == [1]
    bars = widget.figure.axes[-1]  # a value of 1 still shows a bar on the log axis
    assert all(b.get_x() + b.get_width() > bars.get_xlim()[0] for b in bars.patches)
    facts = set_and_run(widget, caplog, d=16, d_out=8, a=16, t=64)  # the upper ends
    assert facts["tokens where both orders cost the same"] == [16] and facts["parameters"] == 640
    assert facts["span dimension of the neuromanifold"] == 8 * 16 * 16 * 17 // 2


@pytest.mark.parametrize("rank_A, rank_V, case", [(1, 1, "swap"), (2, 1, "curve"), (3, 2, "curve"),
                                                  (0, 2, "zero"), (3, 0, "zero")])
def test_fiber_explorer_cases(rank_A, rank_V, case, caplog):
    widget = fiber_explorer()
    result = set_and_run(widget, caplog, rank_A=rank_A, rank_V=rank_V)
    assert result["case"] == case
    ax = widget.figure.axes[-1]  # one visible bar per move, even for an exact 0
    bars = [bar for bar in ax.patches if bar.get_visible()]
    assert len(bars) == len(result) - 1 and all(b.get_width() > 0 for b in bars)
    assert all(b.get_x() >= ax.get_xlim()[0] for b in bars)
    if case != "zero" or rank_A == 0:  # a nudge of A = 0 makes phi non-zero when V != 0
        assert result["scaling (2A, V/2)"] < 1e-10 < result["random nudge 1e-3"]
    else:                               # V = 0: nothing moves phi away from 0
        assert result["random nudge 1e-3"] == result["scaling (2A, V/2)"] == 0.0
    if case == "swap":
        assert result["rank-one swap"] < 1e-10


def test_fiber_explorer_clamps_out_of_range(caplog):
    widget = fiber_explorer()
    assert set_and_run(widget, caplog, rank_A=99, rank_V=-5)["case"] == "zero"
    assert widget.children[0].value == 3 and widget.children[1].value == 0


@pytest.mark.parametrize("values, expected", [
    ({"d": 3, "d_out": 3, "a": 3, "t": 3}, {"parameters": 27, "formula": 17, "certified": 17}),
    ({"d": 1, "d_out": 1, "a": 1, "t": 1}, {"parameters": 3, "formula": None}),
    ({"d": 8, "d_out": 6, "a": 9, "t": 4}, {"parameters": 192, "formula": 111, "certified": 111}),
    ({"d": 8, "d_out": 1, "a": 1, "t": 2}, {"parameters": 24, "formula": 22, "certified": 22}),
    ({"d": 3, "d_out": 3, "a": 2, "t": 3}, {"parameters": 21, "formula": 16, "fiber": 5}),
    ({"d": 3, "d_out": 3, "a": 3, "t": 1}, {"formula": None, "certified": 14, "fiber": 13}),
    ({"d": 4, "d_out": 3, "a": 2, "t": 1}, {"exact rank": 21, "upper bound": 23, "certified": None,
                                           "fiber": None}),
    ({"d": 8, "d_out": 6, "a": 9, "t": 1}, {"parameters": 192, "formula": None, "certified": 83}),
])
def test_dimension_explorer(values, expected, caplog, capsys):
    widget = dimension_explorer()
    result = set_and_run(widget, caplog, **values)
    for key, value in expected.items():
        assert result[key] == value
    if result["formula"] is not None:
        assert result["float rank"] == result["exact rank"] == result["formula"]
        assert result["fiber"] == result["parameters"] - result["formula"]
    assert result["exact rank"] <= result["upper bound"] <= result["parameters"]
    printed = capsys.readouterr().out
    assert "formula [" in printed and f"exact rank {result['exact rank']}" in printed
    if result["certified"] is None:  # a message, not an error, when the bounds stay apart
        assert "the bounds do not meet" in printed
    assert len(widget.figure.axes) == 2  # parameters against dimension, and the two bounds


def test_boundary_explorer_asks_for_a_prediction_at_every_new_point(caplog):
    from lsa_helpers.widgets import boundary_explorer

    widget = boundary_explorer()
    prediction = widget.children[3]
    assert set_and_run(widget, caplog, prediction="inside")["correct"] is True
    moved = set_and_run(widget, caplog, alpha=1.5)  # beta = 1, gamma = 0: now outside
    assert prediction.value == "" and moved["prediction"] is None and moved["correct"] is None
    assert moved["position"] == "outside"
    assert set_and_run(widget, caplog, prediction="outside")["correct"] is True
    for name, value in (("beta", 0.5), ("gamma", 1.0)):  # each slider closes the gate again
        assert set_and_run(widget, caplog, **{name: value})["prediction"] is None
        set_and_run(widget, caplog, prediction="boundary")


def test_multihead_explorer_shows_the_dimension_only_after_a_prediction(caplog, capsys):
    from lsa_helpers.widgets import multihead_explorer

    widget = multihead_explorer(d=2, d_out=2, heads=1, a=1, rho=1)  # where notebook 08 starts
    prediction = next(child for child in widget.children if child.description == "prediction")
    capsys.readouterr()
    facts = set_and_run(widget, caplog)
    printed, ax = capsys.readouterr().out, widget.figure.axes[0]
    assert (facts["certified"], facts["prediction"]) == (5, None)  # computed, not shown
    assert "Predict first" in printed and "exact rank" not in printed and " 5" not in printed
    shown = [bar.get_width() for bar in ax.patches if bar.get_visible()]
    assert shown == [8] and not any(line.get_visible() for line in ax.get_lines())
    set_and_run(widget, caplog, prediction=5)
    assert "certified 5" in capsys.readouterr().out and ax.get_title() == "prediction 5: right"
    shown = [bar.get_width() for bar in ax.patches if bar.get_visible()]
    assert shown == [5, 3]  # the dimension, then the symmetries; their counts in the legend
    [legend] = widget.figure.legends
    assert [text.get_text() for text in legend.get_texts()] == [
        "dimension 5", "symmetries 3", "span 12", "prediction 5"]  # span d' d(d+1)/2 d = 12
    moved = set_and_run(widget, caplog, heads=2)  # a new layer closes the gate again
    assert prediction.value == 0 and moved["prediction"] is None and moved["certified"] == 10
    assert "exact rank" not in capsys.readouterr().out
    assert set_and_run(widget, caplog, prediction=10)["prediction"] == 10
    assert ax.get_title() == "prediction 10: right"


def test_training_explorer_at_the_ends_of_its_sliders(caplog):
    import numpy as np

    from lsa_helpers import Layer, gradient_descent, layer_forward, loss_and_gradient
    from lsa_helpers.landscape import first_step_below
    from lsa_helpers.widgets import training_explorer

    rng = np.random.default_rng(2025)  # a teacher with rk A = 3, rk V = 1, as in notebook 06
    U, W = (np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in range(2))
    A, v, z = U @ np.diag([2.0, 0.8, 0.3]) @ W.T, rng.normal(size=2), rng.normal(size=3)
    teacher = Layer(A, np.eye(3), 1.5 * np.outer(v / np.linalg.norm(v), z / np.linalg.norm(z)))
    X, X_held = rng.normal(size=(2, 64, 3, 3)) / np.sqrt(3)
    Y = layer_forward(teacher, X)
    direction = Layer(rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(2, 3)))
    widget = training_explorer(X, Y, direction, (X_held, layer_forward(teacher, X_held)))

    def alone(scale, a, count):                # the same run, by gradient_descent on its own
        start = Layer(scale * direction.Q[:a], scale * direction.K[:a], scale * direction.V)
        return gradient_descent(start, X[:count], Y[:count], learning_rate=0.03, steps=3000,
                                record_every=10)

    facts = set_and_run(widget, caplog)        # the default: scale 0.01, a = 3, 64 inputs
    assert (facts["scale"], facts["a"], facts["inputs"]) == (0.01, 3, 64)
    run = alone(0.01, 3, 64)
    assert facts["left zero at step"] == first_step_below(run, 0.9) is not None
    assert facts["closest rank-one ratio"] < 0.01 and facts["final training loss"] < 1e-12
    assert facts["final held-out loss"] < 1e-12          # the teacher is learned
    low = set_and_run(widget, caplog, scale=0.001)          # the smallest start never leaves zero
    assert low["left zero at step"] is None and low["final training loss"] > 0.99
    assert first_step_below(alone(0.001, 3, 64), 0.9) is None
    high = set_and_run(widget, caplog, scale=0.3)           # the largest passes far from rank one
    assert high["left zero at step"] <= 20
    assert high["closest rank-one ratio"] > max(0.01, 100 * facts["closest rank-one ratio"])
    narrow = set_and_run(widget, caplog, scale=0.01, a=1)   # a = 1: rk A = 1 at every step
    assert narrow["final s(A)"][1:] == (0.0, 0.0) and narrow["final training loss"] > 0.01
    loss = loss_and_gradient(alone(0.01, 1, 64).final, X, Y)[0] / loss_and_gradient(
        Layer(0.01 * direction.Q[:1], 0.01 * direction.K[:1], 0.01 * direction.V), X, Y)[0]
    assert np.isclose(narrow["final training loss"], loss, rtol=1e-6)
    wide = set_and_run(widget, caplog, a=4)                 # a > d: the teacher is learned too
    assert wide["final training loss"] < 1e-12 and wide["final held-out loss"] < 1e-12
    few = set_and_run(widget, caplog, a=3, inputs=2)        # 2 inputs do not determine the teacher
    assert few["final training loss"] < 0.01 < 0.1 < few["final held-out loss"]
    [headline] = widget.figure.texts                        # the figure states both losses
    assert headline.get_text().endswith(f"training loss {few['final training loss']:.0e}, "
                                        f"held-out {few['final held-out loss']:.0e}")
    assert set_and_run(widget, caplog, a=99)["a"] == 4      # out of range clamps, no error
    assert len(widget.figure.axes) == 2


@pytest.mark.parametrize("change, message", [
    ({"direction": "ragged"}, r"direction must be a layer \(Q, K, V\)"),
    ({"input_counts": (2, 65)}, "input_counts must be integers from 1 to 64"),
    ({"scales": (0.01, -1.0)}, "scales must be positive numbers"),
])
def test_training_explorer_rejects_bad_settings(change, message):
    import numpy as np

    from lsa_helpers import Layer
    from lsa_helpers.widgets import training_explorer

    X, Y = np.ones((64, 2, 3)), np.ones((64, 1, 3))
    direction = Layer(np.ones((2, 2)), np.ones((2, 2)), np.ones((1, 2)))
    if change.pop("direction", None):
        direction = Layer(np.ones((2, 2)), np.ones((3, 2)), np.ones((1, 2)))
    with pytest.raises(ValueError, match=message):
        training_explorer(X, Y, direction, (X, Y), **change)


DEMOS = {  # factory, a walk of moves, the setting it ends at
    "polynomial": (lambda: polynomial_explorer(sizes=True),
                   [{"t": 1}, {"d": 16, "d_out": 8, "a": 16, "t": 64}, {"d": 1}],
                   {"d": 2, "d_out": 1, "a": 1, "t": 2}),
    "polynomial plain": (polynomial_explorer, [{"t": 64}, {"d": 16, "d_out": 1}, {"a": 9}],
                         {"d": 6, "d_out": 4, "a": 2, "t": 8}),
    "fiber": (fiber_explorer, [{"rank_A": 3, "rank_V": 2}, {"rank_A": 0}, {"rank_V": 0}],
              {"rank_A": 1, "rank_V": 1}),
    "dimension": (dimension_explorer, [{"t": 1}, {"d": 8, "a": 9}, {"d_out": 1}, {"d": 1}],
                  {"d": 3, "d_out": 3, "a": 2, "t": 3}),
    "deep": (lambda: deep_explorer(seed=2025),
             [{"depth": 3}, {"d1": 6, "a1": 1}, {"depth": 2, "d0": 3, "d1": 3, "d2": 3, "a2": 2}],
             {"depth": 2, "d0": 4, "d1": 3, "d2": 4, "a1": 2}),
    "boundary": (boundary_explorer, [{"prediction": "inside"}, {"alpha": -2.0},  # a new point
                                     {"prediction": "outside"}, {"prediction": "boundary"},
                                     {"beta": 0.0, "gamma": 0.0}, {"prediction": "inside"}],
                 {"alpha": 0.5, "beta": 0.5, "gamma": 0.0, "prediction": "inside"}),
    "multihead": (multihead_explorer, [{"heads": 5}, {"prediction": 7}, {"prediction": 600},
                                       {"a": 1}, {"d": 1}, {"prediction": 3}],
                  {"d": 4, "heads": 2, "a": 2, "prediction": 10}),
    "training": (lambda: training_explorer(seed=2025, scales=(0.001, 0.3), input_counts=(2, 64),
                                           steps=600),
                 [{"inputs": 2}, {"scale": 0.3}, {"a": 1}], {"scale": 0.001, "a": 2, "inputs": 64}),
    "parameter_split": (parameter_split_explorer, [{"a": 5}, {"d": 5, "a": 6}, {"d_out": 1}],
                        {"d": 3, "d_out": 3, "a": 2}),
    "softmax": (softmax_explorer, [{"reveal": True}, {"depth": 2, "width": 5},  # new x ticks
                                   {"rank": 1}, {"width": 4}, {"reveal": False}, {"rank": 5}],
                {"depth": 1, "width": 3, "rank": 2, "reveal": False}),
}


@pytest.mark.parametrize("name", DEMOS)
def test_a_figure_updated_in_place_is_the_figure_drawn_afresh(name, caplog):
    # the figure is built once and updated by each move, its still layer redrawn only when a move
    # changed it: after every move it is, pixel for pixel, the figure drawn anew from its artists,
    # and after a walk through other settings, the figure of a new demo moved straight to the end
    import matplotlib.pyplot as plt
    import numpy as np

    factory, walk, end = DEMOS[name]
    fresh, walked = factory(), factory()
    facts = set_and_run(fresh, caplog, **end)
    for values in walk:
        set_and_run(walked, caplog, **values)
        if hasattr(walked.figure, "_still_layer"):  # drawn (05 draws only after a prediction)
            assert np.array_equal(pixels(walked), pixels(walked, anew=True)), values
    assert set_and_run(walked, caplog, **end) == facts
    assert np.array_equal(pixels(walked), pixels(fresh))
    assert plt.get_fignums() == []  # the demos' figures live outside pyplot


@pytest.fixture
def shell():
    from IPython.core.displaypub import CapturingDisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.display_pub = CapturingDisplayPublisher()
    yield shell
    InteractiveShell.clear_instance()


def test_a_move_displays_the_figure_at_its_own_size(shell, caplog):
    # what a kernel sends: one PNG per move, of the figure's size in pixels (no tight crop, so
    # nothing depends on a bounding box computed per draw), beside the figure's text repr
    import io

    from PIL import Image

    widget = dimension_explorer()
    shell.display_pub.outputs.clear()
    set_and_run(widget, caplog, a=2)
    [output] = shell.display_pub.outputs
    png = Image.open(io.BytesIO(output["data"]["image/png"]))
    fig = widget.figure
    assert png.size == tuple(round(x) for x in fig.get_size_inches() * fig.dpi) == (1060, 310)
    assert output["data"]["text/plain"] == "<Figure size 1060x310 with 2 Axes>"


@pytest.mark.parametrize("name", DEMOS)
def test_a_demo_reads_from_the_back_of_a_room(name, caplog, capsys):
    # a deck shows the figure at its own size on a 1280 x 720 screen: at most 1150 px wide, every
    # text at 15 pt (21 px) or more; after any move at most four printed lines of at most 90
    # characters (20 px monospace on the slide holds about 95)
    factory, walk, end = DEMOS[name]
    widget = factory()
    fig = widget.figure
    assert fig.get_size_inches()[0] * fig.dpi <= 1150
    for values in [{}, *walk, end]:
        set_and_run(widget, caplog, **values)
        capsys.readouterr()
        widget.update()  # the output of one run, without the terminal's clearing codes
        lines = capsys.readouterr().out.replace("\x1b[2K\r", "").strip("\n").split("\n")
        assert len(lines) <= 4 and max(map(len, lines)) <= 90, lines
        texts = [t for t in fig.findobj(lambda a: hasattr(a, "get_fontsize")) if t.get_text()]
        assert min(t.get_fontsize() for t in texts) >= 15, values
