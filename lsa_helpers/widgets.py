"""Interactive demos: thin ipywidgets factories over the package's public functions."""

from __future__ import annotations

import numpy as np

from .architecture import Architecture
from .dimension import dimension
from .formulas import formula_dimension, monomials_per_entry, span_dimension
from .forward import multiplication_counts
from .symmetries import fiber_kind, function_distance, rank_one_swap
from .weights import as_generator, layer_from_attention

__all__ = ["polynomial_explorer", "fiber_explorer", "dimension_explorer"]


def _sliders(**ranges):
    import ipywidgets as w

    return {name: w.IntSlider(value=value, min=low, max=high, description=name,
                              continuous_update=False)
            for name, (low, value, high) in ranges.items()}


def polynomial_explorer():
    """Sliders for ``d, d', a, t``: the size of the polynomial and the cost of both orders."""
    import ipywidgets as w
    import matplotlib.pyplot as plt

    def show(d, d_out, a, t):
        costs = multiplication_counts(d, d_out, a, t)
        facts = {
            "monomials per output entry": monomials_per_entry(d, t),
            "output entries": d_out * t,
            "span dimension of the neuromanifold": span_dimension(d, d_out, t),
            "parameters": Architecture((d, d_out), (a,), tokens=t).parameter_count,
            "multiplications, V X (X^T A X)": costs["quadratic"],
            "multiplications, (V X X^T)(A X)": costs["linear"],
        }
        for name, value in facts.items():
            print(f"{name:>38}: {value}")
        ts = np.unique(np.geomspace(1, 4096, 40).astype(int))
        fig, ax = plt.subplots(figsize=(6, 3))
        for order, style in (("quadratic", "C3"), ("linear", "C0")):
            ax.loglog(ts, [multiplication_counts(d, d_out, a, s)[order] for s in ts], style, label=order)
        ax.axvline(t, color="0.6", lw=1)
        ax.set(xlabel="tokens t", ylabel="multiplications", title="cost of one layer")
        ax.legend()
        plt.show()
        return facts

    return w.interactive(show, **_sliders(d=(1, 2, 6), d_out=(1, 1, 4), a=(1, 1, 6), t=(1, 2, 64)))


def _random_of_rank(rng, rows: int, cols: int, rank: int) -> np.ndarray:
    return rng.normal(size=(rows, rank)) @ rng.normal(size=(rank, cols))


def fiber_explorer(*, d: int = 3, d_out: int = 2, seed: int = 0):
    """Sliders for ``rk A`` and ``rk V``: which case of the fiber theorem, checked on the function.

    Shows how far (relative to the function) three moves take ``phi``: the scaling
    ``(2A, V/2)``, the rank-one swap (when it exists) and a random perturbation of size 1e-3.
    """
    import ipywidgets as w
    import matplotlib.pyplot as plt

    arch = Architecture((d, d_out), (d,))

    def show(rank_A, rank_V):
        rng = as_generator(seed)
        A = _random_of_rank(rng, d, d, rank_A)
        V = _random_of_rank(rng, d_out, d, rank_V)
        layer = layer_from_attention(A, V)
        kind = fiber_kind(layer)
        moves = {"scaling (2A, V/2)": layer_from_attention(2 * A, V / 2),
                 "random nudge 1e-3": layer_from_attention(A + 1e-3 * rng.normal(size=A.shape), V)}
        if kind == "swap":
            moves["rank-one swap"] = rank_one_swap(layer)
        distances = {name: function_distance(arch, [layer], [other], seed) if kind != "zero"
                     else 0.0 for name, other in moves.items()}
        story = {"zero": "phi = 0, the fiber is {A = 0} u {V = 0}, far more than a curve",
                 "swap": "two curves, exchanged by the swap (k q^T, v z^T) -> (z q^T, v k^T)",
                 "curve": "the fiber is the single curve (lambda A, V / lambda)"}[kind]
        print(f"rk A = {rank_A}, rk V = {rank_V}: {story}")
        for name, value in distances.items():
            verdict = "< 1e-10, the same function" if value < 1e-10 else f"{value:.0e}"
            print(f"{name:>20}: relative change of phi {verdict}")
        fig, ax = plt.subplots(figsize=(6, 2.2))
        names = list(distances)
        ax.barh(names, [max(v, 1e-17) for v in distances.values()], color="C0")
        ax.set_xscale("log")
        ax.set_xlim(1e-17, 10)
        ax.axvline(1e-10, color="C3", lw=1, ls="--")
        ax.set_xlabel("relative change of the function (dashed: 1e-10, 'the same function')")
        plt.show()
        return {"kind": kind, **distances}

    return w.interactive(show, **_sliders(rank_A=(0, 1, d), rank_V=(0, 1, min(d, d_out))))


def dimension_explorer(*, seed: int = 0):
    """Sliders for ``d, d', a, t``: parameters, formula, float rank with gap and exact rank."""
    import ipywidgets as w
    import matplotlib.pyplot as plt

    def show(d, d_out, a, t):
        arch = Architecture((d, d_out), (a,), tokens=t)
        formula = formula_dimension(arch)
        exact = dimension(arch, rng=seed)
        floating = dimension(arch, method="float", rng=seed).float_rank
        facts = {"parameters": arch.parameter_count, "formula": formula.value,
                 "float rank": floating.rank, "gap clear": floating.is_clear,
                 "exact rank": exact.rank, "certified": exact.certified_dimension}
        print(f"{arch}:  formula [{formula.status}] {formula.value}   "
              f"float rank {floating.rank} (gap {floating.gap:.1e}, {floating.verdict})   "
              f"exact rank {exact.rank}   certified {exact.certified_dimension}")
        if formula.value is None:
            print(f"no formula: {formula.reason}")
        fig, ax = plt.subplots(figsize=(6, 2.6))
        labels = ["parameters", "formula", "float rank", "exact rank"]
        values = [arch.parameter_count, formula.value or 0, floating.rank, exact.rank]
        ax.barh(labels, values, color=["0.7", "C1", "C0", "C2"])
        for y, v in enumerate(values):
            ax.text(v, y, f" {v}", va="center")
        ax.set_xlim(0, 1.15 * max(values))
        ax.invert_yaxis()
        plt.show()
        return facts

    return w.interactive(show, **_sliders(d=(1, 3, 8), d_out=(1, 3, 6), a=(1, 3, 9), t=(1, 3, 4)))
