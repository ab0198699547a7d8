"""Worker processes for independent jobs, which one Ctrl-C (or any error) ends at once.

In a browser (Pyodide, ``sys.platform == "emscripten"``) there are neither processes nor threads:
jobs run one after another in this process, and progress bars start no monitor thread.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from . import _checks

if TYPE_CHECKING:
    from multiprocessing.pool import Pool

    from tqdm import tqdm

__all__ = ["parallel_map", "progress_bar", "usable_cpus", "worker_count"]

Job = TypeVar("Job")
Result = TypeVar("Result")

CGROUP_QUOTAS = (("/sys/fs/cgroup/cpu.max",),
                 ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us"))
"""Where Linux states a container's CPU quota: cgroup v2 (``quota period`` or ``max period``),
then cgroup v1 (quota, ``-1`` for none, and period in two files)."""


def in_browser() -> bool:
    """Whether this is Python in a browser (Pyodide): no processes, no threads."""
    return sys.platform == "emscripten"


def usable_cpus() -> int:
    """The processors this process may run on: its CPU affinity (``os.sched_getaffinity`` where
    it exists, else ``os.cpu_count()``), lowered to ``ceil(quota / period)`` where a cgroup CPU
    quota (:data:`CGROUP_QUOTAS`) limits it. At least 1; 1 in a browser."""
    if in_browser():
        return 1
    cpus = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
            else os.cpu_count() or 1)
    quota = _cgroup_quota()
    return max(1, min(cpus, math.ceil(quota)) if quota else cpus)


def _cgroup_quota() -> float | None:
    """CPUs allowed by the first cgroup quota found, or None (no quota, or none readable)."""
    for paths in CGROUP_QUOTAS:
        try:
            words = " ".join(Path(p).read_text() for p in paths).split()
        except OSError:
            continue
        if len(words) == 2 and words[0].isdigit() and words[1].isdigit() and int(words[1]):
            return int(words[0]) / int(words[1])
        return None
    return None


def worker_count(workers: int | None) -> int:
    """``workers`` checked (a positive integer), or :func:`usable_cpus` when it is None."""
    if workers is None:
        return usable_cpus()
    return _checks.positive_int("workers", workers)


def parallel_map(function: Callable[[Job], Result], jobs: Iterable[Job], workers: int, *,
                 chunksize: int = 1,
                 each: Callable[[Result], object] | None = None) -> list[Result]:
    """``[function(job) for job in jobs]`` with one BLAS thread per job at a time: in this process
    when ``workers <= 1`` or in a browser (:func:`in_browser`, where BLAS has one thread),
    else in ``workers`` processes (:func:`_process_pool`).

    ``each(result)``, if given, sees every result as it comes, in order (progress, checks); an
    exception from it stops the workers at once.
    """
    jobs = list(jobs)
    results: list[Result] = []
    each = each or (lambda result: None)
    if workers <= 1 or len(jobs) <= 1 or in_browser():
        with one_blas_thread():
            for job in jobs:
                results.append(function(job))
                each(results[-1])
        return results
    with _process_pool(min(workers, len(jobs))) as pool:
        for result in pool.imap(function, jobs, chunksize):
            results.append(result)
            each(result)
    return results


def one_blas_thread() -> contextlib.AbstractContextManager[object]:
    """BLAS limited to one thread meanwhile (nothing to limit in a browser): for jobs side by side,
    and for many small products, which threads only slow down."""
    if in_browser():
        return contextlib.nullcontext()
    return _blas_libraries().limit(limits=1, user_api="blas")


@functools.cache
def _blas_libraries() -> Any:
    """The process's thread pools, found once (a search of the loaded libraries takes ~20 ms)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def progress_bar(**options: Any) -> tqdm[Any]:
    """``tqdm(**options)``; in a browser with tqdm's monitor thread off (``monitor_interval = 0``),
    as no thread can start there."""
    from tqdm import tqdm

    if in_browser():
        tqdm.monitor_interval = 0
    return tqdm(**options)


@contextlib.contextmanager
def _process_pool(workers: int) -> Iterator[Pool]:
    """A ``multiprocessing`` pool of ``workers`` processes with one BLAS thread each.

    A terminal's Ctrl-C reaches its whole process group: the workers ignore SIGINT (it stays
    blocked from their fork until they ignore it), and on Ctrl-C, or any exception in the
    ``with`` block, this process terminates them before the exception goes on, ignoring further
    Ctrl-C meanwhile. On Linux a worker also gets SIGTERM when this process dies, even by
    SIGKILL.
    """
    import multiprocessing

    pool = None
    try:
        with _sigint(block=True):
            pool = multiprocessing.Pool(workers, initializer=_worker_start,
                                        initargs=(os.getpid(),))
        yield pool
        pool.close()
        pool.join()
    except BaseException:
        if pool is not None:
            with _sigint(block=False):
                pool.terminate()
        raise


@contextlib.contextmanager
def _sigint(*, block: bool) -> Iterator[None]:
    """SIGINT held back (``block``: delivered afterwards) or ignored (dropped) meanwhile, where
    the platform and thread allow it; otherwise nothing changes."""
    main = threading.current_thread() is threading.main_thread()
    if block and main and hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    elif not block and main:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)
    else:
        yield


def _worker_start(parent: int) -> None:
    """A worker: SIGINT ignored, one BLAS thread, freed memory kept for the next job
    (:func:`_keep_freed_memory`), and (on Linux) a SIGTERM when ``parent`` dies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
    _keep_freed_memory()
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
"""glibc's ``mallopt`` parameters: free memory kept at the top of the heap, and the size from
which an allocation gets its own pages (freed at once)."""


def _keep_freed_memory() -> None:
    """glibc: arrays up to 32 MB (its largest threshold) come from the heap, and up to 1 GB of
    freed heap stays with the process, so the next job's arrays reuse pages instead of faulting
    fresh ones in from the system (a fifth of the CPU time of the softmax experiment's workers).
    Nothing where there is no ``mallopt``."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
        mallopt(M_MMAP_THRESHOLD, 2**25)
        mallopt(M_TRIM_THRESHOLD, 2**30)
