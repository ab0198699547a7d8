"""Command line: ``python -m lsa_helpers dimension|reproduce|data ...``."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import NoReturn

import numpy as np

from .architecture import Architecture
from .experiments import reproduce_softmax_conjecture
from .function_space import MAX_MEMORY, METHODS, check_memory, dimension, memory_estimate
from .rank import EXACT_FLOAT, PRIME

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def _sizes(name: str) -> Callable[[str], tuple[int, ...]]:
    def parse(text: str) -> tuple[int, ...]:
        try:
            return tuple(int(v) for v in text.split(","))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{name} must be comma-separated integers, got {text!r}") from None
    return parse


LARGE = 0.5e9
"""Bytes from which the command line announces a request's memory before running it."""


def _integer(name: str, minimum: int) -> Callable[[str], int]:
    """A parser of decimal integers of at least ``minimum`` (0 or 1) for option ``name``."""
    def parse(text: str) -> int:
        if not re.fullmatch("[0-9]+", text) or int(text) < minimum:
            what = "a positive" if minimum else "a non-negative"
            raise argparse.ArgumentTypeError(f"{name} must be {what} integer, got {text!r}")
        return int(text)
    return parse


_seed = _integer("--seed", 0)


def _gigabytes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(
            f"--max-memory must be a positive number of GB, got {text!r}")
    return value * 1e9


def _rounded(x: float) -> float | None:
    """Three significant digits; None for an infinite gap (dropped singular values exactly 0)."""
    return None if np.isinf(x) else float(f"{x:.3e}")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m lsa_helpers",
                     description="Dimensions of lightning and softmax self-attention networks.")
    commands = parser.add_subparsers(dest="command", required=True)
    dim = commands.add_parser("dimension", help="dimension of one architecture")
    dim.add_argument("--widths", type=_sizes("widths"), required=True, help="d_0,...,d_l")
    dim.add_argument("--ranks", type=_sizes("ranks"), required=True, help="a_1,...,a_l")
    dim.add_argument("--softmax", action="store_true", help="normalized attention")
    dim.add_argument("--tokens", type=int, default=3, help="tokens per input (default 3)")
    dim.add_argument("--skip", action="store_true", help="residual blocks Y + phi(Y)")
    dim.add_argument("--method", choices=METHODS, default="auto",
                     help="auto: certified for lightning, float for softmax")
    dim.add_argument("--seed", type=_seed, default=0)
    dim.add_argument("--max-memory", type=_gigabytes, default=MAX_MEMORY, metavar="GB",
                     help=f"refuse requests that need more memory (default {MAX_MEMORY / 1e9:g})")
    dim.add_argument("--json", action="store_true")
    rep = commands.add_parser("reproduce", help="rerun an experiment of the paper")
    rep.add_argument("experiment", choices=["softmax-conjecture"])
    rep.add_argument("--seed", type=_seed, default=0)
    rep.add_argument("--json", action="store_true")
    data = commands.add_parser("data", help="rebuild the precomputed tables")
    data.add_argument("action", choices=["build"])
    data.add_argument("--seed", type=_seed, default=0)
    data.add_argument("--folder", default=None,
                      help="where to write (default: the package's data folder, or $LSA_DATA_DIR)")
    for command in (rep, data):
        command.add_argument("--workers", type=_integer("--workers", 1), default=None,
                             help="processes (default: the CPUs this process may use)")
    return parser


EXACT_INNER = (EXACT_FLOAT - 1) // (PRIME - 1) ** 2
"""Exact ranks multiply residues mod the prime of the command line in float64 (exactly below
``2^53``): the inner dimension of a product, ``max(widths + ranks) * tokens``, is at most this."""


def _check_exact(arch: Architecture, method: str) -> None:
    """The command line's words for :func:`~lsa_helpers.differential.check_modulus` (no modulus)."""
    inner = max(arch.widths + arch.ranks)
    if method != "float" and arch.is_lightning and inner * arch.tokens > EXACT_INNER:
        what = ("the certified rank (the default for lightning)" if method == "auto"
                else f"--method {method}")
        raise ValueError(f"{what} needs max(widths + ranks) * tokens <= {EXACT_INNER}, got "
                         f"{inner} * {arch.tokens}; use --method float")


