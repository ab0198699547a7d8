"""Argument checks: each returns the value in its canonical type or raises a one-line error.

Every message names the argument, states the rule and shows what was received, e.g.
``ValueError: samples must be an integer >= 1, got samples=0``. Bools are not numbers here
(``True`` is refused where a count is expected); numpy integers and floats are numbers.
The module loads numpy only where an array is checked, so that the modules which need no
numpy (architectures, formulas) load none.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import numpy as np

S = TypeVar("S", bound=str)

EXACT_FLOAT = 2**53
"""float64 holds every integer of smaller magnitude exactly, and not every larger one."""

MAX_PRIME = 2**62
"""Moduli must lie below this: FLINT's ``nmod_mat`` works with word-size residues."""


def is_integer(value: Any) -> bool:
    """Whether ``value`` is an integer (Python or numpy), a bool not counting as one.

    numpy registers its integers as ``numbers.Integral`` and its floats as ``numbers.Real``,
    and its bool as neither.
    """
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_real(value: Any) -> bool:
    """Whether ``value`` is a real number (Python or numpy), a bool not counting as one."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def integer(name: str, value: Any, minimum: int, *, maximum: int | None = None) -> int:
    """``value`` as an ``int``, if it is an integer ``>= minimum`` (and ``<= maximum``)."""
    if not is_integer(value) or value < minimum or (maximum is not None and value > maximum):
        rule = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}"
        raise ValueError(f"{name} must be an integer {rule}, got {name}={value!r}")
    return int(value)


def positive_int(name: str, value: Any) -> int:
    """``value`` as an ``int``, if it is an integer ``>= 1``."""
    return integer(name, value, 1)


def nonnegative_int(name: str, value: Any) -> int:
    """``value`` as an ``int``, if it is an integer ``>= 0``."""
    return integer(name, value, 0)


def optional_positive_int(name: str, value: Any) -> int | None:
    """None, or ``value`` as an ``int`` if it is an integer ``>= 1``."""
    if value is not None and (not is_integer(value) or value < 1):
        raise ValueError(f"{name} must be an integer >= 1 or None, got {name}={value!r}")
    return None if value is None else int(value)


def seed(name: str, value: Any) -> int:
    """``value`` as an ``int``, if it seeds ``numpy.random.default_rng`` (an integer >= 0)."""
    if not is_integer(value) or value < 0:
        raise ValueError(f"{name} must be an integer seed >= 0, got {name}={value!r}")
    return int(value)


def finite(name: str, value: Any) -> float:
    """``value`` as a ``float``, if it is a finite real number."""
    if not is_real(value) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {name}={value!r}")
    return float(value)


def finite_positive(name: str, value: Any) -> float:
    """``value`` as a ``float``, if it is a finite real number ``> 0`` (nan and inf refused)."""
    if not is_real(value) or not 0 < value < math.inf:
        raise ValueError(f"{name} must be a finite number > 0, got {name}={value!r}")
    return float(value)


def finite_nonnegative(name: str, value: Any) -> float:
    """``value`` as a ``float``, if it is a finite real number ``>= 0``."""
    if not is_real(value) or not 0 <= value < math.inf:
        raise ValueError(f"{name} must be a finite number >= 0, got {name}={value!r}")
    return float(value)


def fraction(name: str, value: Any, *, zero: bool = False) -> float:
    """``value`` as a ``float``, if ``0 < value < 1`` (``0 <= value < 1`` with ``zero=True``)."""
    if not (is_real(value) and (0 <= value if zero else 0 < value) and value < 1):
        rule = "in [0, 1)" if zero else "between 0 and 1"
        raise ValueError(f"{name} must be a number {rule}, got {name}={value!r}")
    return float(value)


def bool_flag(name: str, value: Any) -> bool:
    """``value`` as a ``bool``, if it is ``True`` or ``False`` (numpy bools too)."""
    numpy = sys.modules.get("numpy")  # a numpy bool exists only once numpy is loaded
    if not (isinstance(value, bool) or (numpy is not None and isinstance(value, numpy.bool_))):
        raise ValueError(f"{name} must be True or False, got {name}={value!r}")
    return bool(value)


def choice(name: str, value: Any, choices: tuple[S, ...]) -> S:
    """``value``, if it is one of ``choices`` (a closed set of strings)."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def function(name: str, value: Any, description: str) -> Callable[..., Any]:
    """``value``, if it is callable (``description``: the map it should compute)."""
    if not callable(value):
        raise ValueError(f"{name} must be a callable {description}, got {value!r}")
    return value


