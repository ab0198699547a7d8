import json
import os
import signal
import subprocess
import sys
import time

import pytest
from processes import start_with_workers

from lsa_helpers.cli import main

KEYS = {"widths", "ranks", "normalization", "tokens", "parameters", "formula_dimension", "rank",
        "method", "certified_dimension"}


def run(*args):
    return subprocess.run([sys.executable, "-m", "lsa_helpers", *args], check=False,
                          capture_output=True, text=True, timeout=120)


def test_dimension_json_from_the_command_line():
    done = run("dimension", "--widths", "3,2,3", "--ranks", "2,2", "--json")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert KEYS <= set(record)
    assert record["widths"] == [3, 2, 3] and record["parameters"] == 32
    assert record["formula_dimension"] == record["rank"] == record["certified_dimension"] == 18
    assert record["method"] == "certified" and record["normalization"] == "lightning"


def test_softmax_float_reports_its_gap(capsys):
    assert main(["dimension", "--widths", "3,3,3", "--ranks", "2,2", "--softmax", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["method"] == "float" and record["rank"] == record["formula_dimension"] == 25
    assert record["certified_dimension"] is None and record["singular_value_gap"] > 1e4


def test_collapse_has_null_formula_and_is_certified(capsys):
    assert main(["dimension", "--widths", "3,3,3", "--ranks", "1,3", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["formula_dimension"] is None and record["formula_status"] == "none"
    assert record["rank"] == record["upper_bound"] == record["certified_dimension"] == 18


def test_skip_connections(capsys):
    assert main(["dimension", "--widths", "3,3,3", "--ranks", "2,2", "--skip", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["skip"] is True and record["parameters"] == 42
    assert record["formula_dimension"] == record["certified_dimension"] == 32


def test_plain_text_output(capsys):
    assert main(["dimension", "--widths", "3,3", "--ranks", "3", "--tokens", "2"]) == 0
    out = capsys.readouterr().out
    assert "certified_dimension: 17" in out and "tokens: 2" in out


@pytest.mark.parametrize("args, message", [
    (["--widths", "3,x", "--ranks", "2"],
     "argument --widths: widths must be comma-separated integers, got '3,x'"),
    (["--widths", "3,0", "--ranks", "2"], "widths must be positive integers, got widths=(3, 0)"),
    (["--widths", "3,-1", "--ranks", "2"], "widths must be positive integers, got widths=(3, -1)"),
    (["--widths", "3,3", "--ranks", "2,2"],
     "ranks must have one entry per layer (len(widths) - 1 = 1), got ranks=(2, 2)"),
    (["--widths", "3,3", "--ranks", "2", "--tokens", "0"],
     "tokens must be an integer >= 1, got tokens=0"),
    (["--widths", "3,3", "--ranks", "2", "--method", "exact", "--softmax"],
     "exact arithmetic needs normalization='lightning' (softmax is not polynomial)"),
    (["--widths", "3,3", "--ranks", "2", "--method", "fast"],
     "argument --method: invalid choice: 'fast' "
     "(choose from 'auto', 'float', 'exact', 'certified')"),
    (["--widths", "3,3"], "the following arguments are required: --ranks"),
    (["--widths", "3,2", "--ranks", "2", "--skip"],
     "skip=True needs equal widths (Y + phi(Y)), got widths=(3, 2)"),
    (["--widths", "3,3", "--ranks", "2", "--seed", "-1"],
     "argument --seed: --seed must be a non-negative integer, got '-1'"),
    (["--widths", "3,3", "--ranks", "2", "--tokens", "100000000"],
     ("the certified rank (the default for lightning) needs max(widths + ranks) * tokens <= "
      "8192, got 3 * 100000000; use --method float")),
    (["--widths", "10000,1", "--ranks", "1", "--tokens", "1", "--method", "exact"],
     ("--method exact needs max(widths + ranks) * tokens <= 8192, got 10000 * 1; use --method "
      "float")),
    (["--widths", "3,3", "--ranks", "2", "--max-memory", "0"],
     "argument --max-memory: --max-memory must be a positive number of GB, got '0'"),
    (["--widths", "500,500", "--ranks", "500"],
     ("this request may need up to 1.15e+04 GB of memory, above --max-memory = 4 GB; raise "
      "--max-memory to compute it anyway")),
    (["--widths", "80,80", "--ranks", "80"],
     ("this request may need up to 7.57 GB of memory, above --max-memory = 4 GB; raise "
      "--max-memory to compute it anyway")),
    (["--widths", "3,3", "--ranks", "2", "--tokens", "100000000", "--method", "float"],
     ("this request may need up to 346 GB of memory, above --max-memory = 4 GB; raise "
      "--max-memory to compute it anyway")),
    (["--widths", "3,3", "--ranks", "1000000000", "--method", "float"],
     ("this request may need up to 1.44e+20 GB of memory, above --max-memory = 4 GB; raise "
      "--max-memory to compute it anyway")),
    (["--widths", "6,6", "--ranks", "3", "--max-memory", "0.0001"],
     ("this request may need up to 0.0175 GB of memory, above --max-memory = 0.0001 GB; raise "
      "--max-memory to compute it anyway")),
    (["--widths", "3," + "9" * 400, "--ranks", "1", "--method", "float"],
     ("this request may need up to 9.36e+793 GB of memory, above --max-memory = 4 GB; raise "
      "--max-memory to compute it anyway")),
    (["--widths", "3,3", "--ranks", "2", "--seed", "\u00b2"],  # a digit to str.isdigit
     "argument --seed: --seed must be a non-negative integer, got '\u00b2'"),
    (["--widths", "3,3", "--ranks", "2", "--tokens", "9" * 5000],
     "argument --tokens: invalid int value: '" + "9" * 59 + "... (5002 characters)"),
    (["--widths", "3,3", "--ranks", "2", "--method", "x" * 300],
     ("argument --method: invalid choice: '" + "x" * 59 + "... (302 characters) (choose from "
      "'auto', 'float', 'exact', 'certified')")),
    (["--widths", "3,3", "--ranks", "2", "y" * 5000],
     "unrecognized arguments: " + "y" * 60 + "... (5000 characters)"),
])
def test_bad_input_is_one_line_and_exit_2(args, message, capsys):
    assert main(["dimension", *args]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"lsa_helpers: error: {message}\n" and captured.out == ""


def test_bad_input_from_the_shell_has_no_traceback():
    done = run("dimension", "--widths", "3,x", "--ranks", "2")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert run().returncode == 2 and run("reproduce", "nothing").returncode == 2


def test_data_build_passes_seed_and_folder(tmp_path, monkeypatch, capsys):
    from lsa_helpers import _build

    calls = []

    def fake_build(folder, *, seed, workers):
        calls.append((folder, seed, workers))
        return {"folder": folder, "rows": {"atlas": 2, "softmax_conjecture": 1},
                "seconds": {"total": 0.5}}

    monkeypatch.setattr(_build, "build_data", fake_build)
    assert main(["data", "build", "--seed", "4", "--folder", str(tmp_path), "--workers", "3"]) == 0
    assert calls == [(str(tmp_path), 4, 3)]
    assert capsys.readouterr().out == ("atlas.csv: 2 rows\nsoftmax_conjecture.csv: 1 rows\n"
                                       f"wrote {tmp_path} in 0.5 s\n")
    assert main(["data", "build"]) == 0 and calls[-1] == (None, 0, None)


@pytest.mark.parametrize("error, message", [
    (ValueError("atlas: formula dimension 17 (paper) disagrees with the exact rank 16"),
     "atlas: formula dimension 17 (paper) disagrees with the exact rank 16"),
    (PermissionError(13, "Permission denied", "/data/atlas.csv"),
     "cannot write the tables: [Errno 13] Permission denied: '/data/atlas.csv'"),
])
def test_data_build_failure_is_one_line(error, message, monkeypatch, capsys):
    from lsa_helpers import _build

    def failing_build(folder, *, seed, workers):
        raise error

    monkeypatch.setattr(_build, "build_data", failing_build)
    assert main(["data", "build"]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"lsa_helpers: error: {message}\n" and captured.out == ""


@pytest.mark.parametrize("args, message", [
    (["data"], "the following arguments are required: action"),
    (["data", "check"], "argument action: invalid choice: 'check' (choose from 'build')"),
    (["data", "build", "--seed", "x"],
     "argument --seed: --seed must be a non-negative integer, got 'x'"),
    (["data", "build", "--workers", "0"],
     "argument --workers: --workers must be a positive integer, got '0'"),
    (["reproduce", "softmax-conjecture", "--workers", "-2"],
     "argument --workers: --workers must be a positive integer, got '-2'"),
])
def test_data_bad_input_is_one_line_and_exit_2(args, message, capsys):
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.err == f"lsa_helpers: error: {message}\n" and captured.out == ""


def test_a_closed_pipe_ends_quietly_with_the_sigpipe_status():
    reader = subprocess.Popen([sys.executable, "-m", "lsa_helpers", "reproduce",
                               "softmax-conjecture"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader.stdout.close()  # nobody reads the output
    error = reader.stderr.read().decode()
    assert reader.wait(timeout=120) == 141 and error == ""


def test_ctrl_c_is_one_line_and_exit_130():
    running = subprocess.Popen([sys.executable, "-m", "lsa_helpers", "dimension", "--widths",
                                "40,40", "--ranks", "40"], stderr=subprocess.PIPE, text=True)
    announced = running.stderr.readline()  # the run starts: one of minutes
    running.send_signal(signal.SIGINT)
    error = announced + running.stderr.read()
    assert running.wait(timeout=120) == 130 and "Traceback" not in error
    assert announced.startswith("lsa_helpers: this request may need up to ")
    assert error.endswith("\nlsa_helpers: interrupted\n")  # after the announcement and progress


def test_a_large_request_is_announced_on_standard_error(monkeypatch, capsys):
    """Above LARGE bytes the command line says what the run needs before it starts."""
    monkeypatch.setattr("lsa_helpers.cli.LARGE", 0)
    assert main(["dimension", "--widths", "3,3", "--ranks", "2", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith("lsa_helpers: this request may need up to ")
    assert json.loads(captured.out)["certified_dimension"] == 16  # --json output stays clean


def test_a_float_rank_that_cannot_be_trusted_says_why(capsys):
    assert main(["dimension", "--widths", "3,3,3,3,3,3", "--ranks", "2,2,2,2,2", "--softmax",
                 "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["rank"] > record["upper_bound"] and record["float_rank_is_clear"] is False
    assert "upper bound" in record["float_rank_doubt"] and "gap_is_clear" not in record


# --- Ctrl-C pressed twice in a terminal: the whole process group gets SIGINT each time ----------

def interrupt_twice(args, started):
    """Run the command in its own process group with two workers; once ``started(stderr so
    far)`` and the workers run, send SIGINT to the group twice, as a terminal does. Returns the
    status, the standard error and the worker processes that are still alive."""
    import psutil

    running, seen, workers = start_with_workers([*args, "--workers", "2"], started, 2)
    for _ in range(2):
        os.killpg(running.pid, signal.SIGINT)
        time.sleep(0.1)  # two presses of Ctrl-C
    error = (seen + running.stderr.read()).decode()
    status = running.wait(timeout=60)
    _gone, alive = psutil.wait_procs(workers, timeout=10)
    for process in alive:
        process.kill()
    return status, error, alive


needs_process_groups = pytest.mark.skipif(not hasattr(os, "killpg"),
                                          reason="needs POSIX process groups")


@needs_process_groups
def test_two_ctrl_c_end_a_data_build_with_one_line(tmp_path):
    status, error, alive = interrupt_twice(["data", "build", "--folder", str(tmp_path)],
                                           lambda seen: b"atlas" in seen)  # its progress bar
    assert status == 130 and error.endswith("\nlsa_helpers: interrupted\n"), error
    assert "Traceback" not in error and not alive
    assert list(tmp_path.iterdir()) == []  # nothing written, no staging folder left


@needs_process_groups
def test_two_ctrl_c_end_the_softmax_experiment_with_one_line():
    status, error, alive = interrupt_twice(["reproduce", "softmax-conjecture"],
                                           lambda seen: True)
    assert (status, error) == (130, "lsa_helpers: interrupted\n") and not alive


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_for_the_output_is_one_line():
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "lsa_helpers", "dimension", "--widths", "3,3",
                               "--ranks", "3", "--json"], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=120, check=False)
    assert (done.returncode, done.stderr) == (
        1, "lsa_helpers: cannot write the output: No space left on device\n")
