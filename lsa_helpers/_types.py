"""Type aliases of the package's signatures: arrays in and out, random seeds."""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

__all__ = ["Array", "ArrayLike", "FloatArray", "Seed"]

FloatArray: TypeAlias = npt.NDArray[np.float64]
"""A real array, the package's float64 results."""

Array: TypeAlias = npt.NDArray[Any]
"""An array of any dtype: float64, complex or object (exact residues, sympy entries)."""

Seed: TypeAlias = "int | np.random.Generator | None"
"""What ``rng=`` accepts: a Generator, a non-negative int seed or None (fresh entropy)."""
