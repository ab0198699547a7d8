"""Closed-form dimensions of neuromanifolds, each with its status and its hypotheses."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from math import comb
from typing import Literal, get_args

from . import _checks
from .architecture import Architecture

__all__ = ["FORMULA_STATUSES", "Formula", "formula_dimension", "monomials_per_entry",
           "span_dimension"]

FormulaStatus = Literal["paper", "conjecture", "derived", "none"]
FORMULA_STATUSES: tuple[FormulaStatus, ...] = get_args(FormulaStatus)
"""Where a closed-form dimension comes from (:attr:`Formula.status`)."""


@dataclasses.dataclass(frozen=True)
class Formula:
    """A closed-form dimension: ``value`` (None where none applies), ``status`` and ``reason``.

    ``status`` is ``"paper"`` (a result of Henry, Marchetti and Kohn, ICLR 2025),
    ``"conjecture"`` (what the paper's deep softmax conjecture, generic identifiability in the
    virtual weights ``(M, L)``, gives), ``"derived"`` (worked out for this course and checked by
    exact ranks), or ``"none"``.
    """

    value: int | None
    status: FormulaStatus
    reason: str

    def __post_init__(self) -> None:
        _checks.choice("status", self.status, FORMULA_STATUSES)

    def __repr__(self) -> str:
        return f"Formula({self.value}, {self.status}: {self.reason})"


def _one_layer(d: int, d_out: int, a: int) -> int:
    r = min(a, d)
    return r * (2 * d - r) + d * d_out - 1


def _effective_widths(widths: Sequence[int], ranks: Sequence[int]) -> list[int]:
    """``b_i = min(d_0, ..., d_i)``, then ``b_i <- min(b_i, 2 min(a_{i+1}, b_i) + b_{i+1})``."""
    depth = len(ranks)
    b = [min(widths[: i + 1]) for i in range(depth)] + [widths[-1]]
    for i in range(depth - 1, 0, -1):
        b[i] = min(b[i], 2 * min(ranks[i], b[i]) + b[i + 1])
    return b


def _general(widths: tuple[int, ...], ranks: tuple[int, ...]) -> int:
    depth = len(ranks)
    b = _effective_widths(widths, ranks)
    r = [min(a, b[i]) for i, a in enumerate(ranks)]
    return (sum(ri * (2 * b[i] - ri) for i, ri in enumerate(r))
            + sum(b[i + 1] * b[i] for i in range(depth))
            - sum(b[i] ** 2 for i in range(1, depth)) - depth)


def _is_bottleneck(widths: Sequence[int], ranks: Sequence[int]) -> bool:
    hidden = widths[1:-1]
    delta = hidden[0]
    return (all(h == delta for h in hidden) and delta <= widths[0] and delta <= widths[-1]
            and all(a <= d for a, d in zip(ranks, widths)))


def _lightning(arch: Architecture) -> Formula:
    widths, ranks = arch.widths, arch.ranks
    if arch.tokens == 1:
        return Formula(None, "none", "t = 1: a layer sees only the symmetric part of A")
    if arch.layers == 1:
        return Formula(_one_layer(widths[0], widths[1], ranks[0]), "paper",
                       "one layer: a(2d - a) + d d' - 1, with a replaced by min(a, d)")
    b = _effective_widths(widths, ranks)
    collapsed = [i for i in range(arch.layers - 1) if min(ranks[i], b[i]) == 1]
    if collapsed and any(min(a, b[j]) >= 2 for j, a in enumerate(ranks) if j > collapsed[0]):
        return Formula(None, "none",
                       f"rank-one collapse: layer {collapsed[0] + 1} has effective rank 1, so "
                       "later "
                       "layers see parallel tokens, and a later layer has rank >= 2")
    if _is_bottleneck(widths, ranks) and 1 not in ranks:
        return Formula(_general(widths, ranks), "paper",
                       "bottleneck: equal hidden widths <= d_0, d_l and a_i <= width")
    if _is_bottleneck(widths, ranks):
        return Formula(_general(widths, ranks), "derived",
                       "bottleneck formula with a rank-one layer and no later layer of rank >= 2")
    return Formula(_general(widths, ranks), "derived",
                   "effective widths b_i (what reaches and is read from layer i) and ranks "
                   "min(a_i, b_{i-1})")


def formula_dimension(arch: Architecture) -> Formula:
    """The dimension of the neuromanifold of ``arch`` by formula, or why none applies.

    Lightning, one layer [paper]: ``a(2d - a) + d d' - 1`` for ``a <= d``, ``d^2 + d d' - 1`` for
    ``a >= d``. Deep, under the bottleneck hypotheses as the course states them (hidden widths all
    ``delta <= d_0, d_l``, each ``a_i`` at most the width it acts on, no layer of rank one before a
    layer of rank at least two) [paper; with a rank ``a_i = 1``, derived], and for general widths
    [derived]::

        sum_i r_i (2 b_{i-1} - r_i) + sum_i b_i b_{i-1} - sum_{i<l} b_i^2 - l

    with effective widths ``b_i`` and ranks ``r_i = min(a_i, b_{i-1})``: ``b_0 = d_0``,
    ``b_l = d_l``, and for hidden layers ``b_i = min(d_0, ..., d_i)`` (a layer wider than an
    earlier one adds nothing), then, from the last layer back,
    ``b_i = min(b_i, 2 r_{i+1} + b_{i+1})`` (layer ``i+1`` reads only that many linear forms
    of its input: the rows of ``Q``, ``K`` and the part of ``V`` that later layers use).
    Softmax: the lightning formula plus ``l``, the dimension of the virtual weights ``(M, L)``
    (the paper's theorem for one layer; for deep networks what its conjecture, generic
    identifiability in ``(M, L)``, gives), also after a rank-one layer, whose softmax output is not
    rank one, so that there it exceeds the lightning dimension plus ``l``; for
    ``t = 1`` the linear map ``V_l ... V_1`` of rank ``b = min d_i``: ``b (d_0 + d_l - b)``
    [derived]. Lightning has no formula for ``t = 1``, nor after an intermediate rank-one layer
    followed by a layer of rank at least two. Residual blocks (``skip=True``, ``t >= 2``): the sum
    of the one-layer dimensions ``sum_i r_i (2d - r_i) + l (d^2 - 1)`` [derived], ``+ l`` for
    softmax [derived: parameters minus the ``GL_{a_i}`` orbits, met by float ranks with a clear
    gap; the paper's conjecture does not cover skip connections]; at ``t = 1`` softmax is
    ``x -> (I + V_l) ... (I + V_1) x``, dimension ``d^2``. A single residual block is a
    translate of the one-layer neuromanifold, so it has the paper's one-layer dimension.

    Examples
    --------
    >>> formula_dimension(Architecture((3, 3), (3,))).value
    17
    >>> formula_dimension(Architecture((3, 3, 3), (1, 3))).value is None
    True
    >>> formula_dimension(Architecture((5, 5, 5), (2, 2), normalization="softmax"))
    Formula(57, conjecture: lightning dimension + l)
    """
    if arch.skip:
        return _residual(arch)
    if arch.is_lightning:
        return _lightning(arch)
    widths, ranks = arch.widths, arch.ranks
    if arch.tokens == 1:
        b = min(widths)
        return Formula(b * (widths[0] + widths[-1] - b), "derived",
                       "t = 1: every softmax weight is 1, the network is x -> V_l ... V_1 x")
    status: FormulaStatus = "paper" if arch.layers == 1 else "conjecture"
    if _lightning(dataclasses.replace(arch, normalization="lightning")).value is None:
        return Formula(_general(widths, ranks) + arch.layers, status,
                       "general lightning formula + l (softmax tokens do not collapse)")
    return Formula(_general(widths, ranks) + arch.layers, status, "lightning dimension + l")


def _residual(arch: Architecture) -> Formula:
    """Residual blocks: the identity path fixes every hidden basis and scale [derived].

    Status ``"paper"`` for one block (a translate of the paper's one-layer neuromanifold),
    ``"derived"`` for deeper networks, lightning or softmax alike.
    """
    d, depth, softmax = arch.widths[0], arch.layers, not arch.is_lightning
    if arch.tokens == 1:
        if softmax:
            return Formula(d * d, "derived", "t = 1: every softmax weight is 1, the network is "
                           "x -> (I + V_l) ... (I + V_1) x")
        return Formula(None, "none", "t = 1: a layer sees only the symmetric part of A")
    value = sum(_one_layer(d, d, a) for a in arch.ranks) + depth * softmax
    # Deep softmax residual networks are outside the paper's conjecture (no skip connections):
    # "derived" from the known symmetries, checked by float ranks with a clear gap.
    status: FormulaStatus = "paper" if depth == 1 else "derived"
    return Formula(value, status, "residual blocks: the one-layer dimensions add up"
                   + (" (+ 1 per softmax layer)" if softmax else ""))


def span_dimension(d: int, d_out: int, tokens: int) -> int:
    """Dimension of the linear span of one layer's neuromanifold [derived].

    ``d' d d(d+1)/2`` for ``t >= 2``; ``d' C(d+2, 3)`` for ``t = 1``. Independent of ``a``.
    """
    return d_out * comb(d + 2, 3) if tokens == 1 else d_out * d * d * (d + 1) // 2


def monomials_per_entry(d: int, tokens: int) -> int:
    """Monomials in ``X`` of one output entry of a layer with generic weights [derived].

    ``(t - 1) d C(d + 1, 2) + C(d + 2, 3)``: for each key ``i != j`` the entry is quadratic in
    ``x_i`` and linear in ``x_j``; the ``i = j`` term is cubic in ``x_j``.
    """
    return (tokens - 1) * d * comb(d + 1, 2) + comb(d + 2, 3)
