"""Interactive demos: thin ipywidgets factories over the package's public functions."""

from __future__ import annotations

import numpy as np

from .architecture import Architecture
from .dimension import dimension
from .formulas import formula_dimension, monomials_per_entry, span_dimension
from .forward import layer_forward, multiplication_counts
from .symmetries import fiber_kind, function_distance, rank_one_swap
from .weights import as_generator, layer_from_attention, random_inputs

__all__ = ["polynomial_explorer", "fiber_explorer", "dimension_explorer", "softmax_explorer",
           "deep_explorer", "boundary_explorer", "multihead_explorer"]


def _sliders(**ranges):
    import ipywidgets as w

    return {name: w.IntSlider(value=value, min=low, max=high, description=name,
                              continuous_update=False)
            for name, (low, value, high) in ranges.items()}


def _bars(labels, values, colors, *, height: float = 2.6, margin: float = 1.15):
    """Horizontal bars, top to bottom, each with its value written at its end; the axes."""
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=(6, height))
    ax.barh(labels, values, color=colors)
    for y, v in enumerate(values):
        ax.text(v, y, f" {v}", va="center")
    ax.set_xlim(0, margin * max(values))
    ax.invert_yaxis()
    return ax


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
            counts = [multiplication_counts(d, d_out, a, s)[order] for s in ts]
            ax.loglog(ts, counts, style, label=order)
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

    Shows how far three moves take ``phi``: the scaling ``(2A, V/2)``, the rank-one swap (when it
    exists) and a random perturbation of ``A`` of size 1e-3; relative to ``phi``, or, when
    ``phi = 0``, the largest output of the moved layer on random inputs.
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
        if kind == "zero":  # no relative change from 0: the size of the moved function instead
            X = random_inputs(arch, 8, seed)
            distances = {name: float(np.abs(layer_forward(other, X)).max())
                         for name, other in moves.items()}
        else:
            distances = {name: function_distance(arch, [layer], [other], seed)
                         for name, other in moves.items()}
        story = {"zero": "phi = 0, the fiber is {A = 0} u {V = 0}, far more than a curve",
                 "swap": "two curves, exchanged by the swap (k q^T, v z^T) -> (z q^T, v k^T)",
                 "curve": "the fiber is the single curve (lambda A, V / lambda)"}[kind]
        print(f"rk A = {rank_A}, rk V = {rank_V}: {story}")
        for name, value in distances.items():
            verdict = "< 1e-10, the same function" if value < 1e-10 else f"{value:.0e}"
            change = "size of phi after the move" if kind == "zero" else "relative change of phi"
            print(f"{name:>20}: {change} {verdict}")
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
        print(f"{arch}:  {arch.parameter_count} parameters   "
              f"formula [{formula.status}] {formula.value}   "
              f"float rank {floating.rank} (gap {floating.gap:.1e}, {floating.verdict})   "
              f"exact rank {exact.rank}   certified {exact.certified_dimension}")
        if formula.value is None:
            print(f"no formula: {formula.reason}")
        _bars(["parameters", "formula", "float rank", "exact rank"],
              [arch.parameter_count, formula.value or 0, floating.rank, exact.rank],
              ["0.7", "C1", "C0", "C2"])
        plt.show()
        return facts

    return w.interactive(show, **_sliders(d=(1, 3, 8), d_out=(1, 3, 6), a=(1, 3, 9), t=(1, 3, 4)))


def softmax_explorer(*, seed: int = 0):
    """Sliders for depth, width and rank: lightning (certified) against softmax (float) dimension.

    Equal widths ``(w, ..., w)`` and ranks ``(a, ..., a)``, ``t = 3``. The difference is ``l``:
    the paper's theorem for one layer, its conjecture for deep networks.
    """
    import ipywidgets as w
    import matplotlib.pyplot as plt

    def show(depth, width, rank):
        lightning = Architecture((width,) * (depth + 1), (rank,) * depth)
        softmax = Architecture(lightning.widths, lightning.ranks, normalization="softmax")
        certified = dimension(lightning, rng=seed).certified_dimension
        found = dimension(softmax, rng=seed).float_rank
        formula = formula_dimension(softmax)
        difference = None if certified is None else found.rank - certified
        facts = {"parameters": lightning.parameter_count, "lightning": certified,
                 "softmax": found.rank, "gap clear": found.is_clear, "difference": difference,
                 "formula": formula.value, "status": formula.status}
        print(f"widths={lightning.widths} ranks={lightning.ranks} t=3: "
              f"{lightning.parameter_count} parameters")
        print(f"  lightning, certified by exact bounds:  {certified}")
        print(f"  softmax, float rank (gap {found.verdict}):   {found.rank}")
        if difference is not None:
            verdict = "= l, the number of layers" if difference == depth else "!= l"
            print(f"  difference: {difference} {verdict}")
        print(f"  formula lightning + l [{formula.status}]: {formula.value}")
        if rank > width:
            print(f"  (a = {rank} > d = {width}: the extra rank adds parameters, not dimension)")
        ax = _bars(["parameters", "lightning (certified)", "softmax (float rank)"],
                   [lightning.parameter_count, certified or 0, found.rank], ["0.7", "C0", "C1"],
                   height=2.4, margin=1.2)
        ax.set_title(f"depth {depth}: softmax - lightning = {difference}")
        plt.show()
        return facts

    return w.interactive(show, **_sliders(depth=(1, 1, 2), width=(2, 3, 5), rank=(1, 2, 5)))


