"""Interactive demos: thin ipywidgets factories over the package's public functions.

Each demo builds its figure once (``demo.figure``, outside pyplot) with a fixed layout and, on
each move, updates it and displays its PNG at the figure's own size.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import numpy as np

from . import _checks
from ._types import ArrayLike
from .architecture import Architecture
from .formulas import formula_dimension, monomials_per_entry, span_dimension
from .function_space import dimension
from .network import layer_forward, multiplication_counts
from .symmetries import FIBER_CASES, fiber_kind, function_distance, rank_one_swap
from .weights import Layer, as_generator, layer_from_attention, random_inputs

if TYPE_CHECKING:
    import ipywidgets
    from matplotlib.figure import Figure

__all__ = [
    "boundary_explorer",
    "deep_explorer",
    "dimension_explorer",
    "fiber_explorer",
    "multihead_explorer",
    "parameter_split_explorer",
    "polynomial_explorer",
    "softmax_explorer",
    "stall_problem",
    "training_explorer",
]


Facts: TypeAlias = dict[str, Any]
"""What a demo's callback returns: the numbers it shows, by name."""


_ROOM_STYLE = {"axes.titley": 1.0, "font.size": 15, "axes.titlesize": 16, "axes.labelsize": 15,
              "xtick.labelsize": 15, "ytick.labelsize": 15, "legend.fontsize": 15}
"""The demos' text, drawn at 100 dpi and shown at its own size: 15 pt is 21 px, legible on a
projector at 1280x720 from the back of a room. Titles sit just above their axes, not placed anew
at each draw (no demo labels an axis on top)."""


def _figure(width: float, height: float, cols: int = 1, **grid: Any) -> tuple[Figure, list[Any]]:
    """A figure drawn by Agg, outside pyplot, in the room style, with ``cols`` axes placed by
    ``grid`` (fixed margins and spacing as figure fractions, ``width_ratios``)."""
    from matplotlib import rc_context
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with rc_context(_ROOM_STYLE):
        fig = Figure(figsize=(width, height))
        FigureCanvasAgg(fig)
        return fig, list(fig.subplots(1, cols, squeeze=False, gridspec_kw=grid)[0])


def _render(fig: Figure, draw: Any, *args: Any) -> None:
    """Update ``fig`` by ``draw(*args)``, draw it and display it (in an IPython shell) as a PNG of
    its own size. The still layer is drawn anew only when ``draw`` changed it (the figure is
    stale)."""
    from IPython import get_ipython
    from IPython.display import display
    from matplotlib import rc_context

    with rc_context(_ROOM_STYLE):
        draw(*args)
    _draw(fig, anew=fig.stale)
    if get_ipython() is not None:
        display({"image/png": _png(fig), "text/plain": repr(fig)}, raw=True)


def _draw(fig: Figure, *, anew: bool) -> None:
    """Draw ``fig`` on its canvas in two layers: the still one (every artist not animated), drawn
    anew and kept, or restored as last kept; then the moving one (the animated artists) over it."""
    from matplotlib import rc_context

    canvas = fig.canvas
    with rc_context(_ROOM_STYLE):
        if anew or not hasattr(fig, "_still_layer"):
            canvas.draw()
            fig._still_layer = canvas.copy_from_bbox(fig.bbox)  # type: ignore[attr-defined]
        else:
            canvas.restore_region(fig._still_layer)  # type: ignore[attr-defined]
        for artist in sorted(fig.findobj(lambda a: a.get_animated()), key=lambda a: a.zorder):
            fig.draw_artist(artist)


