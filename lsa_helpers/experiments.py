"""The paper's numerical experiment on the softmax conjecture, rerun with exact-enough float64."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TypeAlias

import numpy as np

from . import _checks
from ._types import Seed
from .architecture import Architecture
from .differential import jacobian
from .formulas import formula_dimension
from .function_space import MAX_MEMORY, check_memory, float_rank_memory
from .rank import FloatRank, float_rank
from .weights import as_generator, random_inputs, random_weights
from .workers import parallel_map, worker_count

__all__ = ["ConjectureRow", "reproduce_softmax_conjecture"]

Job: TypeAlias = "tuple[Architecture, np.random.Generator, int]"
"""One trial: its architecture, its generator and its number of inputs."""


@dataclasses.dataclass(frozen=True)
class ConjectureRow:
    """One width of the experiment: its softmax ``architecture``, the Gaussian inputs per trial
    (``samples``), the expected dimension (None where no formula applies), the ranks of all
    trials and the best one with its gap."""

    architecture: Architecture
    samples: int
    expected_dimension: int | None
    trial_ranks: tuple[FloatRank, ...]

    @property
    def width(self) -> int:
        return self.architecture.widths[0]

    @property
    def parameters(self) -> int:
        return self.architecture.parameter_count

    @property
    def best(self) -> FloatRank:
        """The trial of largest rank (the maximum over trials: the submission code's protocol as a
        reviewer quotes it)."""
        return max(self.trial_ranks, key=lambda r: (r.rank, r.gap))

    @property
    def rank(self) -> int:
        return self.best.rank

    @property
    def gap(self) -> float:
        return self.best.gap

    @property
    def trials_right(self) -> int:
        """How many trials found exactly the expected dimension."""
        return sum(r.rank == self.expected_dimension for r in self.trial_ranks)


def reproduce_softmax_conjecture(widths: Sequence[int] = range(3, 11), *, samples: int = 250,
                                 trials: int = 5, trials_at_10: int = 8, layers: int = 2,
                                 rank: int = 2, tokens: int = 3, rng: Seed = 0,
                                 workers: int | None = None,
                                 max_memory: float = MAX_MEMORY) -> tuple[ConjectureRow, ...]:
    """Rerun the paper's test of the deep softmax conjecture: Jacobian ranks at random points.

    For each width ``delta``: ``layers`` softmax layers of widths ``delta``, ranks ``rank``,
    ``tokens`` tokens, ``samples`` Gaussian inputs, ``trials`` random points (``trials_at_10`` at
    width 10; 5 and 8 are the authors' submission code). The expected dimension is the lightning
    dimension plus ``l``, which the conjecture (generic identifiability in the virtual weights
    ``(M, L)``) gives for these equal widths [paper]: 25, 40, 57, 76, 97, 120, 145, 172 for
    widths 3 to 10. Each trial draws from its own child of ``rng``, so the result does not depend
    on how the trials are spread over the ``workers`` processes (default
    :func:`~lsa_helpers.workers.usable_cpus`). A request whose trials at once need more than
    ``max_memory`` bytes (:func:`~lsa_helpers.function_space.float_rank_memory` per process) is
    refused before anything is computed.

    Examples
    --------
    >>> rows = reproduce_softmax_conjecture([3], trials=1)
    >>> [(r.width, r.expected_dimension, r.rank) for r in rows]
    [(3, 25, 25)]
    """
    samples, trials, trials_at_10 = (
        _checks.positive_int(name, value) for name, value in
        (("samples", samples), ("trials", trials), ("trials_at_10", trials_at_10)))
    workers = worker_count(workers)
    archs = [Architecture((w,) * (layers + 1), (rank,) * layers, "softmax", tokens) for w in widths]
    counts = [trials_at_10 if w == 10 else trials for w in widths]
    jobs = [arch for arch, count in zip(archs, counts) for _ in range(count)]
    workers = min(workers, len(jobs) or 1)
    check_memory(workers * max((float_rank_memory(a, samples) for a in archs), default=0),
                 max_memory)
    seeds = as_generator(rng).spawn(len(jobs))
    ranks = iter(_largest_first([(arch, seed, samples) for arch, seed in zip(jobs, seeds)],
                                workers))
    return tuple(ConjectureRow(arch, samples, formula_dimension(arch).value,
                               tuple(next(ranks) for _ in range(count)))
                 for arch, count in zip(archs, counts))


def _trial(job: Job) -> FloatRank:
    arch, rng, samples = job
    return float_rank(jacobian(arch, random_weights(arch, rng), random_inputs(arch, samples, rng)))


def _largest_first(jobs: list[Job], workers: int) -> list[FloatRank]:
    """``[_trial(job) for job in jobs]``, computed largest architecture first: the processes then
    end together on small trials, not one on a large Jacobian while the others wait."""
    order = sorted(range(len(jobs)), key=lambda i: -jobs[i][0].parameter_count)
    found = dict(zip(order, parallel_map(_trial, [jobs[i] for i in order], workers)))
    return [found[i] for i in range(len(jobs))]
