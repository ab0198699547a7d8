"""Weights of a network: tuples of ``(Q, K, V)`` per layer, random draws and flat vectors."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple, TypeAlias, TypeVar

import numpy as np

from . import _checks
from ._types import ArrayLike, Seed
from .architecture import Architecture

__all__ = [
    "Layer",
    "layer_from_attention",
    "random_inputs",
    "random_weights",
    "vector_to_weights",
    "weights_to_vector",
]


G = TypeVar("G", bound=NamedTuple)

Blocks: TypeAlias = dict[tuple[int, int], np.ndarray]
"""Values of a tangent vector by ``(group, factor)``: a layer (or head) and one of its factors."""


class Layer(NamedTuple):
    """One layer's weights: ``Q, K`` of shape ``(a, d)`` and ``V`` of shape ``(d', d)``."""

    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray

    @property
    def attention(self) -> np.ndarray:
        """The attention matrix ``A = K^T Q`` (``d x d``)."""
        return self.K.T @ self.Q


Weights: TypeAlias = Sequence[Layer]
"""The weights of a network: one :class:`Layer` per layer, first layer first."""


def layer_from_attention(A: ArrayLike, V: ArrayLike) -> Layer:
    """A layer with attention matrix ``A`` (``d x d``) and values ``V``: ``Q = A``, ``K = I_d``."""
    A, V = np.asarray(A, dtype=np.float64), np.asarray(V, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or V.ndim != 2 or V.shape[1] != A.shape[0]:
        raise ValueError(
            f"A must be d x d and V must be d' x d, got shapes {A.shape} and {V.shape}")
    return Layer(A, np.eye(A.shape[0]), V)


def as_generator(rng: Seed) -> np.random.Generator:
    """Normalise ``rng`` (a Generator, an int seed or None) to a ``numpy.random.Generator``."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (_checks.is_integer(rng) and rng >= 0):
        return np.random.default_rng(rng)
    raise ValueError(
        f"rng must be a numpy Generator, a non-negative int seed or None, got rng={rng!r}")


def draw(rng: np.random.Generator, shape: tuple[int, ...], modulus: int | None,
         scale: float) -> np.ndarray:
    """Gaussian entries of standard deviation ``scale``, or uniform residues mod ``modulus``
    (as float64): the entries of every random weight and input of the package."""
    if modulus is None:
        return rng.normal(scale=scale, size=shape)
    modulus = _checks.prime("modulus", modulus, inner=1)
    return rng.integers(0, modulus, size=shape).astype(np.float64)


def random_weights(arch: Architecture, rng: Seed = None, *,
                   modulus: int | None = None) -> tuple[Layer, ...]:
    """Random weights: Gaussian with variance ``1/d_{i-1}``, or uniform residues mod ``modulus``.

    Examples
    --------
    >>> from lsa_helpers import Architecture
    >>> [w.shape for w in random_weights(Architecture((3, 2), (1,)), 0)[0]]
    [(1, 3), (1, 3), (2, 3)]
    """
    rng = as_generator(rng)
    return tuple(
        Layer(*(draw(rng, shape, modulus, shape[1] ** -0.5) for shape in shapes))
        for shapes in arch.layer_shapes
    )


def random_inputs(arch: Architecture, count: int, rng: Seed = None, *,
                  modulus: int | None = None) -> np.ndarray:
    """``count`` random inputs, shape ``(count, d_0, t)``: standard Gaussian or residues mod p."""
    count = _checks.positive_int("count", count)
    return draw(as_generator(rng), (count, arch.widths[0], arch.tokens), modulus, 1.0)


def check_weights(arch: Architecture, weights: Weights, *,
                  modulus: int | None = None) -> tuple[Layer, ...]:
    """``weights`` as a tuple of :class:`Layer`, after checking their shapes against ``arch``.

    With a ``modulus`` (a prime with ``max(widths + ranks) (p - 1)^2 < 2^53``, so that products
    of residues are exact in float64) the weights must be integers; they are returned reduced.
    """
    if modulus is not None:
        modulus = _checks.prime("modulus", modulus, inner=max(arch.widths + arch.ranks))
    return checked_shapes(weights, arch.layer_shapes, Layer, "layer", modulus=modulus)


def checked_shapes(groups: Iterable[Iterable[ArrayLike]],
                   shapes: Sequence[tuple[tuple[int, int], ...]], factors: type[G], name: str,
                   *, modulus: int | None = None) -> tuple[G, ...]:
    """``groups`` as a tuple of ``factors`` (a NamedTuple of float64 arrays, e.g. :class:`Layer`)
    with the given shapes; with a (checked) ``modulus``, integers reduced mod ``modulus``.

    Raises a one-line ``ValueError`` naming the ``name`` (layer or head) whose shapes differ.
    """
    def values(w: ArrayLike) -> np.ndarray:
        if modulus is None:
            return np.asarray(w, dtype=np.float64)
        return np.mod(_checks.integer_array("weights", w), modulus).astype(np.float64)

    groups = tuple(groups)
    if len(groups) != len(shapes):
        raise ValueError(f"weights must have {len(shapes)} {name}s, got {len(groups)}")
    checked = []
    for i, (group, expected) in enumerate(zip(groups, shapes), start=1):
        arrays = tuple(values(w) for w in group)
        got = tuple(w.shape for w in arrays)
        if got != expected:
            raise ValueError(f"{name} {i} weights ({', '.join(factors._fields)}) must have "
                             f"shapes {expected}, got {got}")
        checked.append(factors._make(arrays))
    return tuple(checked)


def weights_to_vector(weights: Weights) -> np.ndarray:
    """Flatten ``(Q_1, K_1, V_1, Q_2, ...)`` row-major into one parameter vector."""
    return np.concatenate([np.ravel(w) for layer in weights for w in layer])


def vector_to_weights(arch: Architecture, vector: ArrayLike) -> tuple[Layer, ...]:
    """Inverse of :func:`weights_to_vector`."""
    vector = np.asarray(vector, dtype=np.float64)
    if vector.shape != (arch.parameter_count,):
        raise ValueError(
            f"vector must have shape ({arch.parameter_count},), got {vector.shape}"
        )
    sizes = [r * c for shapes in arch.layer_shapes for r, c in shapes]
    parts = iter(np.split(vector, np.cumsum(sizes)[:-1]))
    return tuple(
        Layer(*(next(parts).reshape(shape) for shape in shapes)) for shapes in arch.layer_shapes
    )


def parameter_placer(group_shapes: Sequence[tuple[tuple[int, int], ...]],
                     rows: list[np.ndarray]) -> Callable[[int, Blocks], None]:
    """``place(count, {(group, factor): values})`` appends ``count`` parameter vectors to ``rows``.

    ``group_shapes`` lists each layer's (or head's) factor shapes, in the order of
    :func:`weights_to_vector`; ``values`` has ``count`` rows of that factor's entries, the other
    coordinates are 0. Tangent vectors are assembled this way, block by block.
    """
    sizes = [[r * c for r, c in shapes] for shapes in group_shapes]
    starts = np.cumsum([0] + [sum(group) for group in sizes])
    total = starts[-1]

    def place(count: int, parts: Blocks) -> None:
        out = np.zeros((count, total))
        for (i, factor), values in parts.items():
            start = starts[i] + sum(sizes[i][:factor])
            out[:, start:start + sizes[i][factor]] = values.reshape(count, -1)
        rows.append(out)

    return place
