"""Architectures of deep (lightning or softmax) self-attention networks."""

from __future__ import annotations

import dataclasses
from typing import Literal, get_args

from . import _checks

__all__ = ["NORMALIZATIONS", "Architecture"]

Normalization = Literal["lightning", "softmax"]
NORMALIZATIONS: tuple[Normalization, ...] = get_args(Normalization)
"""The attention normalizations: none (lightning, a polynomial) or the column softmax."""


@dataclasses.dataclass(frozen=True)
class Architecture:
    """A deep self-attention network: widths ``d_0..d_l``, attention ranks ``a_1..a_l``.

    Layer ``i`` has ``Q_i, K_i`` of shape ``(a_i, d_{i-1})`` and ``V_i`` of shape
    ``(d_i, d_{i-1})``; inputs are ``d_0 x t`` matrices whose columns are the tokens. With
    ``skip=True`` every layer is a residual block ``Y -> Y + phi_{W_i}(Y)`` (equal widths).

    Examples
    --------
    >>> arch = Architecture((3, 2), (2,))
    >>> arch.parameter_count
    18
    >>> Architecture((4, 4, 4), (2, 3), normalization="softmax").layers
    2
    >>> print(Architecture((3, 3, 3), (2, 2), skip=True))
    lightning widths=(3,3,3) ranks=(2,2) t=3 skip
    """

    widths: tuple[int, ...]
    ranks: tuple[int, ...]
    normalization: Normalization = "lightning"
    tokens: int = 3
    skip: bool = False

    def __post_init__(self) -> None:
        widths = _checks.sizes("widths", self.widths)
        ranks = _checks.sizes("ranks", self.ranks)
        if len(widths) < 2:
            raise ValueError(f"widths must list at least d_0 and d_1, got widths={widths!r}")
        if len(ranks) != len(widths) - 1:
            raise ValueError(
                f"ranks must have one entry per layer (len(widths) - 1 = {len(widths) - 1}), "
                f"got ranks={ranks!r}"
            )
        _checks.choice("normalization", self.normalization, NORMALIZATIONS)
        tokens = _checks.positive_int("tokens", self.tokens)
        skip = _checks.bool_flag("skip", self.skip)
        if skip and len(set(widths)) > 1:
            raise ValueError(f"skip=True needs equal widths (Y + phi(Y)), got widths={widths!r}")
        object.__setattr__(self, "widths", widths)
        object.__setattr__(self, "ranks", ranks)
        object.__setattr__(self, "tokens", tokens)
        object.__setattr__(self, "skip", skip)

    @property
    def layers(self) -> int:
        """Depth ``l``."""
        return len(self.ranks)

    @property
    def degree(self) -> int:
        """Degree ``3^l`` of the network in its input (lightning)."""
        return 3**self.layers

    @property
    def layer_shapes(self) -> tuple[tuple[tuple[int, int], ...], ...]:
        """Shapes of ``(Q_i, K_i, V_i)`` for each layer."""
        return tuple(
            ((a, d_in), (a, d_in), (d_out, d_in))
            for a, d_in, d_out in zip(self.ranks, self.widths, self.widths[1:])
        )

    @property
    def layer_parameter_counts(self) -> tuple[int, ...]:
        """``(2 a_i + d_i) d_{i-1}`` for each layer."""
        return tuple((2 * a + d_out) * d_in for a, d_in, d_out in
                     zip(self.ranks, self.widths, self.widths[1:]))

    @property
    def parameter_count(self) -> int:
        """``sum_i (2 a_i + d_i) d_{i-1}``."""
        return sum(self.layer_parameter_counts)

    @property
    def is_lightning(self) -> bool:
        return self.normalization == "lightning"

    def __str__(self) -> str:
        widths = ",".join(map(str, self.widths))
        ranks = ",".join(map(str, self.ranks))
        skip = " skip" if self.skip else ""
        return f"{self.normalization} widths=({widths}) ranks=({ranks}) t={self.tokens}{skip}"
