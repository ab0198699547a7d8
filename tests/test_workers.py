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
