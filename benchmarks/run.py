"""Benchmarks for lsa_helpers: wall times (medians over repeats) and ratios, printed as a report.

Sections (pick one with ``--only NAME``):

softmax
    ``python -m lsa_helpers reproduce softmax-conjecture`` as a subprocess and
    ``reproduce_softmax_conjecture()`` in process (median of 5 each), their ratio, the whole
    process's figure before the present engine (2.43 s) beside them, and whether every trial found
    the expected dimension.
certified
    ``dimension(arch, method="certified", rng=0)`` for lightning architectures of about 100 to
    5,000 parameters: result, samples, time (median of 3 when a run takes < 2 s, else 1 run),
    the time inside ``jacobian`` and ``jacobian_along``, in the products mod p of the sketches
    and echelon updates (``mod_matmul``) and in FLINT (summed over the adaptive rounds), and
    peak memory of the call: the ``tracemalloc`` peak (numpy arrays and Python objects, in a
    separate run because tracing slows allocation) and the rise of peak RSS (which also sees
    FLINT's matrices, invisible to tracemalloc; Linux only).
research
    ``dimension(arch, method="certified", rng=0)`` for widths 32^4, ranks (8, 8, 8) (4,608
    parameters), 48^3, ranks (12, 12) (6,912) and 64^3, ranks (16, 16) (12,288): time, where
    it goes, the whole process's peak RSS beside ``memory_estimate`` of the run, against the
    limit measured in the same run: converting a random ``n x n`` matrix mod p (``n`` =
    parameters) to FLINT's ``nmod_mat`` and its rank; their ratio.
beyond
    notebook 08's computations: ``multihead_dimension`` for the transformer split
    ``a = rho = d / h`` (fixed budget) at d = d' = 8 and 16, ``dimension`` of residual networks
    against the same networks without skips (and the ratio), and the slowest setting of
    ``multihead_explorer`` (all five sliders at 5), medians of 3.
widgets
    the demos' slider moves, when ``benchmarks/widgets.py`` (``bench_widgets``) is present.
forward
    ``layer_forward(order="linear")`` vs ``order="quadratic"`` for one lightning layer
    d = d' = a = 16 on one input of t tokens, t = 8 ... 8192: medians over at least 5 repeats
    and ~0.2 s of work, the ratio quadratic / linear and max|linear - quadratic| / max|quadratic|.

Run from the repository root: ``make benchmark`` (which runs ``.venv/bin/python benchmarks/run.py``)
or ``python benchmarks/run.py [--only softmax|certified|research|beyond|forward|widgets]
[--json PATH]``.
Times use ``time.perf_counter``; they are only meaningful on a quiet machine, so the load average
is printed.
The certified section's traced runs are the slow part of a full run: tracemalloc slows the
conversions to FLINT several fold, as it traces each of the millions of Python ints built to fill
FLINT's matrices.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import tracemalloc
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import flint
import numpy as np

import lsa_helpers
from lsa_helpers import (
    Architecture,
    Layer,
    MultiHead,
    dimension,
    layer_forward,
    multihead_dimension,
    random_weights,
)

LADDER = [  # certified section; parameters in the comments
    Architecture((8, 8), (2,)),              # 96
    Architecture((6,) * 3, (2, 2)),          # 120
    Architecture((16, 16), (4,)),            # 384
    Architecture((10,) * 4, (3, 3, 3)),      # 480
    Architecture((20,) * 3, (2, 2)),         # 960
    Architecture((20,) * 4, (3, 3, 3)),      # 1560
    Architecture((36, 36), (10,)),           # 2016  <- the ~2,000-parameter call-out
    Architecture((30,) * 3, (2, 2)),         # 2040
    Architecture((45,) * 3, (2, 2)),         # 4410
    Architecture((38,) * 4, (3, 3, 3)),      # 5016
]
CALL_OUT = Architecture((36, 36), (10,))
INSIDE = [("lsa_helpers.function_space", "jacobian"),
          ("lsa_helpers.function_space", "along_checked"),  # J C, added to "jacobian"
          ("lsa_helpers.rank", "mod_matmul"),
          ("lsa_helpers.function_space", "mod_matmul"),  # both bindings add to one "mod_matmul"
          ("lsa_helpers.function_space", "_sketch"),
          ("lsa_helpers.function_space", "_sketched_rank"),
          ("lsa_helpers.rank", "nmod_matrix")]
RESEARCH = [Architecture((32,) * 4, (8, 8, 8)), Architecture((48,) * 3, (12, 12)),
            Architecture((64,) * 3, (16, 16))]  # 4608, 6912, 12288 parameters
SOFTMAX_LAST_WAVE = 2.43  # s, whole process, median of 5 quiet runs before the present engine
TOKENS = (8, 32, 128, 512, 2048, 8192)


@contextlib.contextmanager
def time_inside(targets):
    """Accumulate the seconds spent in module-level functions, given as ``(module, name)`` pairs.

    Names that the module does not define are skipped (the library changes; this stays usable).
    """
    originals = {(module, name): getattr(sys.modules[module], name)
                 for module, name in targets if hasattr(sys.modules[module], name)}
    spent = {name: 0.0 for _, name in originals}

    def wrap(name, fn):
        def wrapper(*args, **kwargs):
            start = perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] += perf_counter() - start
        return wrapper

    for (module, name), fn in originals.items():
        setattr(sys.modules[module], name, wrap(name, fn))
    try:
        yield spent
    finally:
        for (module, name), fn in originals.items():
            setattr(sys.modules[module], name, fn)


def measure(fn, repeats, targets=()):
    """Median over ``repeats`` runs of the wall time and of the time inside ``targets``."""
    runs = []
    for _ in range(repeats):
        with time_inside(targets) as spent:
            start = perf_counter()
            out = fn()
            wall = perf_counter() - start
        runs.append({"wall": wall, **spent})
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}, out


def rss_peak_growth(fn):
    """(result, MiB by which the process's peak RSS rose during ``fn``), None where unsupported."""
    def status(key):
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith(key)) / 1024
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS
        before = status("VmRSS:")
    except OSError:
        return fn(), None
    out = fn()
    return out, status("VmHWM:") - before


