"""The dimension atlas: a grid of lightning architectures, one row of ranks and bounds each.

:func:`atlas_grid` lists the architectures, :func:`atlas_row` computes one row (three
:func:`~lsa_helpers.function_space.dimension` calls), and :func:`atlas_problem` and
:func:`conjecture_problem` say what in a stored row contradicts the rest of that row.
"""

from __future__ import annotations

import dataclasses
from itertools import product
from typing import Any, TypeAlias

from .architecture import Architecture
from .formulas import formula_dimension
from .function_space import dimension
from .rank import CLEAR_GAP

__all__ = ["atlas_grid", "atlas_row"]

Row: TypeAlias = dict[str, Any]
"""One row of a table, keyed by column name; the cells' types are the schema's
(:data:`~lsa_helpers.tables.TABLES`), checked when a table is read."""

KINDS = ("one layer", "equal widths", "bottleneck", "wide hidden", "unequal hidden")
"""The shapes of widths that the atlas tells apart (its ``kind`` column)."""


def _kind(arch: Architecture) -> str:
    widths = arch.widths
    hidden = widths[1:-1]
    if not hidden:
        return "one layer"
    if len(set(widths)) == 1:
        return "equal widths"
    ends = min(widths[0], widths[-1])
    if len(set(hidden)) == 1 and hidden[0] <= ends:
        return "bottleneck"
    return "wide hidden" if max(hidden) > ends else "unequal hidden"


def atlas_grid() -> tuple[Architecture, ...]:
    """The lightning architectures of the atlas, without repeats, sorted by depth, widths, ranks.

    - one layer: every ``d <= 8``, ``d' <= 6``, ``a <= 9``, ``t`` in 1, 2, 3;
    - two layers of equal widths ``delta <= 8``, every ``a_1, a_2 <= delta``, ``t = 3``
      (and ``t`` = 1, 2 for ``delta <= 4``);
    - three layers of equal widths: every rank triple for ``delta <= 6``, ranks in
      ``{1, 2, 4, delta}`` for ``delta`` = 7, 8;
    - two layers of general widths ``d_0, d_1, d_2`` in ``{1, 2, 3, 5, 8}``, ranks
      ``a_1`` in ``{1, 2, d_0}``, ``a_2`` in ``{1, 2, d_1}`` (``a_i <=`` its input width):
      bottlenecks, wide hidden layers, rank-one intermediate layers;
    - three layers of general widths in ``{2, 4, 7}``, ranks ``(2, 2, 2)``,
      ``(d_0, d_1, d_2)`` and ``(2, 1, 2)`` (``a_i <=`` its input width).

    Rows with ``t = 3`` unless stated.
    """
    archs = [Architecture((d, d_out), (a,), tokens=t) for d, d_out, a, t in
             product(range(1, 9), range(1, 7), range(1, 10), (1, 2, 3))]
    for delta in range(1, 9):
        for a1, a2 in product(range(1, delta + 1), repeat=2):
            for t in ((1, 2, 3) if delta <= 4 else (3,)):
                archs.append(Architecture((delta,) * 3, (a1, a2), tokens=t))
        choices = range(1, delta + 1) if delta <= 6 else (1, 2, 4, delta)
        archs += [Architecture((delta,) * 4, r) for r in product(choices, repeat=3)]
    archs += [Architecture(widths, ranks) for widths in product((1, 2, 3, 5, 8), repeat=3)
              for ranks in product(sorted({1, 2, widths[0]}), sorted({1, 2, widths[1]}))
              if all(a <= d for a, d in zip(ranks, widths))]
    archs += [Architecture(widths, ranks) for widths in product((2, 4, 7), repeat=4)
              for ranks in ((2, 2, 2), widths[:3], (2, 1, 2))
              if all(a <= d for a, d in zip(ranks, widths))]
    unique = dict.fromkeys(archs)
    return tuple(sorted(unique, key=lambda a: (a.layers, a.widths, a.ranks, a.tokens)))


def _architecture_columns(arch: Architecture) -> Row:
    """The columns of an atlas row that follow from the widths, ranks and tokens alone."""
    lightning = formula_dimension(arch)
    softmax = formula_dimension(dataclasses.replace(arch, normalization="softmax"))
    return {"kind": _kind(arch), "rank_one_intermediate": 1 in arch.ranks[:-1],
            "layers": arch.layers, "parameters": arch.parameter_count,
            "formula_dimension": lightning.value, "formula_status": lightning.status,
            "softmax_formula_dimension": softmax.value, "softmax_formula_status": softmax.status}