def sizes(name: str, values: Any) -> tuple[int, ...]:
    """A non-empty sequence of positive integers, as a tuple of ``int``."""
    try:
        if isinstance(values, (str, AbstractSet, Mapping)):  # no order, or not numbers
            raise TypeError
        items: tuple[Any, ...] = tuple(values)
    except TypeError:
        raise ValueError(
            f"{name} must be a sequence of positive integers, got {name}={values!r}") from None
    if not items or not all(is_integer(v) and v > 0 for v in items):
        raise ValueError(f"{name} must be positive integers, got {name}={items!r}")
    return tuple(int(v) for v in items)


def is_prime(n: int) -> bool:
    """Whether the integer ``0 <= n < 3.3 * 10^24`` is prime: Miller-Rabin with the first twelve
    primes as bases, which no composite below that bound passes (Sorenson and Webster, 2015)."""
    bases = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)
    if n < 2 or n in bases:
        return n in bases
    if any(n % b == 0 for b in bases):
        return False
    odd, twos = n - 1, 0
    while odd % 2 == 0:
        odd, twos = odd // 2, twos + 1
    for b in bases:
        x = pow(b, odd, n)
        if x in (1, n - 1):
            continue
        for _ in range(twos - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def prime(name: str, value: Any, *, inner: int = 0) -> int:
    """``value`` as an ``int``, if it is a prime ``p`` with ``2 <= p < 2^62`` and, for
    ``inner >= 1``, ``inner (p - 1)^2 < 2^53``: float64 sums of ``inner`` products of residues are
    then exact.

    A composite modulus has no inverses to eliminate with (FLINT would abort the process).

    >>> prime("modulus", 7)
    7
    """
    if not (is_integer(value) and 2 <= value < MAX_PRIME and is_prime(int(value))):
        raise ValueError(f"{name} must be a prime p with 2 <= p < 2^62, got {name}={value!r}")
    if inner * (int(value) - 1) ** 2 >= EXACT_FLOAT:
        factor = f"{inner} * " if inner > 1 else ""
        raise ValueError(f"{name} must satisfy {factor}({name} - 1)^2 < 2^53 for exact float64 "
                         f"products, got {name}={value}")
    return int(value)


def integer_array(name: str, values: Any) -> np.ndarray:
    """``values`` as an integer array (int64, or Python ints beyond it), refusing anything else.

    Floats must be finite integers of magnitude below ``2^(m + 1)`` for ``m`` mantissa bits
    (``2^53`` for float64, ``2^24`` for float32, ``2^11`` for float16), where they are exact; a
    larger float may not be the integer that was meant, so its residue mod p would be wrong.
    """
    import numpy as np

    A = np.asarray(values)
    if A.dtype.kind in "iub":
        wide = A.dtype == np.uint64 and A.size and A.max() > np.iinfo(np.int64).max
        return A.astype(object) if wide else A.astype(np.int64)
    if A.dtype == object and all(isinstance(x, (int, np.integer)) for x in A.flat):
        return np.array([int(x) for x in A.flat], dtype=object).reshape(A.shape)
    if A.dtype.kind != "f" or (A.size and not (np.all(np.isfinite(A))
                                              and np.array_equal(A, np.round(A)))):
        raise ValueError(f"{name} must be a 2-D array of integers, got shape {A.shape}"
                         if name == "M" else f"{name} must be integers when a modulus is given")
    bits = min(np.finfo(A.dtype).nmant + 1, 63)
    if A.size and np.max(np.abs(A)) >= 2.0**bits:
        raise ValueError(f"{name} must be integers below 2^{bits} in magnitude when given as "
                         f"{A.dtype} ({A.dtype} is not exact beyond), got {np.max(np.abs(A)):.3g}")
    return A.astype(np.int64)
