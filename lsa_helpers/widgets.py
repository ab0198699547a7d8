"""Interactive demos: thin ipywidgets factories over the package's public functions.

Each demo builds its figure once (``demo.figure``, outside pyplot) with a fixed layout, its text
sized for a room, and on each move updates it and displays its PNG at the figure's own size. What a
move changes is animated: the rest (axes, ticks, labels) is drawn again only when a move changes it.
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


def _room_style() -> Any:
    """Matplotlib's settings in :data:`_ROOM_STYLE` meanwhile: for building a demo's artists and
    for every draw (text takes its size when it is made)."""
    from matplotlib import rc_context

    return rc_context(_ROOM_STYLE)


def _figure(width: float, height: float, cols: int = 1, **grid: Any) -> tuple[Figure, list[Any]]:
    """A figure drawn by Agg, outside pyplot, in the room style, with ``cols`` axes placed by
    ``grid`` (fixed margins and spacing as figure fractions, ``width_ratios``)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with _room_style():
        fig = Figure(figsize=(width, height))
        FigureCanvasAgg(fig)
        return fig, list(fig.subplots(1, cols, squeeze=False, gridspec_kw=grid)[0])


def _render(fig: Figure, draw: Any, *args: Any) -> None:
    """Update ``fig`` by ``draw(*args)``, draw it and display it (in an IPython shell) as a PNG of
    its own size. The still layer is drawn anew only when ``draw`` changed it (the figure is
    stale)."""
    from IPython import get_ipython
    from IPython.display import display

    with _room_style():
        draw(*args)
    _draw(fig, anew=fig.stale)
    if get_ipython() is not None:
        display({"image/png": _png(fig), "text/plain": repr(fig)}, raw=True)


def _draw(fig: Figure, *, anew: bool) -> None:
    """Draw ``fig`` on its canvas in two layers: the still one (every artist not animated), drawn
    anew and kept, or restored as last kept; then the moving one (the animated artists) over it."""
    canvas = fig.canvas
    with _room_style():
        if anew or not hasattr(fig, "_still_layer"):
            canvas.draw()
            fig._still_layer = canvas.copy_from_bbox(fig.bbox)  # type: ignore[attr-defined]
        else:
            canvas.restore_region(fig._still_layer)  # type: ignore[attr-defined]
        for artist in sorted(_moving(fig), key=lambda a: a.zorder):
            fig.draw_artist(artist)


def _moving(fig: Figure) -> list[Any]:
    """The animated artists among the children of ``fig`` and of its axes (not looking inside an
    axis: that would make its ticks, a change to the still layer)."""
    return [artist for parent in (fig, *fig.axes) for artist in parent.get_children()
            if artist.get_animated()]


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


def _powers(*exponents: int) -> tuple[list[float], list[str]]:
    """Log-axis ticks ``10^k`` and their labels in superscript digits (no mathtext: cheap)."""
    digits = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    return ([10.0 ** k for k in exponents],
            [{0: "1", 1: "10"}.get(k, "10" + str(k).translate(digits)) for k in exponents])