def _png(fig: Figure) -> bytes:
    """The figure's pixels as a PNG at compression level 1 (faster than the default 6, for a few
    percent more bytes)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    canvas = cast(FigureCanvasAgg, fig.canvas)
    png = io.BytesIO()
    Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0,
                     1).save(png, format="png", compress_level=1)
    return png.getvalue()


def _interactive(show: Any, fig: Figure, controls: dict[str, Any]) -> ipywidgets.interactive:
    import ipywidgets as w

    demo = w.interactive(show, **controls)
    demo.figure = fig
    return demo


def _sliders(**ranges: tuple[int, int, int]) -> dict[str, ipywidgets.IntSlider]:
    import ipywidgets as w

    return {name: w.IntSlider(value=value, min=low, max=high, description=name,
                              continuous_update=False)
            for name, (low, value, high) in ranges.items()}


def polynomial_explorer(*, d: int = 6, d_out: int = 4, a: int = 2, t: int = 8,
                        sizes: bool = False) -> ipywidgets.interactive:
    """Sliders for ``d, d', a, t``: the cost of both orders against ``t``; with ``sizes``, the size.

    On log-log axes: the multiplications of ``V X (X^T A X)`` and of ``(V X X^T)(A X)`` for
    ``t = 1..64`` (``multiplication_counts``), the tokens where they tie marked, the current ``t``
    as dots with both counts. With ``sizes``, a second panel on a log scale: monomials per output
    entry at ``t``, span dimension and parameters. The other keywords set the sliders' starting
    values; the callback returns the counts and the sizes, drawn or not.
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    sizes = _checks.bool_flag("sizes", sizes)

    ts = np.arange(1, 65)
    powers = 10 ** np.arange(0, 9)
    plain = FuncFormatter(lambda value, _: f"{value:,.0f}")
    fig, axes = _figure(11 if sizes else 6.5, 3.8, 1 + sizes, left=0.1 if sizes else 0.15,
                        right=0.97, bottom=0.15, top=0.9, wspace=0.5)
    ax = axes[0]
    quadratic, = ax.loglog(ts, ts, color="C3", lw=2.5, label="as written: V X (XᵀAX)")
    linear, = ax.loglog(ts, ts, color="C0", lw=2.5, label="re-associated: (V X Xᵀ)(A X)")
    dots, = ax.plot([1, 1], [1, 1], "ko", ms=6, label="t")
    ax.set(xlabel="tokens t (log)", ylabel="multiplications (log)")
    legend = ax.legend(loc="upper left", fontsize=11)
    ties: list[Any] = []
    if sizes:
        bx = axes[1]
        bars = bx.barh(range(3), [1, 1, 1], color=["C2", "C1", "0.6"])
        labels = [bx.text(1, y, "", va="center", fontsize=12) for y in range(3)]
        bx.set_xscale("log")
        bx.invert_yaxis()
    for axis in axes:
        axis.tick_params(labelsize=12)
        axis.xaxis.label.set_size(12)
        axis.yaxis.label.set_size(12)
        for side in (axis.xaxis, axis.yaxis):
            side.set_minor_locator(NullLocator())
    # fixed ticks instead of log locators, no minor ticks, no mathtext: a cheap redraw
    ax.xaxis.set_major_locator(FixedLocator([1, 10]))
    for side in (ax.xaxis, ax.yaxis) + ((bx.xaxis,) if sizes else ()):
        side.set_major_formatter(plain)

    def draw(d: int, d_out: int, a: int, t: int, curves: dict[str, np.ndarray],
             facts: Facts) -> None:
        quadratic.set_ydata(curves["quadratic"])
        linear.set_ydata(curves["linear"])
        costs = curves["quadratic"][t - 1], curves["linear"][t - 1]
        dots.set_data([t, t], costs)
        legend.get_texts()[2].set_text(f"t = {t}: {costs[0]:,} and {costs[1]:,}")
        for artist in ties:
            artist.remove()
        ties[:] = [artist for s in facts["tokens where both orders cost the same"] for artist in (
            ax.axvline(s, color="0.4", ls="--", lw=1),
            ax.annotate(f" tie at t = {s}", (s, curves["linear"][s - 1]),
                        xytext=(4, -22 if s > 2 else 10), textcoords="offset points",
                        fontsize=12, color="0.25"))]
        ax.set_title(f"cost of one layer, d = {d}, d' = {d_out}, a = {a}")
        ax.relim()
        ax.autoscale_view()
        low, high = ax.get_ylim()
        ax.yaxis.set_major_locator(FixedLocator(powers[(powers >= low) & (powers <= high)]))
        if sizes:
            values = [facts["monomials per output entry"],
                      facts["span dimension of the neuromanifold"], facts["parameters"]]
            bx.set_yticks(range(3), [f"monomials per\noutput entry at t = {t}",
                                     "span dimension", "parameters"])
            for bar, label, v in zip(bars, labels, values):
                bar.set_width(v)
                label.set_x(v)
                label.set_text(f" {v:,}")
            bx.set_xlim(0.5, 20 * max(values))  # from 0.5: a value of 1 still shows a bar
            bx.set_title("size of the layer" + (" (t = 1: degenerate)" if t == 1 else ""))
            bar_ticks = powers[powers <= 20 * max(values)]
            bx.xaxis.set_major_locator(FixedLocator(bar_ticks[::-(-len(bar_ticks) // 5)]))

    def show(d: int, d_out: int, a: int, t: int) -> Facts:
        costs = multiplication_counts(d, d_out, a, t)
        curves = multiplication_counts(d, d_out, a, ts)  # plain arithmetic: all t in one call
        facts: Facts = {
            "monomials per output entry": monomials_per_entry(d, t),
            "output entries": d_out * t,
            "span dimension of the neuromanifold": span_dimension(d, d_out, t),
            "parameters": Architecture((d, d_out), (a,), tokens=t).parameter_count,
            "multiplications, V X (X^T A X)": costs["quadratic"],
            "multiplications, (V X X^T)(A X)": costs["linear"],
            "tokens where both orders cost the same":
                [int(s) for s in ts[curves["quadratic"] == curves["linear"]]],
        }
        _render(fig, draw, d, d_out, a, t, curves, facts)
        return facts

    sliders = _sliders(d=(1, d, 16), d_out=(1, d_out, 8), a=(1, a, 16), t=(1, t, 64))
    return _interactive(show, fig, sliders)


def _random_of_rank(rng: np.random.Generator, rows: int, cols: int, rank: int) -> np.ndarray:
    return rng.normal(size=(rows, rank)) @ rng.normal(size=(rank, cols))


def fiber_explorer(*, d: int = 3, d_out: int = 2, seed: int = 0) -> ipywidgets.interactive:
    """Sliders for ``rk A`` and ``rk V``: which case of the fiber theorem, checked on the function.

    Shows how far three moves take ``phi``: the scaling ``(2A, V/2)``, the rank-one swap (when it
    exists) and a random perturbation of ``A`` with entries of size 1e-3 (its size relative to
    ``A`` printed); relative to ``phi``, or, when ``phi = 0``, the largest output of the moved
    layer on random inputs.
    """
    seed = _checks.seed("seed", seed)
    arch = Architecture((d, d_out), (d,))  # checks d and d_out
    zero, swap, _ = FIBER_CASES
    stories = dict(zip(FIBER_CASES, (
        "phi = 0, the fiber is {A = 0} u {V = 0}, far more than a curve",
        "two curves, exchanged by the swap (k q^T, v z^T) -> (z q^T, v k^T)",
        "the fiber is the single curve (lambda A, V / lambda)")))

    def show(rank_A: int, rank_V: int) -> Facts:
        rng = as_generator(seed)
        A = _random_of_rank(rng, d, d, rank_A)
        V = _random_of_rank(rng, d_out, d, rank_V)
        layer = layer_from_attention(A, V)
        case = fiber_kind(layer)
        nudge = 1e-3 * rng.normal(size=A.shape)
        moves = {"scaling (2A, V/2)": layer_from_attention(2 * A, V / 2),
                 "random nudge 1e-3": layer_from_attention(A + nudge, V)}
        if case == swap:
            moves["rank-one swap"] = rank_one_swap(layer)
        if case == zero:  # no relative change from 0: the size of the moved function instead
            X = random_inputs(arch, 8, seed)
            distances = {name: float(np.abs(layer_forward(other, X)).max())
                         for name, other in moves.items()}
        else:
            distances = {name: function_distance(arch, [layer], [other], rng=seed)
                         for name, other in moves.items()}
        print(f"rk A = {rank_A}, rk V = {rank_V}: {stories[case]}")
        change = ("largest output of phi after the move" if case == zero
                  else "relative change of phi")
        size = (f"{100 * np.linalg.norm(nudge) / np.linalg.norm(A):.1g} % of |A| = "
                f"{np.linalg.norm(A):.2f}" if rank_A else "A was 0")
        for name, value in distances.items():
            verdict = "< 1e-10, the same function" if value < 1e-10 else f"{value:.0e}"
            note = f" (the nudge: {size})" if name.startswith("random nudge") else ""
            print(f"{name:>20}: {change} {verdict}{note}")
        _render(fig, draw, rank_A, rank_V, case, change, distances)
        return {"case": case, **distances}

    # Log bars from a floor below rounding (1e-18), so that an exact 0 still shows a stub;
    # green: the same function (< 1e-10), red: a different one. Each bar says its value.
    floor = 1e-18
    fig, (ax,) = _figure(7.5, 2.6)
    bars = ax.barh(range(3), [1, 1, 1], left=floor)
    labels = [ax.text(1, y, "", va="center", fontsize=11) for y in range(3)]
    ax.set_xscale("log")
    ax.set_xlim(floor, 1e3)
    ax.axvline(1e-10, color="0.3", lw=1, ls="--")
    legend = ax.text(1e-10, 0, "same function | changed", ha="center", va="center", fontsize=10)
    ax.tick_params(labelsize=11)

    def draw(rank_A: int, rank_V: int, case: str, change: str,
             distances: dict[str, float]) -> None:
        height = 0.8 + 0.6 * len(distances)  # margins in inches: the same for 2 or 3 bars
        fig.set_size_inches(7.5, height)
        fig.subplots_adjust(left=1.75 / 7.5, right=1 - 0.3 / 7.5, bottom=0.6 / height,
                            top=1 - 0.35 / height)
        names, values = list(distances), list(distances.values())
        for y, (bar, label) in enumerate(zip(bars, labels)):
            bar.set_visible(y < len(values))
            label.set_visible(y < len(values))
            if y < len(values):
                v = values[y]
                bar.set_width(max(v, 3 * floor) - floor)
                bar.set_color("C2" if v < 1e-10 else "C3")
                label.set_x(max(v, 3 * floor))
                label.set_text(" exactly 0" if v == 0 else f" {v:.0e}")
        ax.set_yticks(range(len(names)), names)
        legend.set_y(len(names) - 0.1)
        ax.set_ylim(len(names) + 0.2, -0.6)  # top to bottom, with a line for the legend text
        ax.set_xlabel(f"{change} (log scale)" + (", phi was 0" if case == zero else ""))
        ax.set_title(f"rk A = {rank_A}, rk V = {rank_V}: case '{case}'")

    return _interactive(show, fig, _sliders(rank_A=(0, 1, d), rank_V=(0, 1, min(d, d_out))))


def dimension_explorer(*, seed: int = 0) -> ipywidgets.interactive:
    """Sliders for ``d, d', a, t``: parameters against dimension, and the two bounds that prove it.

    Left: for the current ``d, d', t``, the parameter count and the paper's formula for
    ``a = 1, ..., 9`` (the fiber is the gap between them), with the current ``a`` marked by its
    exact rank. Right: at the current setting, the parameters, the upper bound (parameters minus
    the rank of the known fiber directions), the exact rank mod p (the lower bound), the float
    rank and the formula. Prints one line with the formula and the exact rank, and a message when
    there is no formula or the two bounds do not meet. Returns the facts it drew.
    """
    seed = _checks.seed("seed", seed)
    ranks = np.arange(1, 10)

    def show(d: int, d_out: int, a: int, t: int) -> Facts:
        arch = Architecture((d, d_out), (a,), tokens=t)
        formula = formula_dimension(arch)
        exact = dimension(arch, rng=seed)
        floating = dimension(arch, method="float", rng=seed).float_reading
        assert floating is not None  # method="float" reads a float rank
        facts: Facts = {"parameters": arch.parameter_count, "formula": formula.value,
                 "float rank": floating.rank, "gap clear": floating.is_clear,
                 "exact rank": exact.rank, "upper bound": exact.upper_bound,
                 "certified": exact.certified_dimension,
                 "fiber": None if exact.certified_dimension is None
                 else arch.parameter_count - exact.certified_dimension}
        print(f"{arch}:  {arch.parameter_count} parameters   "
              f"formula [{formula.status}] {formula.value}   "
              f"float rank {floating.rank} (gap {floating.gap:.1e}, {floating.verdict})   "
              f"exact rank {exact.rank}   certified {exact.certified_dimension}")
        if formula.value is None:
            print(f"no formula: {formula.reason}")
        if exact.certified_dimension is None:
            print(f"the bounds do not meet: {exact.rank} <= dim <= {exact.upper_bound}")
        _render(fig, draw, arch, a, formula, exact, floating)
        return facts

    fig, (ax, bx) = _figure(11, 3.8, 2, left=0.065, right=0.985, bottom=0.14, top=0.9,
                            wspace=0.4)

    def draw(arch: Architecture, a: int, formula: Any, exact: Any, floating: Any) -> None:
        (d, d_out), t = arch.widths, arch.tokens
        sweep = [Architecture((d, d_out), (int(r),), tokens=t) for r in ranks]
        params = [s.parameter_count for s in sweep]
        dims = [formula_dimension(s).value for s in sweep]
        ax.clear()
        bx.clear()
        ax.plot(ranks, params, "s-", color="0.5", label="parameters")
        if dims[0] is not None:
            ax.plot(ranks, dims, "o-", color="C1", lw=2, label="dimension (formula)")
            ax.fill_between(ranks, dims, params, color="C1", alpha=0.12, label="fiber")
        else:
            ax.text(1, 0.62 * max(params), "t = 1: no formula", color="C3",  # above the curve
                    backgroundcolor="white")
        ax.axvline(a, color="0.7", lw=1)
        ax.plot([a], [exact.rank], "*", color="C2", ms=16, label=f"exact rank at a = {a}")
        ax.set(xlabel="attention rank a", ylabel="count", ylim=(0, 1.1 * max(params)),
               title=f"d = {d}, d' = {d_out}, t = {t}: parameters against dimension")
        ax.legend(loc="upper left", fontsize=9)
        labels = ["parameters", "upper bound", "exact rank\n(lower bound)", "float rank",
                  f"formula [{formula.status}]"]
        values = [arch.parameter_count, exact.upper_bound, exact.rank, floating.rank,
                  formula.value or 0]
        bx.barh(labels, values, color=["0.7", "C3", "C2", "C0", "C1"])
        for y, v in enumerate(values):
            bx.text(v, y, f" {v}" if y < 4 or formula.value is not None else " none", va="center")
        bx.set_xlim(0, 1.2 * arch.parameter_count)
        bx.invert_yaxis()
        verdict = (f"certified {exact.certified_dimension}" if exact.certified_dimension
                   is not None else "not certified")
        bx.set_title(f"a = {a}: {verdict}")

    return _interactive(show, fig, _sliders(d=(1, 3, 8), d_out=(1, 3, 6), a=(1, 3, 9),
                                            t=(1, 3, 4)))


def softmax_explorer(*, seed: int = 0, reveal: bool = False) -> ipywidgets.interactive:
    """Sliders for depth, width and rank: predict the softmax dimension, then tick ``reveal``.

    Equal widths ``(w, ..., w)`` and ranks ``(a, ..., a)``, ``t = 3``. Left: the parameter count,
    the certified lightning dimension and (revealed) the float rank of the softmax network. Right:
    the singular values of both Jacobians (same weights, same inputs, rows and columns scaled as
    in ``float_rank``), whose cliffs sit at the two dimensions. The difference is ``l``: the
    paper's theorem for one layer; for these equal widths what its conjecture (generic
    identifiability in the virtual weights) gives for deep networks. The returned facts do not
    depend on ``reveal``; each setting is computed once (seeded, so the same answer).
    """
    from functools import cache
    from math import ceil

    import ipywidgets as w
    from matplotlib import rc_context
    from matplotlib.markers import TICKDOWN
    from matplotlib.ticker import FixedFormatter, FixedLocator, MaxNLocator, NullLocator
    from matplotlib.transforms import ScaledTranslation

    from .differential import jacobian
    from .rank import float_rank, scaled_singular_values
    from .weights import random_weights
    from .workers import one_blas_thread

    seed = _checks.seed("seed", seed)
    reveal = _checks.bool_flag("reveal", reveal)

    @cache
    def measure(depth: int, width: int, rank: int) -> tuple[Facts, str, list[np.ndarray], float]:
        """The facts of one setting, the softmax rank's verdict, the scaled singular values of
        both Jacobians and the cut."""
        lightning = Architecture((width,) * (depth + 1), (rank,) * depth)
        softmax = Architecture(lightning.widths, lightning.ranks, normalization="softmax")
        with one_blas_thread():  # small SVDs: threads only slow them down, manyfold under load
            certified = dimension(lightning, rng=seed).certified_dimension
            rng = as_generator(seed)
            weights = random_weights(softmax, rng)           # the same weights for both networks
            inputs = random_inputs(softmax, 3 * ceil(softmax.parameter_count / (width * 3)), rng)
            J = [jacobian(arch, weights, inputs) for arch in (lightning, softmax)]
            found, formula = float_rank(J[1]), formula_dimension(softmax)
            facts: Facts = {
                "parameters": lightning.parameter_count, "lightning": certified,
                "softmax": found.rank, "gap clear": found.is_clear,
                "difference": None if certified is None else found.rank - certified,
                "formula": formula.value, "status": formula.status,
                "lightning float": float_rank(J[0]).rank}
            return facts, found.verdict, [scaled_singular_values(j) for j in J], found.tolerance

    def show(depth: int, width: int, rank: int, reveal: bool) -> Facts:
        facts, verdict, spectra, cut = measure(depth, width, rank)
        widths, ranks = ", ".join([str(width)] * (depth + 1)), ", ".join([str(rank)] * depth)
        print(f"widths ({widths}), ranks ({ranks}), t = 3: {facts['parameters']} parameters"
              + ("; a > d adds parameters only" if rank > width else ""))
        print(f"lightning {facts['lightning']}, certified by exact bounds; " + (
            f"softmax {facts['softmax']}, float rank (gap {verdict})" if reveal
            else "softmax: ?  (predict it, then tick 'reveal')"))
        if reveal:
            difference = facts["difference"]
            relation = "= l, the number of layers" if difference == depth else "!= l"
            print(f"difference: {difference} {relation}; "
                  f"formula lightning + l [{facts['status']}]: {facts['formula']}")
        _render(fig, draw, facts, spectra, cut, reveal)
        return dict(facts)

    # Both x axes span a fixed 0..1, the counts drawn as fractions of the parameter count (bars)
    # and of one more than it (singular values), the spectrum's tick labels in the moving layer:
    # a new architecture changes no limit, so no move redraws the still layer.
    fig, (bars, spec) = _figure(10.5, 2.8, 2, width_ratios=[1, 1.7], left=0.135, right=0.985,
                                bottom=0.22, top=0.88, wspace=0.12)
    with rc_context(_ROOM_STYLE):
        blocks = bars.barh(["parameters", "lightning", "softmax"], [1, 1, 1],
                           color=["0.7", "C0", "C1"])
        values = [bars.text(0, y, "", va="center", fontsize=18) for y in range(3)]
        bars.set(xlim=(0, 1.25), xticks=[])  # the values are written on the bars
        bars.invert_yaxis()
        dots = [spec.semilogy([], [], "o", ms=4, color=color, label=name)[0]
                for name, color in (("lightning", "C0"), ("softmax", "C1"))]
        cut_line = spec.axhline(1, color="0.4", ls="--", lw=1, label="cut")
        spec.set(xlim=(0, 1), xticks=[], ylim=(1e-18, 3), xlabel="singular value number",
                 title="scaled singular values, a cliff per dimension")
        spec.xaxis.set_label_coords(0.5, -0.2)
        # fixed ticks, plain labels (no mathtext)
        spec.yaxis.set_major_locator(FixedLocator([1e-15, 1e-10, 1e-5, 1]))
        spec.yaxis.set_major_formatter(FixedFormatter(["1e-15", "1e-10", "1e-5", "1"]))
        spec.yaxis.set_minor_locator(NullLocator())
        spec.legend(loc="center left", handlelength=1, borderaxespad=0.3)
        below = spec.get_xaxis_transform()  # x in data, y in axes fractions
        ticks, = spec.plot([], [], "k", marker=TICKDOWN, ls="", ms=3.5, transform=below,
                           clip_on=False)
        labels = [spec.text(0, 0, "", ha="center", va="top", transform=below + ScaledTranslation(
            0, -7 / 72, fig.dpi_scale_trans)) for _ in range(6)]
    for artist in [*blocks, *values, bars.title, *dots, cut_line, ticks, *labels]:
        artist.set_animated(True)
    ticker = MaxNLocator(nbins=5, integer=True)

    def draw(facts: Facts, spectra: list[np.ndarray], cut: float, reveal: bool) -> None:
        count = facts["parameters"]
        shown = [count, facts["lightning"] or 0, facts["softmax"] if reveal else 0]
        for y, (block, value, v) in enumerate(zip(blocks, values, shown)):
            block.set_width(v / count)
            value.set_x(v / count)
            value.set_text(f" {v}" if reveal or y < 2 else " ?")
        bars.title.set_text(f"softmax - lightning = {facts['difference'] if reveal else '?'}")
        for dot, s in zip(dots, spectra):
            dot.set_data(np.arange(1, s.size + 1) / (count + 1), np.maximum(s, 1e-18))
        dots[1].set_visible(reveal)
        cut_line.set_ydata([cut, cut])
        numbers = [n for n in ticker.tick_values(0, count + 1) if n <= count + 1]
        ticks.set_data(np.divide(numbers, count + 1), np.zeros(len(numbers)))
        for label, n in zip(labels, numbers + [None] * len(labels)):
            label.set_visible(n is not None)
            if n is not None:
                label.set_x(n / (count + 1))
                label.set_text(f"{n:.0f}")

    return _interactive(show, fig, {**_sliders(depth=(1, 1, 2), width=(2, 3, 5), rank=(1, 2, 5)),
                                    "reveal": w.Checkbox(value=reveal, description="reveal")})


def deep_explorer(*, seed: int = 0, certify_up_to: int = 120) -> ipywidgets.interactive:
    """Sliders for depth, widths ``d_0..d_3`` and ranks ``a_1..a_3`` of a deep lightning network.

    Draws the parameter count as dimension + symmetry orbit + other fiber directions: the
    formula (or, where none applies, the certified dimension), the rank of the symmetry tangents
    at a random point, and the rest of ``parameters - dimension``. Up to ``certify_up_to``
    parameters it also certifies the dimension (:func:`~lsa_helpers.function_space.dimension`);
    beyond, formula only. The sliders of widths and ranks past the depth do nothing, so they are
    disabled (and enabled again when the depth grows); ``facts["disabled"]`` lists them.
    """
    from .rank import PRIME, exact_rank
    from .symmetries import symmetry_tangents
    from .weights import random_weights

    seed = _checks.seed("seed", seed)
    certify_up_to = _checks.nonnegative_int("certify_up_to", certify_up_to)
    sliders = _sliders(depth=(1, 2, 3), d0=(1, 4, 6), d1=(1, 3, 6), d2=(1, 4, 6), d3=(1, 3, 6),
                       a1=(1, 2, 6), a2=(1, 2, 6), a3=(1, 2, 6))

    def show(depth: int, d0: int, d1: int, d2: int, d3: int, a1: int, a2: int, a3: int) -> Facts:
        unused = [f"d{i}" for i in range(depth + 1, 4)] + [f"a{i}" for i in range(depth + 1, 4)]
        for name, slider in sliders.items():
            slider.disabled = name in unused
        arch = Architecture((d0, d1, d2, d3)[: depth + 1], (a1, a2, a3)[:depth])
        formula = formula_dimension(arch)
        weights = random_weights(arch, as_generator(seed), modulus=PRIME)
        orbit = exact_rank(symmetry_tangents(arch, weights, modulus=PRIME), PRIME)
        bounds = dimension(arch, rng=seed) if arch.parameter_count <= certify_up_to else None
        certified = bounds.certified_dimension if bounds else None
        dim = formula.value if formula.value is not None else certified
        facts: Facts = {"widths": arch.widths, "ranks": arch.ranks,
                        "parameters": arch.parameter_count,
                 "formula": formula.value, "status": formula.status, "symmetry orbit": orbit,
                 "lower": bounds.rank if bounds else None,
                 "upper": bounds.upper_bound if bounds else None,
                 "certified": certified, "dimension": dim,
                 "other fiber": None if dim is None else arch.parameter_count - dim - orbit,
                 "disabled": unused}
        print(f"widths {arch.widths}, ranks {arch.ranks}: {arch.layers} layer(s), degree "
              f"{arch.degree}, {arch.parameter_count} parameters")
        print(f"  formula [{formula.status}]: {formula.value}" +
              ("" if formula.value is not None else f"  ({formula.reason})"))
        if bounds is None:
            print(f"  certification skipped above {certify_up_to} parameters: formula only")
        elif certified is not None:
            print(f"  certified: lower bound {bounds.rank} = upper bound {bounds.upper_bound}")
        else:
            print(f"  not certified: {bounds.rank} <= dimension <= {bounds.upper_bound}")
        if dim is None:
            print("  no dimension known for this setting")
        else:
            print(f"  parameters - dimension = {arch.parameter_count - dim}: symmetry orbit {orbit}"
                  f" + other fiber directions {facts['other fiber']}")
        parts = ([("dimension", dim, "C0"), ("symmetry orbit", orbit, "0.6"),
                  ("other fiber directions", facts["other fiber"], "C3")] if dim is not None
                 else [("symmetry orbit", orbit, "0.6")])
        _render(fig, draw, arch, dim, parts)
        return facts

    fig, (ax,) = _figure(8, 2.3, bottom=0.42, top=0.84, left=0.03, right=0.97)

    def draw(arch: Architecture, dim: int | None, parts: list[tuple[str, int, str]]) -> None:
        ax.clear()
        left = 0
        for label, value, color in parts:
            ax.barh([0], [value], left=left, height=0.6, color=color, label=f"{label}: {value}")
            if value:
                ax.text(left + value / 2, 0, str(value), ha="center", va="center", fontsize=12,
                        color="w" if color != "0.6" else "k")
            left += value
        ax.axvline(arch.parameter_count, color="k", lw=1)
        ax.text(arch.parameter_count, 0.45, f"all {arch.parameter_count} parameters ", ha="right",
                va="top", fontsize=9)
        split = (" = " + " + ".join(str(v) for _, v, _ in parts)) if dim is not None else (
            ": no dimension known")
        ax.set(xlim=(0, 1.02 * arch.parameter_count), ylim=(-0.5, 0.5), yticks=[])
        ax.set_title(f"widths {arch.widths}, ranks {arch.ranks}: {arch.parameter_count} parameters"
                     f"{split}", fontsize=11)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=3, fontsize=10,
                  frameon=False)

    return _interactive(show, fig, sliders)


def boundary_explorer() -> ipywidgets.interactive:
    """Sliders for ``(alpha, beta, gamma)`` and a prediction: is
    ``S = [[alpha + beta, gamma], [gamma, alpha - beta]]`` some ``sym(z k^T)`` (``d = 2``)?

    The student first predicts ``inside`` (attained, ``z`` not parallel to ``k``), ``boundary``
    (the cone ``beta^2 + gamma^2 = alpha^2``, ``z || k``) or ``outside`` (not attained); the verdict
    and the picture (the ``(beta, gamma)``-plane at height ``alpha``, a meridian plane and the
    verdict's numbers) appear only after the prediction. Moving a slider clears the prediction,
    so every new point is predicted first. The result holds the verdict whether or not a
    prediction was made.
    """
    import ipywidgets as w
    from matplotlib import rc_context
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from .identify import factor_quadric
    from .singularities import SLICE_POSITIONS, quadratic_factor, slice_matrix, slice_position

    def rounded(x: float, digits: int) -> float:
        return round(float(x), digits) + 0.0  # no "-0.00"

    inside, boundary, outside = SLICE_POSITIONS
    colors: dict[str, str] = dict(zip(SLICE_POSITIONS, ("C2", "C1", "C3")))
    names: dict[str, str] = dict(zip(SLICE_POSITIONS, ("inside M", "on the boundary",
                                                       "outside M")))

    def show(alpha: float, beta: float, gamma: float, prediction: str) -> Facts:
        S = slice_matrix(alpha, beta, gamma)
        excess = beta**2 + gamma**2 - alpha**2
        position = slice_position(alpha, beta, gamma)
        facts: Facts = {"position": position, "det S": rounded(-excess, 6), "reproduced": None,
                 "cos": None, "prediction": prediction or None,
                 "correct": (prediction == position) if prediction else None}
        if position != outside and S.any():
            z, k = factor_quadric(S)
            facts["reproduced"] = bool(np.allclose(quadratic_factor(z, k), S, rtol=0,
                                                   atol=1e-9 * np.abs(S).max()))
            facts["cos"] = rounded(abs(z @ k) / (np.linalg.norm(z) * np.linalg.norm(k)), 3)
        rows = "], [".join(", ".join(f"{rounded(x, 2):+.2f}" for x in row) for row in S)
        if not prediction:
            print(f"S = [[{rows}]]")
            print("Predict first: is S = sym(z k^T) for real z, k? Inside M, boundary, "
                  "outside M?")
            return facts
        verdict = "right" if facts["correct"] else f"not quite, it is {position}"
        print(f"S = [[{rows}]]; prediction {prediction}: {verdict}")
        excess_text = f"-det S = {rounded(excess, 3):+.3f}"
        if not S.any():
            print("S = 0: the zero function, a boundary point")
        elif position == outside:
            print(f"{excess_text} < 0: x^T S x is {'positive' if alpha > 0 else 'negative'} "
                  "definite, no product (z . x)(k . x)")
        elif position == boundary:
            print(f"{excess_text}: z || k, phi(X) = ||X^T k||^2 v q^T X; factor_quadric "
                  f"reproduces S: {facts['reproduced']}")
        else:
            print(f"{excess_text} > 0: factor_quadric finds z, k with sym(z k^T) = S: "
                  f"{facts['reproduced']}")
        _render(fig, draw, alpha, beta, gamma, position, facts, excess_text)
        return facts

    fig, (left, right) = _figure(10.5, 2.8, 2, width_ratios=[2, 1], left=0.065, right=0.47,
                                 bottom=0.22, top=0.88, wspace=0.35)
    theta = np.linspace(0, 2 * np.pi, 200)
    r, s = np.linspace(0, 3, 50), np.linspace(-3, 3, 100)
    with rc_context(_ROOM_STYLE):
        # plain Unicode labels, 3 ticks an axis, fixed limits: a move redraws the moving layer only
        disc, = left.fill(theta, theta, color="C3", alpha=0.15, lw=0)
        cone, = left.plot(theta, theta, "k", lw=1.2)
        hyperboloid, = left.plot(theta, theta, "k--", lw=0.8)
        point, = left.plot([0], [0], "o", ms=10)
        left.set(xlim=(-3, 3), ylim=(-3, 3), aspect="equal", xlabel="β", ylabel="γ",
                 xticks=[-2, 0, 2], yticks=[-2, 0, 2])
        right.fill_between(r, r, 3, color="C3", alpha=0.15, lw=0)
        right.fill_between(r, -3, -r, color="C3", alpha=0.15, lw=0)
        right.plot(r, r, "k", r, -r, "k", lw=1.2)
        right.plot(np.sqrt(1 + s**2), s, "k--", lw=0.8)
        meridian_point, = right.plot([0], [0], "o", ms=10)
        right.set(xlim=(0, 3), ylim=(-3, 3), aspect="equal", xlabel="√(β² + γ²)", ylabel="α",
                  xticks=[0, 2], yticks=[-2, 0, 2], title="meridian")
        lines = [fig.text(0.56, y, "", fontsize=size, weight=weight, va="top")
                 for y, size, weight in ((0.95, 20, "bold"), (0.73, 16, "normal"),
                                         (0.55, 16, "normal"))]
        fig.legend(handles=[Line2D([], [], color="k", lw=1.2, label="cone det S = 0"),
                            Line2D([], [], color="k", ls="--", lw=0.8, label="det S = −1"),
                            Patch(color="C3", alpha=0.15, label="not attained")],
                   loc="lower left", bbox_to_anchor=(0.55, 0), frameon=False, ncols=2,
                   handlelength=1.5, columnspacing=1)
    for artist in (disc, cone, hyperboloid, point, meridian_point, left.title, *lines):
        artist.set_animated(True)

    def draw(alpha: float, beta: float, gamma: float, position: str, facts: Facts,
             excess_text: str) -> None:
        a, rho = abs(alpha), np.sqrt(1 + alpha**2)
        disc.set_xy(np.column_stack([a * np.cos(theta), a * np.sin(theta)]))
        cone.set_data(a * np.cos(theta), a * np.sin(theta))
        hyperboloid.set_data(rho * np.cos(theta), rho * np.sin(theta))
        point.set_data([beta], [gamma])
        meridian_point.set_data([np.hypot(beta, gamma)], [alpha])
        for dot in (point, meridian_point, lines[0]):
            dot.set_color(colors[position])
        left.title.set_text(f"plane α = {rounded(alpha, 2):.2f}")
        lines[0].set_text(names[position] + (", as predicted" if facts["correct"] else
                                             f", not {names[facts['prediction']]}"))
        lines[1].set_text(excess_text.replace("-det", "−det").replace("= -", "= −"))
        lines[2].set_text("S definite: not attained" if position == outside
                          else "S = 0" if facts["cos"] is None
                          else f"|cos ∠(z, k)| = {facts['cos']:.3f}")

    sliders = {name: w.FloatSlider(value=value, min=-2.0, max=2.0, step=0.05, description=name,
                                   continuous_update=False)
               for name, value in (("alpha", 0.5), ("beta", 1.0), ("gamma", 0.0))}
    sliders["prediction"] = w.ToggleButtons(
        options=[("?", ""), ("inside M", inside), ("boundary", boundary),
                 ("outside M", outside)], value="", description="prediction",
        layout=w.Layout(display="flex", align_items="center"))  # label and buttons on one row

    def ask_again(_: object) -> None:
        sliders["prediction"].value = ""

    for name in ("alpha", "beta", "gamma"):  # observed before the redraw: no stale verdict flashes
        sliders[name].observe(ask_again, names="value")
    return _interactive(show, fig, sliders)


def multihead_explorer(*, seed: int = 0, certify_up_to: int = 300, d: int = 4, d_out: int = 4,
                       heads: int = 2, a: int = 2, rho: int = 2) -> ipywidgets.interactive:
    """Sliders for ``d, d', heads, a, rho`` and a ``prediction``: a multi-head layer's dimension.

    ``d, d_out, heads, a, rho`` (each 1 to 5) set where the sliders start.

    Every head has attention rank ``a`` and value rank ``rho``. Until a prediction of the
    dimension is typed, only the parameter count shows, as a white bar; then the picture splits it
    into the exact rank (the dimension when certified), the known fiber directions (``GL_a``,
    ``GL_rho`` and one scaling per head, then the head-mixing pairs), the part the span of
    one-layer functions cuts off, and any remainder the count does not explain, with the
    prediction as a dashed line.
    Moving a slider clears the prediction, so every new layer is predicted first. Up to
    ``certify_up_to`` parameters the dimension is certified
    (:func:`~lsa_helpers.multihead.multihead_dimension`); beyond, a message and the counts only.
    The result holds every count whether or not a prediction was made.
    """
    from functools import lru_cache

    import ipywidgets as w

    from .multihead import HeadsDimension, MultiHead, multihead_dimension

    @lru_cache(maxsize=64)
    def certify(layer: MultiHead) -> HeadsDimension:  # a move that clears the prediction draws
        # twice: certify once
        return multihead_dimension(layer, rng=seed)

    def show(d: int, d_out: int, heads: int, a: int, rho: int, prediction: int = 0) -> Facts:
        layer = MultiHead(d, d_out, (a,) * heads, (rho,) * heads)
        params, sym = layer.parameter_count, layer.symmetry_dimension
        pairs = len(layer.mixing_pairs)
        expected, span = layer.expected_dimension, layer.span_dimension
        found = certify(layer) if params <= certify_up_to else None
        rank = found.rank if found else None
        facts: Facts = {"parameters": params, "GL_a, GL_rho and scalings": sym,
                        "mixing pairs": pairs,
                 "span": span, "expected": expected, "exact rank": rank,
                 "certified": found.certified_dimension if found else None,
                 "prediction": prediction or None}
        if not prediction:
            print(f"{layer}:  {params} parameters\n  Predict first: type the dimension you expect "
                  "in 'prediction'; the certified dimension and the split appear then.")
        else:
            print(f"{layer}:  {params} parameters   symmetries {sym}   mixing pairs {pairs}   "
                  f"span {span}   expected {expected}   exact rank {rank}   "
                  f"certified {facts['certified']}")
        if found is None:
            print(f"  {params} parameters: too many to certify in one move (at most "
                  f"{certify_up_to}); the counts only")
        shown = expected if rank is None else rank
        parts = [(params, "w", "parameters")]  # a white bar: the split only after a prediction
        if prediction:
            parts = [(shown, "C2", "dimension" if rank is not None else "expected count"),
                     (sym, "C0", "GL_a, GL_rho, scalings"), (pairs, "C4", "head mixing"),
                     (params - sym - pairs - expected, "0.75", "beyond the span"),
                     (expected - shown, "C3", "not explained")]
        verdict = ("enter a prediction first" if not prediction else
                   f"prediction {prediction}: right" if prediction == shown else
                   f"prediction {prediction}: off by {abs(prediction - shown)}")
        _render(fig, draw, params, span, heads, prediction, verdict, parts)
        return facts

    fig, (ax,) = _figure(7.5, 2.6, left=0.03, right=0.97, bottom=0.42, top=0.88)

    def draw(params: int, span: int, heads: int, prediction: int, verdict: str,
             parts: list[tuple[int, str, str]]) -> None:
        ax.clear()
        for legend in fig.legends:
            legend.remove()
        left = 0
        for width, color, label in parts:
            if width > 0:
                ax.barh([0], [width], left=left, color=color, edgecolor="k", linewidth=0.6,
                        label=f"{label} {width}")
                left += width
        if prediction:
            ax.axvline(span, color="k", ls=":", label=f"span {span}")
            ax.axvline(prediction, color="C1", ls="--", lw=2.5,
                       label=f"your prediction {prediction}")
        ax.set(yticks=[], xlim=(0, 1.05 * max(params, span if prediction else 0, prediction)),
               xlabel=f"the {params} parameters of {heads} head(s)", title=verdict)
        fig.legend(loc="lower center", ncol=3, fontsize=10, frameon=False)

    seed = _checks.seed("seed", seed)
    certify_up_to = _checks.nonnegative_int("certify_up_to", certify_up_to)
    start = {name: _checks.integer(name, value, 1, maximum=5) for name, value in
             {"d": d, "d_out": d_out, "heads": heads, "a": a, "rho": rho}.items()}
    sliders = _sliders(**{name: (1, value, 5) for name, value in start.items()})
    sliders["prediction"] = w.BoundedIntText(value=0, min=0, max=600, description="prediction")

    def ask_again(_: object) -> None:
        sliders["prediction"].value = 0

    for name in start:  # observed before the redraw: no stale answer flashes
        sliders[name].observe(ask_again, names="value")
    return _interactive(show, fig, sliders)


def parameter_split_explorer(*, seed: int = 0) -> ipywidgets.interactive:
    """Sliders for ``d, d', a`` of one layer: its parameters split into dimension and fiber.

    For each attention rank ``r = 1, ..., 6`` at the chosen ``d, d'`` one bar of the
    ``2rd + dd'`` parameters, stacked as the certified dimension (:func:`dimension`), the rotation
    directions (rank mod p of the ``GL_r`` tangents of :func:`symmetry_tangents`) and the volume
    direction (the scaling ``(A, V) -> (lambda A, V / lambda)``); the chosen ``a`` is outlined.
    Returns the split of the chosen layer.
    """
    from .rank import PRIME, exact_rank
    from .symmetries import symmetry_tangent_groups
    from .weights import random_weights

    seed = _checks.seed("seed", seed)
    ranks = range(1, 7)
    cache: dict[tuple[int, int, int], Facts] = {}

    def split(d: int, d_out: int, a: int) -> Facts:
        if (d, d_out, a) not in cache:
            arch = Architecture((d, d_out), (a,))
            groups = symmetry_tangent_groups(arch, random_weights(arch, seed, modulus=PRIME),
                                             modulus=PRIME)
            rotation = exact_rank(groups.attention, PRIME)
            cache[d, d_out, a] = {"parameters": arch.parameter_count,
                                  "dimension": dimension(arch, rng=seed).certified_dimension,
                                  "rotation": rotation,
                                  "volume": exact_rank(np.concatenate(groups), PRIME) - rotation}
        return cache[d, d_out, a]

    def show(d: int, d_out: int, a: int) -> Facts:
        rows = [split(d, d_out, r) for r in ranks]
        facts = rows[a - 1]
        if any(row["dimension"] is None for row in rows):
            print("the two exact bounds did not meet here: no certified split to draw")
            return facts
        print(f"d = {d}, d' = {d_out}, a = {a}: {facts['parameters']} parameters = "
              f"{facts['dimension']} dimension + {facts['rotation']} rotation + "
              f"{facts['volume']} volume")
        if a > d:
            print(f"a > d: A = K^T Q is only {d} x {d}, so the extra rank adds parameters, "
                  "not dimension")
        _render(fig, draw, d, d_out, a, rows)
        return facts

    fig, (ax,) = _figure(7, 3.6, left=0.09, right=0.98, bottom=0.13, top=0.91)
    stacks = {part: ax.bar(ranks, np.ones(len(ranks)), color=color, label=part)
              for part, color in (("dimension", "C0"), ("rotation", "C1"), ("volume", "C2"))}
    outline, = ax.bar([1], [1], fill=False, edgecolor="k", lw=2.5)
    cap = ax.axhline(1, color="k", ls="--", lw=1, label="cap")
    ax.set(xlabel="attention rank a", ylabel="count", xticks=list(ranks))
    legend = ax.legend(loc="upper left", frameon=False)  # the line first, then the bars

    def draw(d: int, d_out: int, a: int, rows: list[Facts]) -> None:
        bottom = np.zeros(len(rows))
        for part, bars in stacks.items():
            heights = np.array([row[part] for row in rows])
            for bar, y, height in zip(bars, bottom, heights):
                bar.set_y(y)
                bar.set_height(height)
            bottom += heights
        outline.set_x(a - outline.get_width() / 2)
        outline.set_height(rows[a - 1]["parameters"])
        largest = d * d + d * d_out - 1
        cap.set_ydata([largest, largest])
        legend.get_texts()[0].set_text(f"largest dimension d² + dd' − 1 = {largest}")
        ax.set(ylim=(0, 1.15 * max(row["parameters"] for row in rows)),
               title=f"One layer, d = {d}, d' = {d_out}: where the parameters go")

    return _interactive(show, fig, _sliders(d=(1, 3, 5), d_out=(1, 3, 5), a=(1, 3, 6)))


def stall_problem(seed: int = 2025) -> tuple[np.ndarray, np.ndarray, Layer,
                                              tuple[np.ndarray, np.ndarray]]:
    """Notebook 06's problem ``(inputs, targets, direction, held_out)``, drawn from ``seed``.

    A teacher on ``d = 3``, ``d' = 2`` with ``A`` of singular values ``(2, 0.8, 0.3)`` and ``V`` of
    rank one and norm 1.5; 64 training and 64 held-out inputs of ``t = 3`` tokens, entries
    ``N(0, 1/3)``; a random start ``direction`` with a fourth row of ``Q``, ``K`` (``a`` up to 4).
    """
    rng = np.random.default_rng(seed)
    U, W = (np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in range(2))
    v, z = rng.normal(size=2), rng.normal(size=3)
    teacher = layer_from_attention(U @ np.diag([2.0, 0.8, 0.3]) @ W.T,
                                   1.5 * np.outer(v / np.linalg.norm(v), z / np.linalg.norm(z)))
    inputs = rng.normal(size=(64, 3, 3)) / np.sqrt(3)
    Q, K, V = (rng.normal(size=shape) for shape in ((3, 3), (3, 3), (2, 3)))
    extra = np.random.default_rng([seed, 4]).normal(size=(2, 1, 3))
    held = np.random.default_rng([seed, 5]).normal(size=(64, 3, 3)) / np.sqrt(3)
    return (inputs, layer_forward(teacher, inputs),
            Layer(np.vstack([Q, extra[0]]), np.vstack([K, extra[1]]), V),
            (held, layer_forward(teacher, held)))


def training_explorer(inputs: ArrayLike | None = None, targets: ArrayLike | None = None,
                      direction: Sequence[ArrayLike] | None = None,
                      held_out: tuple[ArrayLike, ArrayLike] | None = None, *, seed: int = 2025,
                      scales: Sequence[float] = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3),
                      input_counts: Sequence[int] = (2, 4, 16, 64), learning_rate: float = 0.03,
                      steps: int = 3000, record_every: int = 10) -> ipywidgets.interactive:
    """Sliders for the initial ``scale``, the student's attention rank ``a`` and the number of
    training ``inputs``: one layer trained by gradient descent from ``scale * direction``.

    ``direction`` is a layer whose ``Q, K`` have as many rows as the largest ``a``; the student of
    rank ``a`` starts from their first ``a`` rows and zeros below them (zero rows of ``Q`` and ``K``
    stay zero: ``grad_Q = K G_A``, ``grad_K = Q G_A^T``). The training set is the first ``N`` pairs
    of ``inputs, targets``; ``held_out = (X, Y)`` tests the learned function on other inputs. Every
    setting is trained once, together, when the widget is built
    (:func:`~lsa_helpers.landscape.descend_together`); a move only draws. Left: training and
    held-out loss over their values at step 0. Right: singular values of ``A = K^T Q`` and ``V``,
    shaded where the loss is above 90 % of its start (near the zero function) and where the
    rank-one ratio is below 0.01 after the loss has halved (near a rank-one function). Returns the
    facts it prints. ``scales`` and ``input_counts`` are the settings the sliders offer;
    ``learning_rate``, ``steps`` and ``record_every`` are passed to ``descend_together``. With no
    data given, notebook 06's problem drawn from ``seed`` (:func:`stall_problem`).
    """
    import ipywidgets as w

    from .landscape import descend_together, first_step_below, loss_along, loss_moments

    given = [x is not None for x in (inputs, targets, direction, held_out)]
    if any(given) and not all(given):
        raise ValueError("give all of inputs, targets, direction and held_out, or none of them "
                         "(notebook 06's problem)")
    if inputs is None or targets is None or direction is None or held_out is None:
        inputs, targets, direction, held_out = stall_problem(seed)
    Q, K, V = (np.asarray(m, dtype=np.float64) for m in direction)
    if Q.ndim != 2 or K.shape != Q.shape or V.ndim != 2 or V.shape[1] != Q.shape[1]:
        raise ValueError("direction must be a layer (Q, K, V), Q and K (a, d) and V (d', d), "
                         f"got shapes {Q.shape}, {K.shape}, {V.shape}")
    inputs, targets = np.asarray(inputs, dtype=np.float64), np.asarray(targets, dtype=np.float64)
    counts = tuple(input_counts)
    if not counts or not all(_checks.is_integer(n) and 1 <= n <= len(inputs) for n in counts):
        raise ValueError(f"input_counts must be integers from 1 to {len(inputs)} (the inputs "
                         f"given), got input_counts={input_counts!r}")
    if not scales or not all(_checks.is_real(s) and 0 < s < np.inf for s in scales):
        raise ValueError(f"scales must be positive numbers, got scales={scales!r}")
    moments = {n: loss_moments(inputs[:n], targets[:n]) for n in counts}
    settings = [(s, a, n) for s in scales for a in range(1, len(Q) + 1) for n in counts]
    rows = np.arange(len(Q))[:, None]
    starts = [Layer(s * np.where(rows < a, Q, 0.0), s * np.where(rows < a, K, 0.0), s * V)
              for s, a, n in settings]
    runs = dict(zip(settings, descend_together(
        starts, [moments[n] for _, _, n in settings], learning_rate=learning_rate, steps=steps,
        record_every=record_every)))
    held_inputs, held_targets = held_out
    cache: dict[tuple[float, int, int], Facts] = {}

    def shown(x: float) -> str:
        return f"{x:.0e}" if x >= 1e-12 else "<1e-12"  # below: rounding, not learning

    def measure(setting: tuple[float, int, int]) -> Facts:
        if setting not in cache:
            run = runs[setting]
            held = loss_along(run, held_inputs, held_targets)
            train, held = run.losses / run.losses[0], held / held[0]
            ratio = run.rank_one_ratio
            learned = train < 0.5
            s_A, s_V = (np.linalg.svd(np.array([f(layer) for layer in run.weights]),
                                      compute_uv=False)   # all records in one call
                        for f in (lambda layer: layer.K.T @ layer.Q, lambda layer: layer.V))
            cache[setting] = {
                "train": train, "held": held, "ratio": ratio, "s_A": s_A, "s_V": s_V,
                "near_zero": train > 0.9,
                "near_rank_one": learned & (ratio < 0.01),
                "facts": {"scale": setting[0], "a": setting[1], "inputs": setting[2],
                          "left zero at step": first_step_below(run, 0.9),
                          "closest rank-one ratio": float(ratio[learned].min())
                          if learned.any() else None,
                          "final training loss": float(train[-1]),
                          "final held-out loss": float(held[-1]),
                          "final s(A)": tuple(round(float(x), 3) for x in s_A[-1])}}
        return cache[setting]

    def show(scale: float, a: int, inputs: int) -> Facts:
        m = measure((scale, a, inputs))
        facts = m["facts"]
        print(f"scale {scale:g}, a = {a}, {inputs} training inputs "
              f"({steps} steps of gradient descent, learning rate {learning_rate:g})")
        left = facts["left zero at step"]
        print(f"  left the zero function (loss below 90 % of its start) at step {left}" if left
              is not None else f"  still near the zero function after {steps} steps")
        if facts["closest rank-one ratio"] is not None:
            print(f"  closest rank-one ratio once the loss has halved: "
                  f"{facts['closest rank-one ratio']:.0e}")
        print(f"  at step {steps}: training loss {shown(facts['final training loss'])}, held-out "
              f"loss {shown(facts['final held-out loss'])} of their starts; s(A) = "
              + ", ".join(f"{x:.2f}" for x in facts["final s(A)"]))
        _render(fig, draw, scale, a, inputs, m)
        return facts

    fig, (left_ax, right_ax) = _figure(11, 3.6, 2, left=0.06, right=0.98, bottom=0.14,
                                       top=0.84, wspace=0.2)
    steps_axis = runs[settings[0]].steps
    shades: list[Any] = []
    curves = [left_ax.semilogy(steps_axis, steps_axis, "k", label="training loss")[0],
              left_ax.semilogy(steps_axis, steps_axis, "C3--", label="held-out loss")[0]]
    left_ax.set(xlabel="step", ylim=(1e-12, 10), title="loss / loss at step 0")
    # plain Unicode labels keep a move fast (mathtext is slow)
    spectra = {name: [right_ax.semilogy(steps_axis, steps_axis, color=color, ls=style,
                                        label=f"s{j + 1}({name})")[0]
                      for j, color in enumerate(colors[:count])]
               for name, colors, style, count in (("A", ("C0", "C2", "C4"), "-", Q.shape[1]),
                                                  ("V", ("C1", "C3"), "--", min(V.shape)))}
    right_ax.set(xlabel="step", ylim=(1e-6, 10), title="singular values of A = KᵀQ and V")
    title = fig.suptitle("", fontsize=11)

    def draw(scale: float, a: int, inputs: int, m: Facts) -> None:
        for shade in shades:
            shade.remove()
        shades[:] = [ax.fill_between(steps_axis, 0, 1, where=where, color=color, alpha=0.25,
                                     lw=0, transform=ax.get_xaxis_transform(), label=label)
                     for ax in (left_ax, right_ax)
                     for where, color, label in (
                         (m["near_zero"], "0.6", "near the zero function"),
                         (m["near_rank_one"], "C1", "near a rank-one function"))]
        for curve, values in zip(curves, (m["train"], m["held"])):
            curve.set_ydata(np.maximum(values, 1e-12))
        for name, lines in spectra.items():
            for curve, values in zip(lines, m[f"s_{name}"].T):
                curve.set_ydata(np.maximum(values, 1e-7))
        if not left_ax.get_legend():  # the shades first, as they were drawn first
            left_ax.legend(handles=[*shades[:2], *curves], fontsize=8, loc="lower left")
            right_ax.legend(handles=[*shades[2:], *spectra["A"], *spectra["V"]], fontsize=8,
                            loc="lower right", ncol=2)
        title.set_text(f"scale {scale:g}, a = {a}, N = {inputs}")

    default_scale = 0.01 if 0.01 in scales else scales[0]
    sliders = {
        "scale": w.SelectionSlider(options=[(f"{s:g}", s) for s in scales], value=default_scale,
                                   description="scale", continuous_update=False),
        "a": w.IntSlider(value=min(len(Q), Q.shape[1]), min=1, max=len(Q), description="a",
                         continuous_update=False),
        "inputs": w.SelectionSlider(options=list(counts), value=max(counts), description="inputs",
                                    continuous_update=False),
    }
    return _interactive(show, fig, sliders)
