"""Multi-head lightning attention: heads with their own attention and value ranks, summed."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from math import ceil
from typing import NamedTuple, TypeAlias

import numpy as np

from . import _checks
from ._types import ArrayLike, Seed
from .architecture import Architecture
from .differential import check_modulus, jacobian
from .formulas import span_dimension
from .function_space import MAX_MEMORY, StopReason, check_memory, grow_rank, jacobian_bytes
from .network import layer_forward
from .rank import PRIME, exact_rank, inverse, kernel, reducer
from .weights import Blocks, Layer, as_generator, checked_shapes, draw, parameter_placer

__all__ = [
    "Head",
    "HeadsDimension",
    "MultiHead",
    "head_symmetry_tangents",
    "multihead_dimension",
    "multihead_forward",
    "multihead_jacobian",
    "permute_heads",
    "random_heads",
]


@dataclasses.dataclass(frozen=True)
class MultiHead:
    """One multi-head lightning layer ``X -> sum_h U_h W_h X (X^T K_h^T Q_h X)``.

    Head ``h`` has ``Q_h, K_h`` of shape ``(a_h, d)`` and a value ``V_h = U_h W_h`` of rank at
    most ``rho_h``: ``W_h`` is ``(rho_h, d)`` and ``U_h`` is ``(d', rho_h)``, as in a transformer
    whose value and output projections are split among the heads.

    Examples
    --------
    >>> heads = MultiHead(4, 4, ranks=(2, 2), value_ranks=(2, 2))
    >>> heads.parameter_count, heads.expected_dimension
    (64, 46)
    """

    d: int
    d_out: int
    ranks: tuple[int, ...]
    value_ranks: tuple[int, ...]
    tokens: int = 3

    def __post_init__(self) -> None:
        d, d_out = _checks.positive_int("d", self.d), _checks.positive_int("d_out", self.d_out)
        ranks = _checks.sizes("ranks", self.ranks)
        value_ranks = _checks.sizes("value_ranks", self.value_ranks)
        if len(value_ranks) != len(ranks):
            raise ValueError(f"value_ranks must have one entry per head ({len(ranks)}), "
                             f"got value_ranks={value_ranks!r}")
        tokens = _checks.positive_int("tokens", self.tokens)
        for name, value in (("d", d), ("d_out", d_out), ("ranks", ranks),
                            ("value_ranks", value_ranks), ("tokens", tokens)):
            object.__setattr__(self, name, value)

    @property
    def heads(self) -> int:
        return len(self.ranks)

    @property
    def head_shapes(self) -> tuple[tuple[tuple[int, int], ...], ...]:
        """Shapes of ``(Q_h, K_h, W_h, U_h)`` for each head."""
        return tuple(((a, self.d), (a, self.d), (rho, self.d), (self.d_out, rho))
                     for a, rho in zip(self.ranks, self.value_ranks))

    @property
    def parameter_count(self) -> int:
        """``sum_h 2 a_h d + rho_h (d + d')``."""
        return sum(r * c for shapes in self.head_shapes for r, c in shapes)

    @property
    def symmetry_dimension(self) -> int:
        """``sum_h (a_h^2 + rho_h^2 + 1)``: ``GL_{a_h}``, ``GL_{rho_h}`` and one scaling per head.

        For a factor wider than it needs to be the orbit is smaller: the fiber of
        ``(Q, K) -> K^T Q`` has dimension ``2ad - r(2d - r)``, ``r = min(a, d)`` (``a^2`` for
        ``a <= d``), and that of ``(W, U) -> U W`` has ``rho(d + d') - r(d + d' - r)``,
        ``r = min(rho, d, d')``.
        """
        d, e = self.d, self.d_out
        total = 0
        for a, rho in zip(self.ranks, self.value_ranks):
            r, s = min(a, d), min(rho, d, e)
            total += 2 * a * d - r * (2 * d - r) + rho * (d + e) - s * (d + e - s) + 1
        return total

    @property
    def mixing_pairs(self) -> tuple[tuple[int, int], ...]:
        """Ordered pairs ``(g, h)`` of heads that can trade a term [derived].

        When ``a_g >= d`` (any ``A_g`` is allowed) and ``rho_h >= min(d, d')`` (any ``V_h``),
        ``V_g (x) A_g + V_h (x) A_h = V_g (x) (A_g + c A_h) + (V_h - c V_g) (x) A_h``.
        """
        free_attention = [a >= self.d for a in self.ranks]
        free_value = [rho >= min(self.d, self.d_out) for rho in self.value_ranks]
        return tuple((g, h) for g in range(self.heads) for h in range(self.heads)
                     if g != h and free_attention[g] and free_value[h])

    @property
    def span_dimension(self) -> int:
        """Dimension of the span of one layer's functions, which contains every sum of heads."""
        return span_dimension(self.d, self.d_out, self.tokens)

    @property
    def expected_dimension(self) -> int:
        """``min(span, parameters - symmetries - mixing pairs)``: a count, not a theorem.

        Right when the known fiber directions are independent and there are no others: exact
        ranks confirm it for the transformer split ``a_h = rho_h = d / h`` (all ``d, d' <= 8``)
        and find it off elsewhere, e.g. two heads with ``d = 3, d' = 1, a = 2`` (notebook 08).
        """
        free = self.parameter_count - self.symmetry_dimension - len(self.mixing_pairs)
        return min(self.span_dimension, free)

    def head_architecture(self, h: int) -> Architecture:
        """Head ``h`` as a one-layer architecture (its value ``U_h W_h`` as one matrix)."""
        return Architecture((self.d, self.d_out), (self.ranks[h],), tokens=self.tokens)

    def __str__(self) -> str:
        return (f"{self.heads} heads d={self.d} d'={self.d_out} "
                f"ranks={self.ranks} value_ranks={self.value_ranks} t={self.tokens}")


class Head(NamedTuple):
    """One head's weights: attention ``Q, K`` and value factors ``W`` (``rho x d``), ``U``."""

    Q: np.ndarray
    K: np.ndarray
    W: np.ndarray
    U: np.ndarray

    @property
    def layer(self) -> Layer:
        """The head as a one-layer ``(Q, K, V = U W)``."""
        return Layer(self.Q, self.K, self.U @ self.W)


Heads: TypeAlias = Sequence[Head]
"""The weights of a multi-head layer: one :class:`Head` per head."""


def random_heads(heads: MultiHead, rng: Seed = None, *,
                 modulus: int | None = None) -> tuple[Head, ...]:
    """Random head weights: Gaussian with variance ``1 / (fan-in)``, or residues mod ``modulus``."""
    rng = as_generator(rng)
    return tuple(Head(*(draw(rng, shape, modulus, shape[1] ** -0.5) for shape in shapes))
                 for shapes in heads.head_shapes)


def _check_heads(heads: MultiHead, weights: Heads, modulus: int | None = None) -> tuple[Head, ...]:
    """The head weights with their shapes checked; with a ``modulus`` (a prime whose residues
    multiply exactly over the heads' widths and ranks), integers reduced mod ``modulus``."""
    if modulus is not None:
        widest = max(heads.d, heads.d_out, *heads.ranks, *heads.value_ranks)
        modulus = _checks.prime("modulus", modulus, inner=widest)
    return checked_shapes(weights, heads.head_shapes, Head, "head", modulus=modulus)


def _check_modulus(heads: MultiHead, modulus: int) -> int:
    """``modulus``, checked as :func:`~lsa_helpers.differential.check_modulus` checks it for one
    layer whose largest width or rank is that of the heads: their products are exact mod p."""
    widest = max(heads.ranks + heads.value_ranks)
    return check_modulus(Architecture((heads.d, heads.d_out), (widest,), tokens=heads.tokens),
                         modulus)


def multihead_forward(weights: Heads, X: ArrayLike) -> np.ndarray:
    """``sum_h U_h W_h X (X^T K_h^T Q_h X)``, each head re-associated in ``O(t)``."""
    return np.sum([layer_forward(Head(*head).layer, X) for head in weights], axis=0)


def permute_heads(weights: Heads, order: Sequence[int]) -> tuple[Head, ...]:
    """The heads in the order ``order`` (a permutation): the same function."""
    weights = tuple(weights)
    if sorted(order) != list(range(len(weights))):
        raise ValueError(f"order must be a permutation of 0..{len(weights) - 1}, got {order!r}")
    return tuple(weights[h] for h in order)


def multihead_jacobian(heads: MultiHead, weights: Heads, inputs: ArrayLike, *,
                       modulus: int | None = None) -> np.ndarray:
    """Jacobian of ``weights -> (F(X_1), ..., F(X_N))``, columns ``(Q_h, K_h, W_h, U_h)`` per head.

    The output is a sum over heads, so the Jacobian is the heads' one-layer Jacobians side by
    side; ``V = U W`` turns a head's ``V`` columns ``J_V`` into ``J_W = J_V (U kron I)`` and
    ``J_U = J_V (I kron W^T)`` (from ``dV = U dW + dU W``).
    """
    if modulus is not None:
        modulus = _check_modulus(heads, modulus)
    weights = _check_heads(heads, weights, modulus)
    red = reducer(modulus)
    blocks = []
    for h, head in enumerate(weights):
        J = jacobian(heads.head_architecture(h), [Layer(*head.layer[:2], red(head.U @ head.W))],
                     inputs, modulus=modulus)
        attention = 2 * head.Q.size
        J_V = J[:, attention:].reshape(len(J), heads.d_out, heads.d)
        J_W = red(np.einsum("noi,or->nri", J_V, head.U)).reshape(len(J), -1)
        J_U = red(np.einsum("noi,ri->nor", J_V, head.W)).reshape(len(J), -1)
        blocks += [J[:, :attention], J_W, J_U]
    return np.concatenate(blocks, axis=1)


def head_symmetry_tangents(heads: MultiHead, weights: Heads, *,
                           modulus: int | None = None) -> np.ndarray:
    """Known fiber directions at ``weights``, one per row, in parameter coordinates.

    Per head: the tangent space of the fiber of ``(Q_h, K_h) -> K_h^T Q_h`` (the ``GL_{a_h}``
    orbit, :func:`_product_fiber`), that of ``(W_h, U_h) -> U_h W_h`` (larger than the
    ``GL_{rho_h}`` orbit when ``min(d, d') < rho_h < max(d, d')``), and the scaling
    ``(dQ_h, dW_h) = (Q_h, -W_h)``; then one direction per pair of
    :attr:`MultiHead.mixing_pairs` [derived].
    """
    weights = _check_heads(heads, weights, modulus)
    rows: list[np.ndarray] = []
    place = parameter_placer(heads.head_shapes, rows)
    for h, (Q, K, W, U) in enumerate(weights):
        dKt, dQ = _product_fiber(K.T, Q, modulus)
        place(len(dQ), {(h, 0): dQ, (h, 1): np.swapaxes(dKt, 1, 2)})
        dU, dW = _product_fiber(U, W, modulus)
        place(len(dW), {(h, 2): dW, (h, 3): dU})
        place(1, {(h, 0): Q, (h, 2): -W})
    for g, h in heads.mixing_pairs:
        place(1, _mixing(weights[g], weights[h], g, h, modulus))
    return reducer(modulus)(np.concatenate(rows))


def _product_fiber(L: np.ndarray, R: np.ndarray,
                   modulus: int | None) -> tuple[np.ndarray, np.ndarray]:
    """A basis ``(dL, dR)`` of ``{dL R + L dR = 0}``: the tangent space of the fiber of ``L R``."""
    (m, k), n = L.shape, R.shape[1]
    M = np.concatenate([np.einsum("xi,ry->xyir", np.eye(m), R).reshape(m * n, m * k),
                        np.einsum("xr,yj->xyrj", L, np.eye(n)).reshape(m * n, k * n)], axis=1)
    basis = kernel(reducer(modulus)(M), modulus)
    return basis[:, :m * k].reshape(-1, m, k), basis[:, m * k:].reshape(-1, k, n)


def _mixing(head_g: Head, head_h: Head, g: int, h: int,
            modulus: int | None) -> Blocks:
    """The direction ``(dA_g, dV_h) = (A_h, -V_g)`` in parameters (see ``mixing_pairs``).

    ``dQ_g = K_g (K_g^T K_g)^{-1} A_h``; ``-V_g = dU_h W_h`` with
    ``dU_h = -V_g (W_h^T W_h)^{-1} W_h^T`` when ``rho_h >= d``, else ``-V_g = U_h dW_h`` with
    ``dW_h = -U_h^T (U_h U_h^T)^{-1} V_g``. Empty where an inverse does not exist.
    """
    red = reducer(modulus)

    def mul(*factors: np.ndarray) -> np.ndarray:
        """A product, reduced mod p after every step (exact in float64)."""
        out = factors[0]
        for factor in factors[1:]:
            out = red(out @ factor)
        return out

    Q, K, W, U = head_h
    Kg, Vg = head_g.K, mul(head_g.U, head_g.W)
    gram = inverse(mul(Kg.T, Kg), modulus)
    if gram is None:
        return {}
    parts = {(g, 0): mul(Kg, gram, mul(K.T, Q))}
    wide = W.shape[0] >= W.shape[1]  # rho_h >= d: solve for dU_h, else for dW_h
    gram = inverse(mul(W.T, W) if wide else mul(U, U.T), modulus)
    if gram is None:
        return {}
    if wide:
        parts[(h, 3)] = -mul(Vg, gram, W.T)
    else:
        parts[(h, 2)] = -mul(U.T, gram, Vg)
    return parts


@dataclasses.dataclass(frozen=True)
class HeadsDimension:
    """Exact bounds on the dimension of a multi-head layer's function space.

    ``rank``: Jacobian rank mod ``modulus`` on ``samples`` inputs, a proved lower bound.
    ``upper_bound``: the span's dimension, or parameters minus the rank of the fiber tangents of
    :func:`head_symmetry_tangents` if smaller. ``stopped``:
    as in :func:`~lsa_helpers.function_space.dimension`.
    """

    heads: MultiHead
    rank: int
    upper_bound: int
    samples: int
    stopped: StopReason

    @property
    def certified_dimension(self) -> int | None:
        return self.rank if self.rank == self.upper_bound else None


def multihead_dimension(heads: MultiHead, *, rng: Seed = None, modulus: int = PRIME,
                        max_memory: float = MAX_MEMORY) -> HeadsDimension:
    """Exact rank mod ``modulus`` at a random point, with adaptively many inputs, and its bounds.

    Examples
    --------
    >>> multihead_dimension(MultiHead(4, 4, ranks=(2, 2), value_ranks=(2, 2)), rng=0).rank
    46
    """
    modulus = _check_modulus(heads, modulus)
    count = ceil(heads.parameter_count / (heads.d_out * heads.tokens))
    check_memory(jacobian_bytes(heads.parameter_count, count * heads.d_out * heads.tokens,
                                exact=True), max_memory)
    rng = as_generator(rng)
    weights = random_heads(heads, rng, modulus=modulus)
    tangents = head_symmetry_tangents(heads, weights, modulus=modulus)
    upper = min(heads.span_dimension, heads.parameter_count - exact_rank(tangents, modulus))

    def rows(n: int) -> np.ndarray:
        inputs = draw(rng, (n, heads.d, heads.tokens), modulus, 1.0)
        return multihead_jacobian(heads, weights, inputs, modulus=modulus)

    rank, samples, stopped, _ = grow_rank(rows, count, upper, modulus=modulus, rng=rng)
    return HeadsDimension(heads, rank, upper, samples, stopped)
