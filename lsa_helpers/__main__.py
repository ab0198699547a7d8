import os
import sys


def _run() -> int:
    """The command line. ``reproduce`` runs BLAS on one thread in each worker while this process
    waits: no BLAS thread pool is started here, which would only delay the start."""
    if sys.argv[1:2] == ["reproduce"]:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from .cli import main

    return main()


sys.exit(_run())
