import runpy
from pathlib import Path

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
# The notebook runs of the lesson tests (nbclient) must not lose a kernel's reply.
runpy.run_path(str(Path(__file__).resolve().parents[1] / "tools" / "nbclient_wakeup.py"))


@pytest.fixture
def rng():
    return np.random.default_rng(20250101)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    import matplotlib.pyplot as plt
    plt.close("all")