def polynomial_explorer(*, d: int = 6, d_out: int = 4, a: int = 2, t: int = 8,
                        sizes: bool = False) -> ipywidgets.interactive:
    """Sliders for ``d, d', a, t``: the cost of both orders against ``t``; with ``sizes``, the size.

    On fixed log-log axes: the multiplications of ``V X (X^T A X)`` and of ``(V X X^T)(A X)``
    for ``t = 1..64`` (``multiplication_counts``), the token where they tie marked, the current
    ``t`` as dots, both counts in the title. With ``sizes``, a second panel on a log scale:
    monomials per output entry at ``t``, span dimension and parameters. The other keywords set
    the sliders' starting values; the callback returns the counts and the sizes.
    """

    sizes = _checks.bool_flag("sizes", sizes)

    ts = np.arange(1, 65)
    fig, axes = _figure(11 if sizes else 8, 3.5, 1 + sizes, left=0.08 if sizes else 0.12,
                        right=0.97, bottom=0.17, top=0.89, wspace=0.62,
                        width_ratios=[1.25, 1][:1 + sizes])
    ax = axes[0]
    with _room_style():  # the axes fixed over the sliders' whole range
        quadratic, = ax.loglog(ts, ts, color="C3", lw=2.5, label="as written: V X (XᵀAX)")
        linear, = ax.loglog(ts, ts, color="C0", lw=2.5, label="re-associated: (V X Xᵀ)(A X)")
        dots, = ax.plot([1, 1], [1, 1], "ko", ms=6)
        tie, = ax.plot([1, 1], [1, 1], color="0.4", ls="--", lw=1.5)  # up to the curves
        tie_label = ax.text(1, 0.04, "", transform=ax.get_xaxis_transform(), color="0.25")
        ax.set(xlabel="tokens t (log)", ylabel="multiplications", xlim=(0.9, 72), ylim=(1, 1e7))
        ax.set_xticks([1, 4, 16, 64], ["1", "4", "16", "64"])
        ax.set_yticks(*_powers(0, 2, 4, 6))
        ax.legend(loc="upper left", frameon=False)
        moving = [quadratic, linear, dots, tie, tie_label, ax.title]
        if sizes:
            bx = axes[1]
            bars = bx.barh(range(3), [1, 1, 1], color=["C2", "C1", "0.6"])
            labels = [bx.text(1, y, "", va="center") for y in range(3)]
            bx.set(xscale="log", xlim=(0.5, 1e8), ylim=(2.6, -0.6))
            bx.set_xticks(*_powers(0, 2, 4, 6))
            bx.set_yticks(range(3), ["monomials per\noutput entry", "span dimension",
                                     "parameters"])
            moving += [*bars, *labels, bx.title]
        for axis in axes:
            axis.minorticks_off()
    for artist in moving:
        artist.set_animated(True)

    def draw(t: int, curves: dict[str, np.ndarray], facts: Facts) -> None:
        quadratic.set_ydata(curves["quadratic"])
        linear.set_ydata(curves["linear"])
        costs = curves["quadratic"][t - 1], curves["linear"][t - 1]
        dots.set_data([t, t], costs)
        ax.title.set_text(f"t = {t}: {costs[0]:,} as written, {costs[1]:,} re-associated")
        s, = facts["tokens where both orders cost the same"]  # t = d, and d <= 16 < 64
        tie.set_data([s, s], [1, curves["linear"][s - 1]])
        tie_label.set(x=s, text=f" tie at t = {s}")
        if sizes:
            values = [facts["monomials per output entry"],
                      facts["span dimension of the neuromanifold"], facts["parameters"]]
            for bar, label, v in zip(bars, labels, values):
                bar.set_width(v)
                label.set(x=v, text=f" {v:,}")
            bx.title.set_text(f"size at t = {t}" + (" (degenerate)" if t == 1 else ""))

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
        _render(fig, draw, t, curves, facts)
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
    names = ["scaling (2A, V/2)", "random nudge 1e-3", "rank-one swap"]

    def show(rank_A: int, rank_V: int) -> Facts:
        rng = as_generator(seed)
        A = _random_of_rank(rng, d, d, rank_A)
        V = _random_of_rank(rng, d_out, d, rank_V)
        layer = layer_from_attention(A, V)
        case = fiber_kind(layer)
        nudge = 1e-3 * rng.normal(size=A.shape)
        moves = dict(zip(names, (layer_from_attention(2 * A, V / 2),
                                 layer_from_attention(A + nudge, V))))
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
        change = "largest output" if case == zero else "relative change of phi"
        size = (f"{100 * np.linalg.norm(nudge) / np.linalg.norm(A):.1g} % of |A| = "
                f"{np.linalg.norm(A):.2f}" if rank_A else "A was 0")
        for name, value in distances.items():
            verdict = "< 1e-10, same function" if value < 1e-10 else f"{value:.0e}"
            note = f" (the nudge: {size})" if name.startswith("random nudge") else ""
            print(f"{name:>17}: {change} {verdict}{note}")
        _render(fig, draw, rank_A, rank_V, case, distances)
        return {"case": case, **distances}

    # Log bars from a floor below rounding (1e-18), so that an exact 0 still shows a stub;
    # green: the same function (< 1e-10), red: a different one. Each bar says its value; one
    # row per move, the swap's empty where it does not exist. Only the moving layer changes.
    floor = 1e-18
    fig, (ax,) = _figure(8, 2.8, left=0.28, right=0.97, bottom=0.26, top=0.87)
    with _room_style():
        bars = ax.barh(range(3), [1, 1, 1], left=floor)
        labels = [ax.text(1, y, "", va="center") for y in range(3)]
        ax.set(xscale="log", xlim=(floor, 1e3), ylim=(2.5, -1.1))
        ax.set_xticks(*_powers(-18, -12, -6, 0))
        ax.set_yticks(range(3), names)
        ax.minorticks_off()
        ax.axvline(1e-10, color="0.3", lw=1.5, ls="--")
        ax.text(1e-10, -0.75, "same function ", ha="right", va="center", color="C2")
        ax.text(1e-10, -0.75, " changed", va="center", color="C3")
        quantity = ax.text(0.5, -0.2, "", transform=ax.transAxes, ha="center", va="top")
    for artist in (*bars, *labels, quantity, ax.title):
        artist.set_animated(True)

    def draw(rank_A: int, rank_V: int, case: str, distances: dict[str, float]) -> None:
        for name, bar, label in zip(names, bars, labels):
            v = distances.get(name)
            bar.set_visible(v is not None)
            if v is None:
                label.set(x=3 * floor, text=" none here")
            else:
                bar.set_width(max(v, 3 * floor) - floor)
                bar.set_color("C2" if v < 1e-10 else "C3")
                label.set(x=max(v, 3 * floor), text=" exactly 0" if v == 0 else f" {v:.0e}")
        quantity.set_text("largest output after the move, φ = 0 (log)" if case == zero
                          else "relative change of φ (log)")
        ax.title.set_text(f"rk A = {rank_A}, rk V = {rank_V}: case '{case}'")

    return _interactive(show, fig, _sliders(rank_A=(0, 1, d), rank_V=(0, 1, min(d, d_out))))