def tracemalloc_peak(fn):
    """(MiB peak traced by tracemalloc during ``fn``, seconds ``fn`` took while traced)."""
    tracemalloc.start()
    try:
        start = perf_counter()
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20, perf_counter() - start
    finally:
        tracemalloc.stop()


def bench_softmax():
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "lsa_helpers", "reproduce", "softmax-conjecture"]

    def run_cli():
        subprocess.run(command, env={**os.environ, "PYTHONPATH": path}, cwd=ROOT, check=True,
                       capture_output=True)

    load = os.getloadavg()[0]
    cli, _ = measure(run_cli, 5)
    inproc, rows = measure(lsa_helpers.reproduce_softmax_conjecture, 5)
    right = sum(row.trials_right for row in rows)
    trials = sum(len(row.trial_ranks) for row in rows)
    ratio = cli["wall"] / inproc["wall"]
    print("== softmax: reproduce softmax-conjecture (median of 5 each; load average "
          f"{load:.2f}) ==")
    print(f"  subprocess `python -m lsa_helpers reproduce softmax-conjecture`: {cli['wall']:.2f} s "
          f"(last wave: {SOFTMAX_LAST_WAVE:.2f} s; target <= 2 s on a quiet machine)")
    print(f"  in process reproduce_softmax_conjecture():  {inproc['wall']:.2f} s")
    print(f"  ratio subprocess / in process: {ratio:.2f}")
    print(f"  every trial found the expected dimension: {right == trials} ({right}/{trials})")
    return {"repeats": 5, "subprocess_s": cli["wall"], "in_process_s": inproc["wall"],
            "last_wave_subprocess_s": SOFTMAX_LAST_WAVE, "load_average": load,
            "ratio_subprocess_over_in_process": ratio, "all_trials_right": right == trials}