def _dimension(args: argparse.Namespace) -> str:
    arch = Architecture(args.widths, args.ranks, "softmax" if args.softmax else "lightning",
                        args.tokens, skip=args.skip)
    _check_exact(arch, args.method)
    needed = memory_estimate(arch, args.method)
    check_memory(needed, args.max_memory, "--max-memory")
    if needed >= LARGE:
        print(f"lsa_helpers: this request may need up to {needed / 1e9:.2g} GB of memory; "
              "the rank's progress follows", file=sys.stderr, flush=True)
    result = dimension(arch, method=args.method, rng=args.seed, max_memory=args.max_memory,
                       progress=True)
    record = {
        "widths": list(arch.widths), "ranks": list(arch.ranks),
        "normalization": arch.normalization, "tokens": arch.tokens, "skip": arch.skip,
        "parameters": arch.parameter_count, "formula_dimension": result.formula.value,
        "formula_status": result.formula.status, "rank": result.rank, "method": result.method,
        "upper_bound": result.upper_bound, "certified_dimension": result.certified_dimension,
        "samples": result.samples, "stopped": result.stopped, "seed": args.seed,
    }
    if result.float_reading is not None:
        record["singular_value_gap"] = _rounded(result.float_reading.gap)
        record["float_rank_is_clear"] = result.float_reading.is_clear
        record["float_rank_doubt"] = result.float_reading.reason
    if args.json:
        return json.dumps(record)
    return "\n".join(f"{key:>20}: {value}" for key, value in record.items())


def _reproduce(args: argparse.Namespace) -> str:
    rows = reproduce_softmax_conjecture(rng=args.seed, workers=args.workers)
    records = [{"width": r.width, "parameters": r.parameters,
                "expected_dimension": r.expected_dimension, "rank": r.rank,
                "singular_value_gap": _rounded(r.gap), "trials": len(r.trial_ranks),
                "trials_right": r.trials_right} for r in rows]
    if args.json:
        return json.dumps({"experiment": "softmax-conjecture", "seed": args.seed, "rows": records})
    header = list(records[0])
    lines = ["  ".join(f"{h:>18}" for h in header)]
    lines += ["  ".join(f"{rec[h]!s:>18}" for h in header) for rec in records]
    return "\n".join(lines)


def _data(args: argparse.Namespace) -> str:
    from . import _build  # its tables and progress bars load only for this command

    try:
        summary = _build.build_data(args.folder, seed=args.seed, workers=args.workers)
    except OSError as error:
        raise ValueError(f"cannot write the tables: {error}") from None
    lines = [f"{name}.csv: {rows} rows" for name, rows in summary["rows"].items()]
    return "\n".join([*lines, f"wrote {summary['folder']} in {summary['seconds']['total']} s"])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; every failure prints one line to stderr.

    Exit status: 2 for bad input (and requests above ``--max-memory``), 1 when memory runs out
    anyway or the output cannot be written, 130 on Ctrl-C (after which further ones are ignored:
    the process ends), 141 (silently, as for SIGPIPE) when the reader of the output is gone.
    """
    with _first_interrupt_only():
        try:
            args = _parser().parse_args(argv)
            run = {"dimension": _dimension, "reproduce": _reproduce, "data": _data}[args.command]
            return _print(run(args))
        except ValueError as error:
            return _fail(f"error: {error}", 2)
        except MemoryError:
            return _fail("out of memory: try a smaller architecture or fewer tokens", 1)
        except KeyboardInterrupt:
            return _fail("interrupted", 130)


@contextlib.contextmanager
def _first_interrupt_only() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt once; later ones are ignored, also after this block, while
    the process cleans up and ends. Without a Ctrl-C the previous handler comes back."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> NoReturn:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGINT) is interrupt:
            signal.signal(signal.SIGINT, previous)


def _print(text: str) -> int:
    """Print the result; 141 when the reader is gone, 1 when the output cannot be written."""
    try:
        print(text, flush=True)
    except OSError as error:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        if isinstance(error, BrokenPipeError):
            return 141
        return _fail(f"cannot write the output: {error.strerror or error}", 1)
    return 0


LONGEST = 200
"""Characters of one word that a message shows whole; a longer one is cut, with its length."""


def _fail(message: str, status: int) -> int:
    message = re.sub(rf"\S{{{LONGEST + 1},}}",
                     lambda m: f"{m.group()[:60]}... ({len(m.group())} characters)",
                     re.sub(r"\s*[\r\n]\s*", " ", message))
    print(f"lsa_helpers: {message}", file=sys.stderr)
    return status
