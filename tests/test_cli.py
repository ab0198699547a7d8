import json
import subprocess
import sys

import pytest

from lsa_helpers.cli import main

KEYS = {"widths", "ranks", "normalization", "tokens", "parameters", "formula_dimension", "rank",
        "method", "certified_dimension"}


def run(*args):
    return subprocess.run([sys.executable, "-m", "lsa_helpers", *args], capture_output=True,
                          text=True, timeout=120)


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


def test_plain_text_output(capsys):
    assert main(["dimension", "--widths", "3,3", "--ranks", "3", "--tokens", "2"]) == 0
    out = capsys.readouterr().out
    assert "certified_dimension: 17" in out and "tokens: 2" in out


@pytest.mark.parametrize("args, message", [
    (["--widths", "3,x", "--ranks", "2"], "argument --widths: widths must be comma-separated integers, got '3,x'"),
    (["--widths", "3,0", "--ranks", "2"], "widths must be positive integers, got widths=(3, 0)"),
    (["--widths", "3,-1", "--ranks", "2"], "widths must be positive integers, got widths=(3, -1)"),
    (["--widths", "3,3", "--ranks", "2,2"],
     "ranks must have one entry per layer (len(widths) - 1 = 1), got ranks=(2, 2)"),
    (["--widths", "3,3", "--ranks", "2", "--tokens", "0"], "tokens must be an integer >= 1, got tokens=0"),
    (["--widths", "3,3", "--ranks", "2", "--method", "exact", "--softmax"],
     "exact arithmetic needs normalization='lightning' (softmax is not polynomial)"),
    (["--widths", "3,3", "--ranks", "2", "--method", "fast"],
     "argument --method: invalid choice: 'fast' (choose from 'auto', 'float', 'exact', 'certified')"),
    (["--widths", "3,3"], "the following arguments are required: --ranks"),
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