def bench_certified():
    print("== certified: dimension(arch, method='certified', rng=0) ==")
    print("  time: median of 3 more runs if a first run takes < 2 s, else that first run;")
    print("  jacobian, sketch, ranks: time inside jacobian(), in the random combinations of rows")
    print("  and columns (mod_matmul) and in FLINT (the echelon updates and the tangents' rank),")
    print("  summed over the adaptive rounds; tracemalloc: peak of numpy + Python allocations (a")
    print("  separate, traced run); RSS: rise of the process's peak RSS in the first run (this")
    print("  also sees FLINT's matrices); samples: inputs used (J rows = samples * d_l * t);")
    print("  dimension: the certified one, else lower..upper bound")
    print(f"  {'architecture':24} {'params':>6} {'dimension':>9} {'samples':>7} {'J rows':>6} "
          f"{'runs':>4} {'time s':>7} {'jacobian':>8} {'sketch':>6} {'ranks':>8} "
          f"{'tracemalloc':>11} {'RSS':>8}")
    records = []
    for arch in LADDER:
        call = functools.partial(lsa_helpers.dimension, arch, method="certified", rng=0)
        (timing, result), rss = rss_peak_growth(functools.partial(measure, call, 1, INSIDE))
        runs = 1
        if timing["wall"] < 2:
            (timing, result), runs = measure(call, 3, INSIDE), 3
        peak, traced_s = tracemalloc_peak(call)
        rows = result.samples * arch.widths[-1] * arch.tokens
        dim = result.certified_dimension
        records.append({
            "widths": arch.widths, "ranks": arch.ranks, "parameters": arch.parameter_count,
            "certified_dimension": dim, "rank": result.rank, "upper_bound": result.upper_bound,
            "samples": result.samples, "jacobian_rows": rows, "runs": runs,
            "time_s": timing.pop("wall"), "inside_s": timing, "tracemalloc_peak_mib": peak,
            "tracemalloc_run_s": traced_s, "rss_peak_growth_mib": rss,
            "call_out": arch == CALL_OUT})
        label = f"w={','.join(map(str, arch.widths))} a={','.join(map(str, arch.ranks))}"
        shown = str(dim) if dim is not None else f"{result.rank}..{result.upper_bound}"
        rss_text = "n/a" if rss is None else f"{rss:.0f}MiB"
        print(f"  {label:24} {arch.parameter_count:6d} {shown:>9} {result.samples:7d} {rows:6d} "
              f"{runs:4d} {records[-1]['time_s']:7.2f} {_jacobian_seconds(timing):8.2f} "
              f"{timing.get('mod_matmul', 0):6.2f} {_flint_seconds(timing):8.2f} "
              f"{peak:8.0f}MiB {rss_text:>8}"
              + ("  <- ~2,000 parameters" if arch == CALL_OUT else ""), flush=True)
    largest = max(records, key=lambda r: r["parameters"])
    inside, total = largest["inside_s"], largest["time_s"]
    parts = {"jacobian()": _jacobian_seconds(inside),
             "sketches": inside.get("mod_matmul", 0),
             "FLINT": _flint_seconds(inside)}
    parts["other"] = total - sum(parts.values())
    print(f"  where the time goes for the largest ({largest['parameters']} parameters, "
          f"{total:.1f} s, all rounds):")
    for name, seconds in parts.items():
        print(f"    {name:13} {seconds:7.2f} s  ({seconds / total:4.0%})")
    return records


def _jacobian_seconds(inside):
    """Seconds computing Jacobians: whole ones (jacobian) or along directions (along_checked)."""
    return inside.get("jacobian", 0) + inside.get("along_checked", 0)


def _flint_seconds(inside):
    """Seconds in FLINT: the sketched rank and echelon updates, less their numpy products."""
    return (inside.get("_sketch", 0) + inside.get("_sketched_rank", 0)
            - inside.get("mod_matmul", 0))


def peak_rss_mib(fn):
    """(result, peak RSS of the whole process in MiB while ``fn`` ran, its RSS at the start),
    with Nones where unsupported."""
    def status(key):
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith(key)) / 1024
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS
    except OSError:
        return fn(), None, None
    start = status("VmRSS:")
    out = fn()
    return out, status("VmHWM:"), start