def dimension_explorer(*, seed: int = 0) -> ipywidgets.interactive:
    """Sliders for ``d, d', a, t``: parameters against dimension, and the two bounds that prove it.

    Left: for the current ``d, d', t``, the parameter count and the paper's formula for
    ``a = 1, ..., 9`` (the fiber is the gap between them), with the current ``a`` marked by its
    exact rank. Right: at the current setting, the parameters, the upper bound (parameters minus
    the rank of the known fiber directions), the exact rank mod p (the lower bound), the float
    rank and the formula. Both panels count on one scale, ``0..top`` with ``top`` the first of
    25, 50, 100, 200 at least the parameters at ``a = 9``: it changes only with ``d`` and ``d'``.
    Prints two lines: the formula (or why there is none), then the float rank with its gap, the
    exact rank and the certified dimension, or that the two bounds do not meet. Returns the facts
    it drew.
    """
    from functools import lru_cache


    seed = _checks.seed("seed", seed)
    ranks = np.arange(1, 10)

    @lru_cache(maxsize=256)
    def measure(d: int, d_out: int, a: int, t: int) -> tuple[Architecture, Any, Any, Any]:
        """The setting's architecture, formula, certified bounds and float rank (seeded)."""
        arch = Architecture((d, d_out), (a,), tokens=t)
        floating = dimension(arch, method="float", rng=seed).float_reading
        assert floating is not None  # method="float" reads a float rank
        return arch, formula_dimension(arch), dimension(arch, rng=seed), floating

    def show(d: int, d_out: int, a: int, t: int) -> Facts:
        arch, formula, exact, floating = measure(d, d_out, a, t)
        facts: Facts = {"parameters": arch.parameter_count, "formula": formula.value,
                        "float rank": floating.rank, "gap clear": floating.is_clear,
                        "exact rank": exact.rank, "upper bound": exact.upper_bound,
                        "certified": exact.certified_dimension,
                        "fiber": None if exact.certified_dimension is None
                        else arch.parameter_count - exact.certified_dimension}
        print(f"formula [{formula.status}] {formula.value}" if formula.value is not None
              else f"formula [{formula.status}]: {formula.reason}")
        print(f"float rank {floating.rank} (gap {floating.gap:.1e}, {floating.verdict}), " + (
            f"exact rank {exact.rank}, certified {exact.certified_dimension}"
            if exact.certified_dimension is not None else
            f"the bounds do not meet: exact rank {exact.rank} <= dim <= {exact.upper_bound}"))
        _render(fig, draw, arch, a, formula, exact, floating)
        return facts

    fig, (ax, bx) = _figure(10.6, 3.1, 2, left=0.07, right=0.96, bottom=0.18, top=0.88,
                            wspace=0.45)
    with _room_style():  # the artists made here take the room's sizes
        params, = ax.plot(ranks, ranks, "s-", color="0.5", label="parameters")
        dims, = ax.plot(ranks, ranks, "o-", color="C1", lw=2, label="dimension")
        fiber = ax.fill_between(ranks, ranks, ranks, color="C1", alpha=0.12)
        fiber_label = ax.text(8.8, 1, "fiber", color="C1", ha="right", va="center")
        marker, = ax.plot([1, 1], [0, 1], color="0.7", lw=1)  # up to the parameters at a
        star, = ax.plot([1], [1], "*", color="C2", ms=18, label="exact rank")
        ax.legend(loc="upper left", handlelength=1.2, borderaxespad=0.3, labelspacing=0.25)
        no_formula = ax.text(0.97, 0.06, "t = 1: no formula", color="C3", ha="right",
                             transform=ax.transAxes)
        ax.set(xlabel="attention rank a", ylabel="count", xticks=[1, 3, 5, 7, 9],
               xlim=(0.5, 9.5))
        names = ["parameters", "upper bound", "exact rank", "float rank", "formula"]
        bars = bx.barh(names, np.ones(5), color=["0.7", "C3", "C2", "C0", "C1"])
        values = [bx.text(0, y, "", va="center") for y in range(5)]
        bx.invert_yaxis()
        for artist in [params, dims, fiber, fiber_label, marker, star, no_formula, ax.title,
                       bx.title, *bars, *values]:
            artist.set_animated(True)

    def draw(arch: Architecture, a: int, formula: Any, exact: Any, floating: Any) -> None:
        (d, d_out), t = arch.widths, arch.tokens
        sweep = [Architecture((d, d_out), (int(r),), tokens=t) for r in ranks]
        counts = [s.parameter_count for s in sweep]
        formulas = [formula_dimension(s).value for s in sweep]
        top = next(top for top in (25, 50, 100, 200) if top >= counts[-1])
        if ax.get_ylim() != (0, top):  # a new scale: the one move that redraws the axes
            ax.set(ylim=(0, top), yticks=np.linspace(0, top, 6))
            bx.set(xlim=(0, top), xticks=np.linspace(0, top, 6))
        params.set_ydata(counts)
        for artist in (dims, fiber, fiber_label):
            artist.set_visible(formula.value is not None)
        no_formula.set_visible(formula.value is None)
        if formula.value is not None:
            dims.set_ydata(formulas)
            fiber.set_data(ranks, formulas, counts)
            fiber_label.set_y(((formulas[-1] or 0) + counts[-1]) / 2)  # mid-fiber at a = 9
        marker.set_data([a, a], [0, counts[a - 1]])
        star.set_data([a], [exact.rank])
        # the titles' text only: set_title would move every title, a still change
        ax.title.set_text(f"d = {d}, d' = {d_out}, t = {t}")
        shown = [arch.parameter_count, exact.upper_bound, exact.rank, floating.rank,
                 formula.value or 0]
        for bar, value, v in zip(bars, values, shown):
            bar.set_width(v)
            inside = v > 0.6 * top  # a long bar holds its number, a short one has it beside
            value.set(x=v, ha="right" if inside else "left", color="w" if inside else "k",
                      text=f" {v} " if v or value is not values[-1] else " none")
        values[-1].set_text(values[-1].get_text() + (f"[{formula.status}]" if formula.value
                                                      else ""))
        verdict = (f"certified {exact.certified_dimension}" if exact.certified_dimension
                   is not None else "not certified")
        bx.title.set_text(f"a = {a}: {verdict}")

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
    with _room_style():
        blocks = bars.barh(["parameters", "lightning", "softmax"], [1, 1, 1],
                           color=["0.7", "C0", "C1"])
        values = [bars.text(0, y, "", va="center", fontsize=18) for y in range(3)]
        bars.set(xlim=(0, 1.25), xticks=[])  # the values are written on the bars
        bars.invert_yaxis()
        dots = [spec.semilogy([], [], "o", ms=7, color=color, label=name)[0]
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

    Draws the parameter count as dimension + symmetry orbit + other fiber directions, as shares
    of the parameters: the formula (or, where none applies, the certified dimension), the rank of
    the symmetry tangents at a random point, and the rest of ``parameters - dimension``. Up to
    ``certify_up_to`` parameters it also certifies the dimension
    (:func:`~lsa_helpers.function_space.dimension`); beyond, formula only. The sliders of widths
    and ranks past the depth do nothing, so they are disabled (and enabled again when the depth
    grows); ``facts["disabled"]`` lists them.
    """
    import textwrap
    from functools import lru_cache

    from matplotlib.ticker import PercentFormatter

    from .rank import PRIME, exact_rank
    from .symmetries import symmetry_tangents
    from .weights import random_weights

    seed = _checks.seed("seed", seed)
    certify_up_to = _checks.nonnegative_int("certify_up_to", certify_up_to)
    sliders = _sliders(depth=(1, 2, 3), d0=(1, 4, 6), d1=(1, 3, 6), d2=(1, 4, 6), d3=(1, 3, 6),
                       a1=(1, 2, 6), a2=(1, 2, 6), a3=(1, 2, 6))

    @lru_cache(maxsize=256)
    def measure(widths: tuple[int, ...], ranks: tuple[int, ...]) -> Facts:
        """The facts of one architecture: its formula, orbit and bounds (seeded)."""
        arch = Architecture(widths, ranks)
        formula = formula_dimension(arch)
        weights = random_weights(arch, as_generator(seed), modulus=PRIME)
        orbit = exact_rank(symmetry_tangents(arch, weights, modulus=PRIME), PRIME)
        bounds = dimension(arch, rng=seed) if arch.parameter_count <= certify_up_to else None
        certified = bounds.certified_dimension if bounds else None
        dim = formula.value if formula.value is not None else certified
        return {"widths": arch.widths, "ranks": arch.ranks, "parameters": arch.parameter_count,
                "formula": formula.value, "status": formula.status, "reason": formula.reason,
                "symmetry orbit": orbit, "lower": bounds.rank if bounds else None,
                "upper": bounds.upper_bound if bounds else None, "certified": certified,
                "dimension": dim,
                "other fiber": None if dim is None else arch.parameter_count - dim - orbit}

    def show(depth: int, d0: int, d1: int, d2: int, d3: int, a1: int, a2: int, a3: int) -> Facts:
        unused = [f"d{i}" for i in range(depth + 1, 4)] + [f"a{i}" for i in range(depth + 1, 4)]
        for name, slider in sliders.items():
            slider.disabled = name in unused
        found = measure((d0, d1, d2, d3)[: depth + 1], (a1, a2, a3)[:depth])
        facts: Facts = {key: value for key, value in found.items() if key != "reason"}
        facts["disabled"] = unused
        print(f"formula [{found['status']}]: {found['formula']}" if found["formula"] is not None
              else textwrap.fill(f"formula [none]: {found['reason']}", 90,
                                 subsequent_indent="  "))
        print(f"certification skipped above {certify_up_to} parameters: formula only"
              if found["lower"] is None else
              f"certified: lower bound {found['lower']} = upper bound {found['upper']}"
              if found["certified"] is not None else
              f"not certified: {found['lower']} <= dimension <= {found['upper']}")
        _render(fig, draw, found)
        return facts

    fig, (ax,) = _figure(10, 2.4, bottom=0.4, top=0.84, left=0.02, right=0.96)
    colors = {"dimension": "C0", "symmetry orbit": "0.6", "other fiber directions": "C3"}
    with _room_style():  # the artists made here take the room's sizes
        bars = {label: ax.barh([0], [1], height=0.6, color=color, label=label)[0]
                for label, color in colors.items()}
        counts = {label: ax.text(0, 0, "", ha="center", va="center",
                                 color="k" if label == "symmetry orbit" else "w")
                  for label in colors}
        title = ax.text(0.5, 1.06, "", ha="center", transform=ax.transAxes, size=16)
        ax.set(xlim=(0, 1), ylim=(-0.5, 0.5), yticks=[], xticks=[0, 0.25, 0.5, 0.75, 1])
        ax.xaxis.set_major_formatter(PercentFormatter(1))
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.38), ncol=3, frameon=False)
        for artist in [*bars.values(), *counts.values(), title]:
            artist.set_animated(True)

    def draw(found: Facts) -> None:
        total, dim = found["parameters"], found["dimension"]
        parts = {"dimension": dim or 0, "symmetry orbit": found["symmetry orbit"],
                 "other fiber directions": found["other fiber"] or 0}
        left = 0
        for label, value in parts.items():  # as shares of the parameters
            bars[label].set(x=left / total, width=value / total)
            counts[label].set(x=(left + value / 2) / total, text=str(value) if value else "")
            left += value
        title.set_text(f"widths {found['widths']}, ranks {found['ranks']}: {total} parameters"
                       + (" = " + " + ".join(map(str, parts.values())) if dim is not None
                          else f": no dimension known, orbit {found['symmetry orbit']}"))

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

    fig, (left, right) = _figure(11.5, 2.8, 2, width_ratios=[1, 1], left=0.06, right=0.5,
                                 bottom=0.22, top=0.88, wspace=0.3)
    theta = np.linspace(0, 2 * np.pi, 200)
    r, s = np.linspace(0, 3, 50), np.linspace(-3, 3, 100)
    with _room_style():
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
        right.set(xlim=(0, 3), ylim=(-3, 3), xlabel="√(β² + γ²)", ylabel="α",
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


_COUNT_SCALES = ((10, 2), (20, 5), (40, 10), (60, 20), (100, 20), (200, 50), (400, 100), (600, 200))
"""The multi-head demo's axis scales ``(limit, tick step)``: the smallest that holds a layer's
counts and the prediction (at most 600) is shown; moves within one scale leave the axis still."""


def multihead_explorer(*, seed: int = 0, certify_up_to: int = 200, d: int = 4, d_out: int = 4,
                       heads: int = 2, a: int = 2, rho: int = 2) -> ipywidgets.interactive:
    """Sliders for ``d, d', heads, a, rho`` and a ``prediction``: a multi-head layer's dimension.

    ``d, d_out, heads, a, rho`` (each 1 to 5) set where the sliders start.

    Every head has attention rank ``a`` and value rank ``rho``. Until a prediction of the
    dimension is typed, only the parameter count shows, as a white bar; then the picture splits it
    into the exact rank (the dimension when certified), the known fiber directions (``GL_a``,
    ``GL_rho`` and one scaling per head, then the head-mixing pairs), the part the span of
    one-layer functions cuts off, and any remainder the count does not explain, with the span as a
    dotted line and the prediction as a dashed one; the legend gives each count. The axis keeps
    the smallest of a few scales that holds them (``_COUNT_SCALES``).
    Moving a slider clears the prediction, so every new layer is predicted first. Up to
    ``certify_up_to`` parameters the dimension is certified
    (:func:`~lsa_helpers.multihead.multihead_dimension`); beyond, a message and the counts only.
    The result holds every count whether or not a prediction was made.
    """
    from functools import lru_cache

    import ipywidgets as w
    from matplotlib.legend import Legend

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
        print(f"{heads} head{'s' * (heads > 1)}, d = {d}, d' = {d_out}, a = {a}, ρ = {rho}: "
              f"{params} parameters")
        if not prediction:
            print("Predict first: type the dimension you expect in 'prediction'.")
        else:
            print(f"symmetries {sym}, mixing pairs {pairs}, span {span}, expected {expected}, "
                  f"exact rank {rank}, certified {facts['certified']}")
        if found is None:
            print(f"too many to certify in one move (at most {certify_up_to} parameters): "
                  "the counts only")
        shown = expected if rank is None else rank
        parts = [(params, "w", "parameters")]  # a white bar: the split only after a prediction
        if prediction:
            parts = [(shown, "C2", "dimension" if rank is not None else "expected count"),
                     (sym, "C0", "symmetries"), (pairs, "C4", "head mixing"),
                     (params - sym - pairs - expected, "0.75", "beyond the span"),
                     (expected - shown, "C3", "not explained")]
        verdict = ("enter a prediction first" if not prediction else
                   f"prediction {prediction}: right" if prediction == shown else
                   f"prediction {prediction}: off by {abs(prediction - shown)}")
        _render(fig, draw, f"{params} parameters, {heads} head{'s' * (heads > 1)}",
                max(params, span, prediction), span, prediction, verdict, parts)
        return facts

    fig, (ax,) = _figure(10.2, 2.4, left=0.03, right=0.97, bottom=0.48, top=0.83)
    with _room_style():
        bars = list(ax.barh([0] * 5, [0] * 5, edgecolor="k", linewidth=0.6))
        marks = [ax.axvline(0, color="k", ls=":", lw=2), ax.axvline(0, color="C1", ls="--", lw=3)]
        counted = ax.set_title("", loc="left")
        ax.set(yticks=[], ylim=(-0.6, 0.6))
    for artist in (*bars, *marks, counted, ax.title):
        artist.set_animated(True)

    def draw(counted_text: str, largest: int, span: int, prediction: int, verdict: str,
             parts: list[tuple[int, str, str]]) -> None:
        limit, step = next(scale for scale in _COUNT_SCALES if scale[0] >= largest)
        if ax.get_xlim()[1] != 1.04 * limit:  # a new scale: the still layer is drawn anew
            ax.set(xlim=(0, 1.04 * limit), xticks=range(0, limit + 1, step))
        left = 0
        for bar, (width, color, label) in zip(bars, parts + [(0, "w", "")] * 5):
            bar.set(x=left, width=width, facecolor=color, label=f"{label} {width}",
                    visible=width > 0)
            left += width
        for mark, x, label in zip(marks, (span, prediction), ("span", "prediction")):
            mark.set(xdata=[x, x], label=f"{label} {x}", visible=bool(prediction))
        counted.set_text(counted_text)
        ax.title.set_text(verdict)
        shown = [artist for artist in (*bars, *marks) if artist.get_visible()]
        legend = Legend(fig, shown, [artist.get_label() for artist in shown], ncol=4,
                        loc="upper center", bbox_to_anchor=(0.5, 0.33), frameon=False,
                        columnspacing=1.2, borderaxespad=0)
        legend.set_animated(True)
        fig.legends[:] = [legend]  # a new legend of the moving layer; the still one untouched

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


_SPLITS: dict[tuple[int, int, int, int], Facts] = {}
"""The splits of :func:`parameter_split_explorer`, by ``(d, d', a, seed)``: computed once."""


def _parameter_split(d: int, d_out: int, a: int, seed: int) -> Facts:
    """The ``2ad + dd'`` parameters of one layer as certified dimension (:func:`dimension`;
    for ``a > d`` that of ``a = d``, whose functions are the same: ``K^T Q`` is then any
    ``d x d`` matrix), rotation (rank mod p of the ``GL_a`` tangents of
    :func:`symmetry_tangents`) and volume (the other symmetry directions: the scaling)."""
    from .rank import PRIME, exact_rank
    from .symmetries import symmetry_tangent_groups
    from .weights import random_weights

    if (d, d_out, a, seed) not in _SPLITS:
        arch = Architecture((d, d_out), (a,))
        groups = symmetry_tangent_groups(arch, random_weights(arch, seed, modulus=PRIME),
                                         modulus=PRIME)
        rotation = exact_rank(groups.attention, PRIME)
        certified = (dimension(arch, rng=seed).certified_dimension if a <= d
                     else _parameter_split(d, d_out, d, seed)["dimension"])
        _SPLITS[d, d_out, a, seed] = {
            "parameters": arch.parameter_count, "dimension": certified, "rotation": rotation,
            "volume": exact_rank(np.concatenate(groups), PRIME) - rotation}
    return _SPLITS[d, d_out, a, seed]


def parameter_split_explorer(*, seed: int = 0) -> ipywidgets.interactive:
    """Sliders for ``d, d', a`` of one layer: its parameters split into dimension and fiber.

    For each attention rank ``r = 1, ..., 6`` at the chosen ``d, d'`` one bar of the
    ``2rd + dd'`` parameters, stacked as :func:`_parameter_split` splits them: certified
    dimension, rotation and volume; the chosen ``a`` outlined, the largest dimension
    ``d^2 + dd' - 1`` dashed. Returns the split of the chosen layer.
    """

    seed = _checks.seed("seed", seed)
    ranks = range(1, 7)

    def show(d: int, d_out: int, a: int) -> Facts:
        rows = [_parameter_split(d, d_out, r, seed) for r in ranks]
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

    # fixed axes for every setting (at most 85 parameters), every count drawn animated
    fig, (ax,) = _figure(10, 3.4, left=0.08, right=0.7, bottom=0.19, top=0.89)
    with _room_style():
        stacks = {part: ax.bar(ranks, np.ones(len(ranks)), color=color, label=part)
                  for part, color in (("dimension", "C0"), ("rotation", "C1"), ("volume", "C2"))}
        outline, = ax.bar([1], [1], fill=False, edgecolor="k", lw=2.5)
        cap = ax.axhline(1, color="k", ls="--", lw=1.5, label="d² + dd' − 1")
        cap_value = ax.text(1.01, 1, "", transform=cap.get_transform(), va="center")
        ax.set(xlabel="attention rank a", ylabel="parameters", xticks=list(ranks),
               xlim=(0.4, 6.6), ylim=(0, 90), yticks=[0, 30, 60, 90])
        ax.legend(loc="center left", bbox_to_anchor=(1.07, 0.5), frameon=False)
    for artist in (*(bar for bars in stacks.values() for bar in bars), outline, cap, cap_value,
                   ax.title):
        artist.set_animated(True)

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
        cap_value.set(y=largest, text=str(largest))
        facts = rows[a - 1]
        ax.title.set_text(f"d = {d}, d' = {d_out}, a = {a}: {facts['parameters']} = "
                          f"{facts['dimension']} + {facts['rotation']} + {facts['volume']}")

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


def _bands(steps: np.ndarray, where: np.ndarray) -> list[np.ndarray]:
    """The runs of ``where`` as rectangles from their first step to their last, of the axes'
    height (in the x-axis transform): the regions ``fill_between(..., where=where)`` shades."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], where.astype(int), [0]])))
    return [np.array([(steps[i], 0), (steps[i], 1), (steps[j - 1], 1), (steps[j - 1], 0)])
            for i, j in zip(edges[::2], edges[1::2])]


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
    rank-one ratio is below 0.01 after the loss has halved (near a rank-one function); above
    them, the setting and both losses at the last step. Returns the facts it prints. ``scales``
    and ``input_counts`` are the settings the sliders offer; ``learning_rate``, ``steps`` and
    ``record_every`` are passed to ``descend_together``. With no data given, notebook 06's
    problem drawn from ``seed`` (:func:`stall_problem`).
    """
    import ipywidgets as w
    from matplotlib.collections import PolyCollection
    from matplotlib.ticker import NullLocator

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
                "train": train, "held": held, "s_A": s_A, "s_V": s_V,
                "bands": [_bands(run.steps, train > 0.9),
                          _bands(run.steps, learned & (ratio < 0.01))],
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
        left, ratio = facts["left zero at step"], facts["closest rank-one ratio"]
        print((f"left the zero function (loss < 90 %) at step {left}" if left
               is not None else f"still near the zero function after {steps} steps")
              + ("" if ratio is None else f"; closest rank-one ratio {ratio:.0e}"))
        print(f"step {steps}: training loss {shown(facts['final training loss'])}, held-out "
              f"{shown(facts['final held-out loss'])} of their starts; s(A) = "
              + ", ".join(f"{x:.2f}" for x in facts["final s(A)"]))
        _render(fig, draw, f"scale {scale:g}, a = {a}, N = {inputs}: at step {steps}, training "
                f"loss {shown(facts['final training loss'])}, held-out "
                f"{shown(facts['final held-out loss'])}", m)
        return facts

    fig, (left_ax, right_ax) = _figure(10.2, 3.55, 2, left=0.075, right=0.985, bottom=0.26,
                                       top=0.79, wspace=0.2)
    steps_axis = runs[settings[0]].steps
    with _room_style():  # plain Unicode labels and ticks: mathtext is slow
        shades = [[ax.add_collection(PolyCollection([], color=color, alpha=0.25, lw=0, label=label,
                                                    transform=ax.get_xaxis_transform()),
                                     autolim=False)
                   for color, label in (("0.6", "near zero"), ("C1", "near rank one"))]
                  for ax in (left_ax, right_ax)]
        curves = [left_ax.plot(steps_axis, steps_axis, "k", label="training")[0],
                  left_ax.plot(steps_axis, steps_axis, "C3--", label="held-out")[0]]
        spectra = [right_ax.plot(steps_axis, steps_axis, color=color, ls=style,
                                 label=f"s{j + 1}({name})")[0]
                   for name, colors, style, count in (("A", ("C0", "C2", "C4"), "-", Q.shape[1]),
                                                      ("V", ("C1", "C3"), "--", min(V.shape)))
                   for j, color in enumerate(colors[:count])]
        for ax, ticks, title in ((left_ax, ("1e-12", "1e-8", "1e-4", "1"), "loss / loss at step 0"),
                                 (right_ax, ("1e-6", "1e-4", "0.01", "1"),
                                  "singular values of A = KᵀQ and V")):
            ax.set(yscale="log", ylim=(float(ticks[0]), 10), xlim=(0, steps), title=title)
            ax.set_yticks([float(tick) for tick in ticks], ticks)
            ax.yaxis.set_minor_locator(NullLocator())
            ax.set_xticks(*zip(*[(x, f"{x:g}") for x in np.linspace(0, steps, 4)[:-1]]))
            ax.set_xlabel("step", loc="right")  # in the place of the last tick's label
            ax.xaxis.set_label_coords(1, -0.03)
            ax.legend(handles=[*curves, *shades[0]] if ax is left_ax else spectra,
                      ncol=2 if ax is left_ax else 3, loc="upper left", frameon=False,
                      bbox_to_anchor=(-0.02, -0.13), columnspacing=1, borderaxespad=0)
        headline = fig.text(0.5, 0.985, "", ha="center", va="top", size=16)
    for artist in (*shades[0], *shades[1], *curves, *spectra, headline):
        artist.set_animated(True)

    def draw(setting: str, m: Facts) -> None:
        for bands in shades:
            for shade, verts in zip(bands, m["bands"]):
                shade.set_verts(verts)
        for curve, values in zip(curves, (m["train"], m["held"])):
            curve.set_ydata(np.maximum(values, 1e-12))
        for curve, values in zip(spectra, np.hstack([m["s_A"], m["s_V"]]).T):
            curve.set_ydata(np.maximum(values, 1e-7))
        headline.set_text(setting)

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
