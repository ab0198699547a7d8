"""The memory estimate against the peak resident memory that runs really add, measured."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lsa_helpers import Architecture, dimension, memory_estimate, reproduce_softmax_conjecture
from lsa_helpers.cli import main
from lsa_helpers.function_space import float_rank_memory, jacobian_bytes

FACTOR = 3  # the docstring of memory_estimate: the peak is between 1/FACTOR of it and all of it

MEASURE = r"""
import ctypes, gc, json, sys
import lsa_helpers as L
from lsa_helpers.function_space import float_rank_memory, jacobian_bytes

trim = getattr(ctypes.CDLL(None), "malloc_trim", lambda pad: 0)  # glibc: free heap back

def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key))

def peak(call):
    gc.collect()
    trim(0)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak (VmHWM) starts again from the resident memory now
    base = status("VmRSS")
    result = call()
    return result, status("VmHWM") - base

for method in ("float", "certified"):  # modules imported on first use, BLAS buffers
    L.dimension(L.Architecture((2, 2), (1,)), method=method, rng=0)
L.reproduce_softmax_conjecture([3], samples=5, trials=1, workers=1)
out = []
for widths, ranks, normalization, tokens, method in json.loads(sys.argv[1]):
    if method == "reproduce":  # one trial of `tokens` samples, three tokens
        _, used = peak(lambda: L.reproduce_softmax_conjecture(
            [widths[0]], samples=tokens, trials=1, workers=1))
        out.append((used, float_rank_memory(L.Architecture(widths, ranks, "softmax"), tokens)))
    else:
        arch = L.Architecture(widths, ranks, normalization, tokens)
        result, used = peak(lambda: L.dimension(arch, method=method, rng=0))
        out.append((used, L.memory_estimate(arch, method, inputs=result.samples,
                                            upper=result.upper_bound)))
print(json.dumps(out))
"""

CASES = {  # widths, ranks, normalization, tokens (samples for reproduce), method
    "softmax: t x t scores": ((8, 8), (8,), "softmax", 150, "float"),
    "deep lightning, many tokens": ((2, 2, 2), (1, 1), "lightning", 600, "certified"),
    "certified, 480 parameters": ((10, 10, 10, 10), (3, 3, 3), "lightning", 3, "certified"),
    "certified, 1728 parameters": ((24, 24, 24), (6, 6), "lightning", 3, "certified"),
    "float rank of many rows": ((14, 14), (14,), "lightning", 3, "float"),
    "softmax experiment, one trial": ((4, 4, 4), (2, 2), "softmax", 5000, "reproduce"),
}


@pytest.mark.skipif(not os.access("/proc/self/clear_refs", os.W_OK),
                    reason="needs Linux's /proc/self/clear_refs to measure a peak")
def test_the_estimate_bounds_the_measured_peak():
    """Peak resident memory above the baseline (VmHWM after a reset) on each path, in a fresh
    process with one BLAS thread: at most the estimate, and at least 1/FACTOR of it."""
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root), "OPENBLAS_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", MEASURE, json.dumps(list(CASES.values()))],
                          capture_output=True, text=True, timeout=300, env=env, check=False)
    assert done.returncode == 0, done.stderr
    for name, (used, estimate) in zip(CASES, json.loads(done.stdout)):
        assert estimate / FACTOR <= used <= estimate, (
            f"{name}: peak {used / 1e6:.0f} MB, estimate {estimate / 1e6:.0f} MB")


@pytest.mark.parametrize("estimate, measured", [
    (lambda: memory_estimate(Architecture((8, 8), (8,), "softmax", 1000), "float"), 3.11e9),
    (lambda: memory_estimate(Architecture((2, 2, 2), (1, 1), tokens=2000)), 9.15e8),
    (lambda: float_rank_memory(Architecture((3, 3, 3), (2, 2), "softmax"), 200_000), 1.56e9),
    # multihead_dimension(MultiHead(24, 24, ranks=(6, 6, 6), value_ranks=(8, 8, 8))): 2016
    # parameters, a first round of 28 inputs, 28 * 24 * 3 rows
    (lambda: jacobian_bytes(2016, 2016, exact=True), 2.68e8),
], ids=["softmax, 1000 tokens", "deep lightning, 2000 tokens", "experiment, 200000 samples",
        "multi-head layer"])
def test_the_estimate_covers_the_peaks_measured_on_large_runs(estimate, measured):
    """Runs too large for a test, measured once as above (peak resident memory added)."""
    assert measured <= estimate() <= FACTOR * measured


def test_softmax_scores_are_counted_before_running(capsys):
    """t x t score arrays: 1000 tokens need gigabytes, refused below them before computing."""
    assert main(["dimension", "--widths", "8,8", "--ranks", "8", "--softmax", "--tokens",
                 "1000", "--max-memory", "0.1"]) == 2
    assert re.fullmatch(r"lsa_helpers: error: this request may need up to [0-9.]+ GB of memory, "
                        r"above --max-memory = 0.1 GB; raise --max-memory to compute it anyway\n",
                        capsys.readouterr().err)


def test_a_float_run_stops_before_a_round_above_max_memory():
    """Float rounds keep every row: the run ends, stopped by memory, where the next would not
    fit, and every round it ran fits."""
    arch = Architecture((5, 5, 5, 5), (2, 2, 2))  # a first round of 9 inputs, then 5 more
    free = dimension(arch, method="float", rng=0)
    first = memory_estimate(arch, "float")
    assert free.samples > 9 and memory_estimate(arch, "float", inputs=free.samples) > first
    limited = dimension(arch, method="float", rng=0, max_memory=first)
    assert limited.stopped == "memory limit" and limited.samples < free.samples
    assert memory_estimate(arch, "float", inputs=limited.samples) <= first


def test_the_softmax_experiment_is_refused_above_max_memory():
    with pytest.raises(ValueError, match=r"^this request may need up to [0-9.]+ GB of memory, "
                                         r"above max_memory = 1 GB; raise max_memory to compute "
                                         r"it anyway$"):
        reproduce_softmax_conjecture([3], samples=100_000, trials=1, workers=1, max_memory=1e9)