def flint_limit(n, rng):
    """Seconds to convert a random ``n x n`` matrix mod p to FLINT's ``nmod_mat`` and rank it."""
    from lsa_helpers.rank import PRIME, nmod_matrix

    M = rng.integers(0, PRIME, size=(n, n))
    start = perf_counter()
    F = nmod_matrix(M, PRIME)
    converted = perf_counter()
    F.rank()
    return converted - start, perf_counter() - converted


def bench_research():
    print("== research: certified dimensions at research scale, against one FLINT rank ==")
    print("  limit: converting a random n x n matrix mod p to nmod_mat and its rank, n = the")
    print("  parameters, measured in the same run (FLINT's one thread); ratio = time / limit;")
    print("  peak: the whole process's peak RSS during the certified run, and its rise above the")
    print("  RSS at the start; estimate: memory_estimate of the run (its inputs and upper bound),")
    print("  which bounds the rise")
    records = []
    for arch in RESEARCH:
        label = f"w={','.join(map(str, arch.widths))} a={','.join(map(str, arch.ranks))}"
        call = functools.partial(lsa_helpers.dimension, arch, method="certified", rng=0)
        try:
            (timing, result), peak, start = peak_rss_mib(
                functools.partial(measure, call, 1, INSIDE))
        except ValueError as refused:  # above max_memory by memory_estimate: not run
            print(f"  {label:24} {arch.parameter_count:6d} parameters: refused ({refused})")
            records.append({"widths": arch.widths, "ranks": arch.ranks, "refused": str(refused)})
            continue
        estimate = lsa_helpers.memory_estimate(arch, inputs=result.samples,
                                               upper=result.upper_bound) / 2**20
        convert, rank = flint_limit(arch.parameter_count, np.random.default_rng(0))
        limit, total = convert + rank, timing.pop("wall")
        timing["jacobian"] = _jacobian_seconds(timing)
        print(f"  {label:24} {arch.parameter_count:6d} parameters: certified "
              f"{result.certified_dimension} in {total:.1f} s (jacobian {timing['jacobian']:.1f}"
              f", sketches {timing['mod_matmul']:.1f}, FLINT {_flint_seconds(timing):.1f}); "
              f"limit {limit:.1f} s ({convert:.1f} + {rank:.1f}); ratio {total / limit:.2f}; "
              f"peak {peak:.0f} MiB, {peak - start:.0f} MiB above the start (estimate "
              f"{estimate:.0f} MiB); "
              f"load average {os.getloadavg()[0]:.1f}", flush=True)
        records.append({"widths": arch.widths, "ranks": arch.ranks,
                        "load_average": os.getloadavg()[0], "parameters": arch.parameter_count,
                        "certified_dimension": result.certified_dimension,
                        "samples": result.samples, "time_s": total, "inside_s": timing,
                        "limit_convert_s": convert, "limit_rank_s": rank,
                        "ratio_to_limit": total / limit, "peak_rss_mib": peak,
                        "rss_at_start_mib": start,
                        "memory_estimate_mib": estimate})
    return records


