"""Type aliases of the package's signatures: arrays in, random seeds."""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["ArrayLike", "Seed"]

Seed: TypeAlias = "int | np.random.Generator | None"
"""What ``rng=`` accepts: a Generator, a non-negative int seed or None (fresh entropy)."""