def atlas_row(arch: Architecture, seed: int = 0) -> Row:
    """One row of the atlas: three :func:`dimension` calls on ``arch`` with ``rng=seed``.

    ``dimension(arch, method="certified")`` (exact rank, upper bound, certificate),
    ``dimension(arch, method="float")`` (float rank and gap) and the same widths, ranks and tokens
    with softmax, ``method="float"``. Returns a dict keyed by the atlas columns, gaps unrounded.

    Examples
    --------
    >>> row = atlas_row(Architecture((3, 3), (3,)))
    >>> row["formula_dimension"], row["exact_rank"], row["certified_dimension"], row["softmax_rank"]
    (17, 17, 17, 18)
    """
    exact = dimension(arch, method="certified", rng=seed)
    floating = dimension(arch, method="float", rng=seed)
    softmax = dimension(dataclasses.replace(arch, normalization="softmax"), method="float",
                        rng=seed)
    row = {**_architecture_columns(arch), "widths": arch.widths, "ranks": arch.ranks,
           "tokens": arch.tokens, "normalization": arch.normalization}
    for prefix, result in (("float_", floating), ("softmax_", softmax)):
        reading = result.float_reading
        assert reading is not None  # method="float" reads a float rank
        row.update({f"{prefix}rank": result.rank, f"{prefix}gap": reading.gap,
                    f"{prefix}verdict": reading.verdict,
                    f"{prefix}samples": result.samples, f"{prefix}stopped": result.stopped})
    row.update({"exact_rank": exact.rank, "upper_bound": exact.upper_bound,
                "certified_dimension": exact.certified_dimension,
                "exact_samples": exact.samples, "exact_stopped": exact.stopped,
                "softmax_upper_bound": softmax.upper_bound, "seed": seed})
    return row


def atlas_problem(row: Row) -> str | None:
    """What contradicts itself in an atlas row, or None.

    The columns that follow from the widths, ranks and tokens (depth, parameters, kind, today's
    formulas); the bounds (the formula, where one applies, equal to the exact rank; exact rank
    <= upper bound <= parameters); the certificate, present exactly when the bounds meet; the
    exact rank's stop reason; float ranks at most the parameters, and their verdicts.
    """
    widths, ranks = row["widths"], row["ranks"]
    if row["layers"] != len(ranks) or len(widths) != len(ranks) + 1:
        return f"layers = {row['layers']} with widths {widths} and ranks {ranks}"
    implied = _architecture_columns(Architecture(widths, ranks, tokens=row["tokens"]))
    for name, value in implied.items():
        if row[name] != value:
            return f"{name} = {row[name]!r}, not {value!r} as the widths, ranks and tokens give"
    exact, upper, formula = row["exact_rank"], row["upper_bound"], row["formula_dimension"]
    if formula is not None and formula != exact:
        return (f"formula dimension {formula} ({row['formula_status']}) disagrees with the "
                f"exact rank {exact}")
    if exact > upper:
        return f"exact rank {exact} exceeds the upper bound {upper}"
    certified = exact if exact == upper else None
    if row["certified_dimension"] != certified:
        return (f"certified_dimension = {row['certified_dimension']} with exact rank {exact} and "
                f"upper bound {upper}")
    if (row["exact_stopped"] == "met upper bound") != (exact == upper):
        return (f"exact_stopped = {row['exact_stopped']!r} with exact rank {exact} and upper "
                f"bound {upper}")
    for name in ("upper_bound", "float_rank", "softmax_rank", "softmax_upper_bound"):
        if row[name] > row["parameters"]:
            return f"{name} = {row[name]} exceeds the {row['parameters']} parameters"
    return _verdict_problem(row, "float_") or _verdict_problem(row, "softmax_")


def conjecture_problem(row: Row) -> str | None:
    """What contradicts itself in a row of the softmax experiments, or None: the parameters and
    expected dimension of its architecture, the trials, the largest rank and the right trials
    from the trial ranks, the verdict from the gap, the smallest gap at most the gap."""
    arch = Architecture((row["width"],) * (row["layers"] + 1),
                        (row["attention_rank"],) * row["layers"], "softmax", row["tokens"])
    ranks = row["trial_ranks"]
    implied = {"parameters": arch.parameter_count,
               "expected_dimension": formula_dimension(arch).value,
               "jacobian_rank": max(ranks),
               "trials_right": sum(r == row["expected_dimension"] for r in ranks)}
    if len(ranks) != row["trials"]:
        return f"trials = {row['trials']} but trial_ranks lists {len(ranks)} ranks"
    for name, value in implied.items():
        if row[name] != value:
            return f"{name} = {row[name]!r}, not {value!r} as the other columns give"
    if max(ranks) > arch.parameter_count or row["trials_clear"] > row["trials"]:
        return (f"trial ranks {ranks} above the {arch.parameter_count} parameters, or "
                f"trials_clear = {row['trials_clear']} above trials = {row['trials']}")
    if row["smallest_gap"] > row["gap"]:
        return f"smallest_gap = {row['smallest_gap']:.1e} exceeds gap = {row['gap']:.1e}"
    return _verdict_problem(row, "")


def _verdict_problem(row: Row, prefix: str) -> str | None:
    """A verdict that its gap contradicts: a clear rank has a gap of at least 1e4 (stored with two
    digits, it reads >= 1e4); an unclear one may have any gap, since other doubts than the gap
    (:attr:`~lsa_helpers.rank.FloatRank.reason`) make a rank unclear too."""
    gap, verdict = row[f"{prefix}gap"], row[f"{prefix}verdict"]
    if gap < CLEAR_GAP and verdict == "clear":
        return f"{prefix}verdict = {verdict!r} with {prefix}gap = {gap:.1e}"
    return None