def bench_beyond():
    print("== beyond: multi-head layers at a fixed budget, residual networks (median of 3) ==")
    print(f"  {'d = d_out':>9} {'heads':>5} {'a = rho':>7} {'params':>6} {'certified':>9} "
          f"{'seconds':>8}")
    records = {"multihead": [], "residual": []}
    for d, heads in [(8, 1), (8, 2), (8, 4), (8, 8), (16, 1), (16, 4), (16, 16)]:
        layer = MultiHead(d, d, (d // heads,) * heads, (d // heads,) * heads)
        times, found = measure(functools.partial(multihead_dimension, layer, rng=0), 3)
        records["multihead"].append({"d": d, "heads": heads, "parameters": layer.parameter_count,
                                     "certified": found.certified_dimension, "s": times["wall"]})
        print(f"  {d:>9} {heads:>5} {d // heads:>7} {layer.parameter_count:>6} "
              f"{found.certified_dimension!s:>9} {times['wall']:8.3f}", flush=True)
    print(f"  {'network':<48} {'plain':>6} {'s':>7} {'skip':>6} {'s':>7} {'skip/plain':>10}")
    for widths, ranks in [((8,) * 4, (2, 2, 2)), ((12,) * 4, (3, 3, 3)), ((16,) * 3, (4, 4))]:
        row = {"widths": widths, "ranks": ranks}
        for skip in (False, True):
            arch = Architecture(widths, ranks, skip=skip)
            times, found = measure(functools.partial(dimension, arch, rng=0), 3)
            key = "skip" if skip else "plain"
            row[key], row[f"{key}_s"] = found.certified_dimension, times["wall"]
        row["ratio"] = row["skip_s"] / row["plain_s"]
        records["residual"].append(row)
        print(f"  widths {widths!s:<20} ranks {ranks!s:<14} {row['plain']!s:>6} "
              f"{row['plain_s']:7.3f} {row['skip']!s:>6} {row['skip_s']:7.3f} "
              f"{row['ratio']:10.2f}", flush=True)
    import matplotlib

    matplotlib.use("Agg")
    from lsa_helpers.widgets import multihead_explorer

    slowest = {"d": 5, "d_out": 5, "heads": 5, "a": 5, "rho": 5}
    with contextlib.redirect_stdout(None):
        demo = multihead_explorer()
        times, _ = measure(functools.partial(demo.f, **slowest), 3)
    records["widget_slowest_s"] = times["wall"]
    print(f"  multihead_explorer at {slowest}: {times['wall']:.3f} s per move")
    return records


def bench_forward():
    rng = np.random.default_rng(0)
    layer = Layer(*random_weights(Architecture((16, 16), (16,)), rng)[0])
    print("== forward: layer_forward, lightning, d = d' = a = 16, one input (1, 16, t) ==")
    print("  median of n runs (n >= 5 and >= 0.2 s in all); error = max|lin - quad| / max|quad|")
    print(f"  {'t':>6} {'linear s':>10} {'n':>6} {'quadratic s':>12} {'n':>6} {'quad/lin':>9} "
          f"{'error':>9}")
    records = []
    for t in TOKENS:
        X = rng.standard_normal((1, 16, t))
        row, out = {"t": t}, {}
        for order in ("linear", "quadratic"):
            out[order] = layer_forward(layer, X, order=order)  # warm-up, kept for the comparison
            times = []
            while len(times) < 5 or sum(times) < 0.2:
                start = perf_counter()
                layer_forward(layer, X, order=order)
                times.append(perf_counter() - start)
            row[f"{order}_s"], row[f"{order}_runs"] = statistics.median(times), len(times)
        lin, quad = out["linear"], out["quadratic"]
        row["ratio_quadratic_over_linear"] = row["quadratic_s"] / row["linear_s"]
        row["relative_difference"] = float(np.abs(lin - quad).max() / np.abs(quad).max())
        records.append(row)
        print(f"  {t:6d} {row['linear_s']:10.2e} {row['linear_runs']:6d} "
              f"{row['quadratic_s']:12.2e} {row['quadratic_runs']:6d} "
              f"{row['ratio_quadratic_over_linear']:9.1f} {row['relative_difference']:9.1e}",
              flush=True)
    return records


SECTIONS = {"softmax": bench_softmax, "certified": bench_certified, "research": bench_research,
            "beyond": bench_beyond, "forward": bench_forward}
if (ROOT / "benchmarks" / "widgets.py").exists():  # the demos' slider moves (benchmarks/widgets.py)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from widgets import bench_widgets

    SECTIONS["widgets"] = bench_widgets


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=SECTIONS, help="run one section")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    meta = {"python": platform.python_version(), "numpy": np.__version__,
            "python_flint": flint.__version__, "cpus": os.cpu_count(),
            "load_average_start": os.getloadavg()}
    print(f"lsa_helpers benchmarks: Python {meta['python']}, numpy {meta['numpy']}, "
          f"python-flint {meta['python_flint']}, {meta['cpus']} CPUs, "
          f"load average {meta['load_average_start'][0]:.2f}\n")
    results = {"meta": meta}
    for name, bench in SECTIONS.items():
        if args.only in (None, name):
            results[name] = bench()
            print()
    meta["load_average_end"] = os.getloadavg()
    print(f"load average at the end: {meta['load_average_end'][0]:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
