"""Starting the command line in a child process and waiting until its worker processes run."""

import subprocess
import sys
import time


def start_with_workers(args, started, workers):
    """Run ``python -m lsa_helpers *args`` in its own process group and wait until
    ``started(standard error so far)`` holds and all ``workers`` worker processes exist.

    Returns the process, its standard error so far and its workers (``psutil.Process``)."""
    import psutil

    running = subprocess.Popen([sys.executable, "-m", "lsa_helpers", *args], start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen = b""
    while not started(seen):
        chunk = running.stderr.read1(1 << 16)
        assert chunk, f"the command ended before it started: {seen!r}"
        seen += chunk
    parent, found = psutil.Process(running.pid), []
    deadline = time.monotonic() + 120
    while len(found) < workers and time.monotonic() < deadline:  # the pool starts them one by one
        found = parent.children()
        time.sleep(0.01)
    assert len(found) == workers, f"{len(found)} of {workers} workers started"
    return running, seen, found