def deep_explorer(*, seed: int = 0, certify_up_to: int = 120):
    """Sliders for depth, widths ``d_0..d_3`` and ranks ``a_1..a_3`` of a deep lightning network.

    Draws the parameter count as dimension + symmetry orbit + other fiber directions: the
    formula (or, where none applies, the certified dimension), the rank of the symmetry tangents
    at a random point, and the rest of ``parameters - dimension``. Up to ``certify_up_to``
    parameters it also certifies the dimension (:func:`~lsa_helpers.dimension.dimension`);
    beyond, formula only. Sliders past the depth are ignored.
    """
    import ipywidgets as w
    import matplotlib.pyplot as plt

    from .rank import PRIME, exact_rank
    from .symmetries import symmetry_tangents
    from .weights import random_weights

    def show(depth, d0, d1, d2, d3, a1, a2, a3):
        arch = Architecture((d0, d1, d2, d3)[: depth + 1], (a1, a2, a3)[:depth])
        formula = formula_dimension(arch)
        weights = random_weights(arch, as_generator(seed), modulus=PRIME)
        orbit = exact_rank(symmetry_tangents(arch, weights, modulus=PRIME), PRIME)
        bounds = dimension(arch, rng=seed) if arch.parameter_count <= certify_up_to else None
        certified = bounds.certified_dimension if bounds else None
        dim = formula.value if formula.value is not None else certified
        facts = {"widths": arch.widths, "ranks": arch.ranks, "parameters": arch.parameter_count,
                 "formula": formula.value, "status": formula.status, "symmetry orbit": orbit,
                 "lower": bounds.rank if bounds else None,
                 "upper": bounds.upper_bound if bounds else None,
                 "certified": certified, "dimension": dim,
                 "other fiber": None if dim is None else arch.parameter_count - dim - orbit}
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
        fig, ax = plt.subplots(figsize=(6.5, 1.7))
        parts = ([("dimension", dim, "C0"), ("symmetry orbit", orbit, "0.6"),
                  ("other fiber directions", facts["other fiber"], "C3")] if dim is not None
                 else [("symmetry orbit", orbit, "0.6")])
        left = 0
        for label, value, color in parts:
            ax.barh([0], [value], left=left, height=0.6, color=color, label=f"{label}: {value}")
            left += value
        ax.axvline(arch.parameter_count, color="k", lw=1)
        ax.set(xlim=(0, 1.02 * arch.parameter_count), ylim=(-0.5, 0.5), yticks=[],
               title=f"{arch.parameter_count} parameters")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=3, fontsize=8, frameon=False)
        fig.subplots_adjust(bottom=0.4, top=0.82)
        plt.show()
        return facts

    return w.interactive(show, **_sliders(depth=(1, 2, 3), d0=(1, 4, 6), d1=(1, 3, 6), d2=(1, 4, 6),
                                          d3=(1, 3, 6), a1=(1, 2, 6), a2=(1, 2, 6), a3=(1, 2, 6)))


