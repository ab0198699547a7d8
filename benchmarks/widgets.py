"""Benchmark of the interactive demos: the time of one slider move, with and without drawing.

Each demo runs in an IPython shell with matplotlib's inline backend, as in a notebook; what a
kernel would send (the callback's text and PNG) is captured instead of sent. The sweep of a demo
is a fixed walk of single moves: each control in turn through every value it offers, from its
minimum to its maximum and back to its starting value, then ``RANDOM_MOVES`` seeded moves of a
random control to a random value; where a demo asks for a prediction, each other move is followed
by a seeded prediction. A move is the assignment of a new value; its time "with drawing" is all
it runs (the callback, any observer it triggers, the figure's update and its PNG); "without" is
that time less the time spent drawing (``lsa_helpers.widgets._render``: updating the figure,
the PNG, its display). Rows give the median and the 95th percentile over the moves, and those of
the process's CPU time during a move with drawing.

Run from the repository root: ``python benchmarks/widgets.py [--demo NAME] [--json PATH]``.
Times are meaningful only on a quiet machine, so the load average is printed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from pathlib import Path
from time import perf_counter, process_time

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RANDOM_MOVES = 30
FLOAT_STEPS = 41  # a float slider's values: its whole range in this many steps, ends included


def _shell():
    """An IPython shell with the inline backend whose displays are captured, not printed."""
    from IPython.core.displaypub import CapturingDisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.enable_gui = lambda gui=None: None  # inline needs no event loop
    shell.enable_matplotlib("inline")
    shell.display_pub = CapturingDisplayPublisher()
    return shell


def _training():
    """The training demo as notebook 06 builds it: a teacher with rk A = 3, rk V = 1."""
    from lsa_helpers import Layer, layer_forward
    from lsa_helpers.widgets import training_explorer

    rng = np.random.default_rng(2025)
    U, W = (np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in range(2))
    A, v, z = U @ np.diag([2.0, 0.8, 0.3]) @ W.T, rng.normal(size=2), rng.normal(size=3)
    teacher = Layer(A, np.eye(3), 1.5 * np.outer(v / np.linalg.norm(v), z / np.linalg.norm(z)))
    X, X_held = rng.normal(size=(2, 64, 3, 3)) / np.sqrt(3)
    direction = Layer(rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(2, 3)))
    return training_explorer(X, layer_forward(teacher, X), direction,
                             (X_held, layer_forward(teacher, X_held)))


def demos():
    """The demos as the lessons build them: name, factory."""
    from lsa_helpers import widgets as w

    return [
        ("parameter_split (00)", lambda: w.parameter_split_explorer(seed=2025)),
        ("polynomial (01)", w.polynomial_explorer),
        ("polynomial sizes (01)", lambda: w.polynomial_explorer(sizes=True, t=1)),
        ("fiber (02)", w.fiber_explorer),
        ("dimension (03)", lambda: w.dimension_explorer(seed=2025)),
        ("deep (04)", lambda: w.deep_explorer(seed=2025)),
        ("boundary (05)", w.boundary_explorer),
        ("training (06)", _training),
        ("softmax (07)", lambda: w.softmax_explorer(seed=2025)),
        ("multihead (08)", lambda: w.multihead_explorer(seed=2025, d=4, d_out=4, heads=1, a=4,
                                                        rho=4)),
    ]


def _values(control):
    """Every value a control offers, in order."""
    if hasattr(control, "options"):
        return [value for _, value in control._options_full] if hasattr(
            control, "_options_full") else list(control.options)
    if isinstance(control.value, bool):
        return [False, True]
    if isinstance(control.value, float):
        return list(np.round(np.linspace(control.min, control.max, FLOAT_STEPS), 10))
    if control.description == "prediction":  # a typed number: none and the answers' range
        return list(range(0, 61, 4))
    return list(range(control.min, control.max + 1))


def sweep(widget, seed=0):
    """The fixed walk of moves: (control, value) pairs.

    Where a demo asks for a prediction (which a move clears), each other move is followed by a
    seeded prediction, as a student answers before moving on.
    """
    controls = list(widget.children[:-1])
    rng = np.random.default_rng(seed)
    walk = [(c, v) for c in controls for v in [*_values(c), c.value]]
    walk += [(c, _values(c)[rng.integers(len(_values(c)))])
             for c in (controls[i] for i in rng.integers(len(controls), size=RANDOM_MOVES))]
    asked = [c for c in controls if c.description == "prediction"]
    if not asked:
        return walk
    answers = [v for v in _values(asked[0]) if v]
    return [move for c, v in walk for move in
            ([(c, v)] if c in asked else [(c, v), (asked[0], answers[rng.integers(len(answers))])])]


def _percentiles(times):
    ms = 1000 * np.asarray(times)
    return float(np.median(ms)), float(np.percentile(ms, 95))


@contextlib.contextmanager
def drawing_time():
    """Accumulate the seconds spent in ``lsa_helpers.widgets._render`` (None if it is absent:
    a version of the demos that does not separate drawing)."""
    from lsa_helpers import widgets

    spent = [0.0]
    render = getattr(widgets, "_render", None)
    if render is None:
        yield None
        return

    def timed(*args, **kwargs):
        start = perf_counter()
        try:
            return render(*args, **kwargs)
        finally:
            spent[0] += perf_counter() - start

    widgets._render = timed
    try:
        yield spent
    finally:
        widgets._render = render


def bench_demo(name, factory, shell, seed=0):
    """One row: the moves of the sweep, timed with drawing and without."""
    with contextlib.redirect_stdout(io.StringIO()), drawing_time() as spent:
        widget = factory()
        drawn, computed, cpu, pictures = [], [], [], 0
        for control, value in sweep(widget, seed):
            if control.value == value:
                continue  # not a move
            shell.display_pub.outputs.clear()
            if spent:
                spent[0] = 0.0
            start, start_cpu = perf_counter(), process_time()
            control.value = value
            drawn.append(perf_counter() - start)
            cpu.append(process_time() - start_cpu)
            if spent:
                computed.append(drawn[-1] - spent[0])
            pictures += any("image/png" in out["data"] for out in shell.display_pub.outputs)
    row = {"demo": name, "moves": len(drawn), "pictures": pictures}
    row["drawn_p50_ms"], row["drawn_p95_ms"] = _percentiles(drawn)
    row["drawn_cpu_p50_ms"], row["drawn_cpu_p95_ms"] = _percentiles(cpu)
    row["computed_p50_ms"], row["computed_p95_ms"] = (_percentiles(computed) if computed
                                                      else (None, None))
    return row


def bench_widgets(only=None, seed=0):
    """Rows per demo: median and 95th percentile of a move, with and without drawing (ms)."""
    shell = _shell()
    print("== widgets: one slider move (ms), with drawing (callback + PNG) and without ==")
    print(f"  sweep: every value of each control and back, then {RANDOM_MOVES} seeded random "
          f"moves; load average {os.getloadavg()[0]:.2f}")
    print("  wall times; cpu: the process's CPU time during the move (less sensitive to load)")
    print(f"  {'demo':24} {'moves':>5} {'pictures':>8} {'drawn p50':>9} {'p95':>6} "
          f"{'computed p50':>12} {'p95':>6} {'cpu p50':>8} {'p95':>6}")
    rows = []
    for name, factory in demos():
        if only and only not in name:
            continue
        row = bench_demo(name, factory, shell, seed)
        rows.append(row)
        computed = ("n/a" if row["computed_p50_ms"] is None else
                    f"{row['computed_p50_ms']:12.1f} {row['computed_p95_ms']:6.1f}")
        print(f"  {name:24} {row['moves']:5d} {row['pictures']:8d} {row['drawn_p50_ms']:9.1f} "
              f"{row['drawn_p95_ms']:6.1f} {computed:>19} {row['drawn_cpu_p50_ms']:8.1f} "
              f"{row['drawn_cpu_p95_ms']:6.1f}", flush=True)
    print(f"  load average at the end: {os.getloadavg()[0]:.2f}")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--demo", help="only the demos whose name contains this")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    args = parser.parse_args()
    rows = bench_widgets(args.demo)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
