import os
import re

import pytest

from lsa_helpers import workers
from lsa_helpers.workers import usable_cpus, worker_count


def affinity():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


@pytest.mark.parametrize("files, limit", [
    ({"cpu.max": "150000 100000\n"}, 2),              # cgroup v2: 1.5 CPUs, rounded up
    ({"cpu.max": "max 100000\n"}, None),              # cgroup v2: no quota
    ({"quota": "-1\n", "period": "100000\n"}, None),  # cgroup v1: no quota
    ({"quota": "50000\n", "period": "100000\n"}, 1),  # cgroup v1: half a CPU
    ({}, None),                                       # no cgroup files
])
def test_a_cgroup_quota_lowers_the_count(files, limit, tmp_path, monkeypatch):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.setattr(workers, "CGROUP_QUOTAS", ((str(tmp_path / "cpu.max"),),
                                                   (str(tmp_path / "quota"),
                                                    str(tmp_path / "period"))))
    assert usable_cpus() == (affinity() if limit is None else min(affinity(), limit))


@pytest.mark.parametrize("value", [0, -1, 2.0, True, "2"])
def test_a_worker_count_is_a_positive_integer(value):
    message = f"workers must be an integer >= 1, got workers={value!r}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        worker_count(value)


def test_no_worker_count_means_every_usable_cpu():
    assert worker_count(None) == usable_cpus() >= 1 and worker_count(3) == 3


def square_plus_pid(x):
    return x * x, os.getpid()


def test_in_a_browser_jobs_run_in_this_process_without_a_pool(monkeypatch):
    """Pyodide (sys.platform "emscripten") has no processes or threads: the serial path gives the
    squares that a pool of two processes gives, all computed here, and no pool is started."""
    pooled = workers.parallel_map(square_plus_pid, range(6), 2)
    assert [square for square, _ in pooled] == [x * x for x in range(6)]
    monkeypatch.setattr(workers.sys, "platform", "emscripten")

    def no_pool(count):
        raise AssertionError(f"a pool of {count} processes was started")

    monkeypatch.setattr(workers, "_process_pool", no_pool)
    seen = []
    serial = workers.parallel_map(square_plus_pid, range(6), 2, each=seen.append)
    assert serial == seen == [(x * x, os.getpid()) for x in range(6)]
    assert [square for square, _ in serial] == [square for square, _ in pooled]
    assert usable_cpus() == worker_count(None) == 1


def test_a_progress_bar_in_a_browser_starts_no_monitor_thread(monkeypatch):
    import io
    import threading

    from tqdm import tqdm

    monkeypatch.setattr(workers.sys, "platform", "emscripten")
    monkeypatch.setattr(tqdm, "monitor_interval", 10)
    monkeypatch.setattr(tqdm, "monitor", None)
    before = set(threading.enumerate())
    with workers.progress_bar(total=3, disable=False, file=io.StringIO()) as bar:
        bar.update(3)
        assert set(threading.enumerate()) == before and tqdm.monitor is None