def boundary_explorer():
    """Sliders for ``(alpha, beta, gamma)``: is ``[[alpha + beta, gamma], [gamma, alpha - beta]]``
    some ``sym(z k^T)`` (``d = 2``)? Inside, on the boundary cone ``beta^2 + gamma^2 = alpha^2``, or
    outside; drawn in the ``(beta, gamma)``-plane at height ``alpha`` and in a meridian plane.
    """
    import ipywidgets as w
    import matplotlib.pyplot as plt

    from .identify import factor_quadric
    from .singularities import quadratic_factor, slice_matrix, slice_position

    def rounded(x, digits):
        return round(float(x), digits) + 0.0  # no "-0.00"

    colors = {"inside": "C2", "boundary": "C1", "outside": "C3"}
    stories = {
        "inside": "inside: S = sym(z k^T) with z not parallel to k (det S < 0)",
        "boundary": "on the boundary cone: S = sym(z k^T) only with z || k (det S = 0), "
                    "phi(X) = ||X^T k||^2 v q^T X",
        "outside": "outside: S is definite, x^T S x has no real linear factors; not attained",
    }

    def show(alpha, beta, gamma):
        S = slice_matrix(alpha, beta, gamma)
        excess = beta**2 + gamma**2 - alpha**2
        position = slice_position(alpha, beta, gamma)
        facts = {"position": position, "det S": rounded(-excess, 6), "reproduced": None,
                 "cos": None}
        rows = "], [".join(", ".join(f"{rounded(x, 2):+.2f}" for x in row) for row in S)
        print(f"S = [[{rows}]],  beta^2 + gamma^2 - alpha^2 = -det S = {rounded(excess, 3):+.3f}")
        print(stories[position] if S.any() else "S = 0: the zero function, a boundary point")
        if position == "outside":
            sign = "positive" if alpha > 0 else "negative"
            print(f"x^T S x is {sign} definite: it vanishes only at x = 0, so it is no product "
                  "(z . x)(k . x)")
        elif S.any():
            z, k = factor_quadric(S)
            reproduced = bool(np.allclose(quadratic_factor(z, k), S, rtol=0,
                                          atol=1e-9 * np.abs(S).max()))
            cos = abs(z @ k) / (np.linalg.norm(z) * np.linalg.norm(k))
            facts.update(reproduced=reproduced, cos=rounded(cos, 3))
            print(f"factors found by factor_quadric: sym(z k^T) = S: {reproduced};  "
                  f"|cos angle(z, k)| = {rounded(cos, 3):.3f}")
        fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.8))
        theta = np.linspace(0, 2 * np.pi, 200)
        a = abs(alpha)
        left.fill(a * np.cos(theta), a * np.sin(theta), color="C3", alpha=0.15, lw=0)
        left.plot(a * np.cos(theta), a * np.sin(theta), "k", lw=1.2, label="boundary: det S = 0")
        rho = np.sqrt(1 + alpha**2)
        left.plot(rho * np.cos(theta), rho * np.sin(theta), "k--", lw=0.8,
                  label="hyperboloid det S = -1")
        left.plot(beta, gamma, "o", color=colors[position], ms=9)
        # plain Unicode labels and no tight_layout keep a move well under 0.2 s (mathtext is slow)
        left.set(xlim=(-3, 3), ylim=(-3, 3), aspect="equal", xlabel="β", ylabel="γ",
                 title=f"the plane α = {rounded(alpha, 2):.2f} (shaded: not attained)")
        left.legend(fontsize=7, loc="lower left")
        r = np.linspace(0, 3, 50)
        right.fill_between(r, r, 3, color="C3", alpha=0.15, lw=0)
        right.fill_between(r, -3, -r, color="C3", alpha=0.15, lw=0)
        right.plot(r, r, "k", lw=1.2)
        right.plot(r, -r, "k", lw=1.2)
        s = np.linspace(-3, 3, 100)
        right.plot(np.sqrt(1 + s**2), s, "k--", lw=0.8)
        right.plot(np.hypot(beta, gamma), alpha, "o", color=colors[position], ms=9)
        right.set(xlim=(0, 3), ylim=(-3, 3), aspect="equal",
                  xlabel="√(β² + γ²)", ylabel="α",
                  title="a meridian: the cone is 2 lines")
        fig.subplots_adjust(left=0.07, right=0.98, bottom=0.15, top=0.9, wspace=0.25)
        plt.show()
        return facts

    sliders = {name: w.FloatSlider(value=value, min=-2.0, max=2.0, step=0.05, description=name,
                                   continuous_update=False)
               for name, value in (("alpha", 0.5), ("beta", 1.0), ("gamma", 0.0))}
    return w.interactive(show, **sliders)


def multihead_explorer(*, seed: int = 0):
    """Sliders for ``d, d', heads, a, rho``: the counts of a multi-head layer against its dimension.

    Every head has attention rank ``a`` and value rank ``rho``; the bars go from the parameters
    down through the known fiber directions to the expected count, beside the certified dimension.
    """
    import ipywidgets as w
    import matplotlib.pyplot as plt

    from .multihead import MultiHead, multihead_dimension

    def show(d, d_out, heads, a, rho):
        layer = MultiHead(d, d_out, (a,) * heads, (rho,) * heads)
        found = multihead_dimension(layer, rng=seed)
        facts = {"parameters": layer.parameter_count,
                 "GL_a, GL_rho and scalings": layer.symmetry_dimension,
                 "mixing pairs": len(layer.mixing_pairs), "span": layer.span_dimension,
                 "expected": layer.expected_dimension, "exact rank": found.rank,
                 "certified": found.certified_dimension}
        print(f"{layer}:  {layer.parameter_count} parameters   "
              f"symmetries {layer.symmetry_dimension}   mixing pairs {len(layer.mixing_pairs)}   "
              f"span {layer.span_dimension}   expected {layer.expected_dimension}   "
              f"exact rank {found.rank}   certified {found.certified_dimension}")
        _bars(["parameters", "span", "expected", "exact rank"],
              [layer.parameter_count, layer.span_dimension, layer.expected_dimension, found.rank],
              ["0.7", "0.85", "C1", "C2"])
        plt.show()
        return facts

    return w.interactive(show, **_sliders(d=(1, 4, 5), d_out=(1, 4, 5), heads=(1, 2, 5),
                                          a=(1, 2, 5), rho=(1, 2, 5)))
