"""The JupyterLite site (tools/build_lite.py): its build, its lock, and its kernel in Chromium.

The module builds the site once into a temporary folder (the build ends with ``jupyter lite
check``), serves it on 127.0.0.1 and opens it in Debian's Chromium, driven by Playwright, with
every other host unresolvable. A new notebook there runs the install cell and cells using sympy,
python-flint, ipywidgets and the parts of lsa_helpers that load no numpy. The only requests
that leave the machine are those for the four wheels the lock points at Pyodide's CDN (numpy,
matplotlib, pillow, kiwisolver), which the install cell's ``import lsa_helpers`` asks for; here
they fail, so no cell uses numpy. Run alone with ``pytest -m browser tests/test_lite.py``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import time
from importlib.metadata import requires
from math import comb
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from static_server import serving

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
# Every host but the loopback address fails to resolve: nothing reaches the internet.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
CDN_WHEELS = ("numpy", "matplotlib", "pillow", "kiwisolver")
BUILD = 600  # seconds: the build, with jupyter lite check
KERNEL = 300  # seconds: JupyterLab loaded, a new notebook's kernel idle (30 to 160 s here)
CELLS = 180  # seconds: the cells below, sympy's import included

spec = importlib.util.spec_from_file_location("install_cell", ROOT / "tools" / "install_cell.py")
install_cell = importlib.util.module_from_spec(spec)
spec.loader.exec_module(install_cell)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"),
                       reason=f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)"),
]

# Cells of the new notebook, and what each prints; the numbers are computed independently below.
D, T = 2, 3  # one layer, d = d' = a = 2, three tokens
CELL_SOURCES = [
    install_cell.SOURCE,
    "import sys\nprint(sys.platform, 'numpy' in sys.modules)",
    "import sympy\nx = sympy.Symbol('x')\nprint(sympy.factor(x**3 - x))",
    # exact rank mod p: the second row is twice the first
    "import flint\nprint(flint.nmod_mat(3, 3, [1, 2, 3, 2, 4, 6, 1, 0, 1], 10007).rank())",
    # monomials of one output entry, counted in the expanded polynomial and by the formula
    f"from lsa_helpers import Architecture\n"
    f"from lsa_helpers.formulas import monomials_per_entry\n"
    f"from lsa_helpers.symbolic import monomial_count, symbolic_layer\n"
    f"layer = symbolic_layer({D}, {D}, {D}, {T})\n"
    f"print(monomial_count(layer.output[0, 0], list(layer.X)), monomials_per_entry({D}, {T}))\n"
    f"print(Architecture(({D}, {D}), ({D},)).parameter_count,\n"
    f"      sum(len(m) for m in (layer.Q, layer.K, layer.V)))\n"
    f"print('numpy' in sys.modules)",
    "import ipywidgets\nslider = ipywidgets.IntSlider(value=7, min=0, max=9, description='k')\n"
    "slider",
]
# (t - 1) d C(d + 1, 2) + C(d + 2, 3): quadratic in each other token, cubic in its own
MONOMIALS = (T - 1) * D * comb(D + 1, 2) + comb(D + 2, 3)
# Q and K are a x d, V is d' x d
PARAMETERS = 3 * D * D
EXPECTED = [
    "",
    "emscripten False\n",
    "x*(x - 1)*(x + 1)\n",
    "2\n",
    f"{MONOMIALS} {MONOMIALS}\n{PARAMETERS} {PARAMETERS}\nFalse\n",
    None,  # the widget: checked in the page
]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built by tools/build_lite.py into a fresh folder, with ``jupyter lite check``."""
    if not os.environ.get("CI"):
        pytest.importorskip("jupyterlite_core")
    output = tmp_path_factory.mktemp("lite") / "site"
    start = time.monotonic()
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "build_lite.py"), str(output)],
                          capture_output=True, text=True, timeout=BUILD, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    print(f"built in {time.monotonic() - start:.0f} s")
    return output


def lock_packages(site):
    return json.loads((site / "static" / "pyodide" / "pyodide-lock.json").read_text())["packages"]


def test_the_lock_lists_each_bundled_wheel_with_its_sha256(site):
    folder = site / "static" / "pyodide"
    bundled = {name: p for name, p in lock_packages(site).items() if "://" not in p["file_name"]}
    assert {"lsa-helpers", "python-flint", "contourpy", "sympy", "ipywidgets"} <= set(bundled)
    for name, package in bundled.items():
        wheel = folder / package["file_name"]
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() == package["sha256"], name
    assert sorted(p.name for p in folder.glob("*.whl")) == sorted(
        p["file_name"] for p in bundled.values())


def test_the_four_cdn_wheels_are_pyodides_own(site):
    """numpy, matplotlib, pillow, kiwisolver: Pyodide's file names and sha256, at its CDN."""
    npm = ROOT / "lite" / "node_modules" / "pyodide" / "pyodide-lock.json"
    official = json.loads(npm.read_text())["packages"]
    remote = {name: p for name, p in lock_packages(site).items() if "://" in p["file_name"]}
    assert sorted(remote) == sorted(CDN_WHEELS)
    for name, package in remote.items():
        url = urlsplit(package["file_name"])
        assert url.scheme == "https" and url.path.endswith("/" + official[name]["file_name"])
        assert package["sha256"] == official[name]["sha256"]


def test_the_package_depends_on_its_requirements(site):
    required = {canonicalize_name(Requirement(r).name) for r in requires("lsa-helpers")}
    assert set(lock_packages(site)["lsa-helpers"]["depends"]) == required


def test_the_site_holds_the_course(site):
    files = {p.relative_to(site / "files").as_posix() for p in (site / "files").rglob("*")}
    lessons = {p.name for p in (ROOT / "notebooks").glob("0*.ipynb")}
    assert len(lessons) == 9 and lessons <= files
    assert {f"solutions/{name}" for name in lessons} <= files
    assert {"CHEATSHEET.md", "INSTRUCTORS.md"} <= files
    assert {f"ko/{p.name}" for p in (ROOT / "notebooks" / "ko").iterdir()} <= files


# --------------------------------------------------------------------------------------------
# In the browser.

@pytest.fixture(scope="module")
def served(site, tmp_path_factory):
    """The site on a free loopback port, with the app object exposed for the test."""
    config = site / "jupyter-lite.json"
    settings = json.loads(config.read_text())
    settings["jupyter-config-data"]["exposeAppInBrowser"] = True
    config.write_text(json.dumps(settings))
    with serving(site) as url:
        yield url


@pytest.fixture(scope="module")
def page(served, tmp_path_factory):
    """A page of the site in headless Chromium; yields ``(page, outside requests)``."""
    if not CHROMIUM.exists():
        pytest.fail(f"CI without {CHROMIUM}: .ci/run should have installed Debian's chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    outside = []
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=str(CHROMIUM),
            headless=True, args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000})
        context.on("request", lambda request: request.url.startswith(served)
                   or outside.append(request.url))
        try:
            page = context.new_page()
            page.goto(f"{served}lab/index.html?path=CHEATSHEET.md")  # the form the book links
            yield page, outside
        finally:
            context.close()


NEW_NOTEBOOK = """async (sources) => {
    const app = window.jupyterapp;
    const panel = await app.commands.execute('notebook:create-new', {kernelName: 'python'});
    await panel.context.ready;
    await panel.sessionContext.ready;
    panel.content.model.sharedModel.deleteCellRange(0, panel.content.model.cells.length);
    panel.content.model.sharedModel.insertCells(0, sources.map(
        source => ({cell_type: 'code', source})));
    window.testPanel = panel;
}"""
KERNEL_IDLE = """() => {
    const kernel = window.testPanel.sessionContext.session?.kernel;
    return kernel && kernel.status === 'idle';
}"""
# Done when every cell ran, or one failed (Run All stops there), and the kernel is idle.
DONE = """() => {
    const cells = window.testPanel.content.widgets.map(cell => cell.model);
    const kernel = window.testPanel.sessionContext.session.kernel;
    const failed = cells.some(cell => cell.outputs.toJSON().some(
        output => output.output_type === 'error'));
    return kernel.status === 'idle' && (failed || cells.every(c => c.executionCount !== null));
}"""
OUTPUTS = """() => window.testPanel.content.widgets.map(cell => cell.model.outputs.toJSON())"""


def text_of(outputs):
    """The printed text of a cell, or its error, from its nbformat outputs."""
    for output in outputs:
        if output["output_type"] == "error":
            return f"{output['ename']}: {output['evalue']}"
    return "".join("".join(o["text"]) for o in outputs
                   if o["output_type"] == "stream" and o["name"] == "stdout")


def test_the_kernel_runs_the_pure_parts_offline(page, site, tmp_path):
    page, outside = page
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started",
                           timeout=KERNEL * 1000)
    start = time.monotonic()
    page.evaluate(NEW_NOTEBOOK, CELL_SOURCES)
    page.wait_for_function(KERNEL_IDLE, timeout=KERNEL * 1000)
    booted = time.monotonic() - start
    assert outside == [], "the kernel started with files from outside"
    opened = page.evaluate("() => Array.from(window.jupyterapp.shell.widgets('main'))"
                           ".map(widget => widget.context?.path)")
    assert "CHEATSHEET.md" in opened
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    try:
        page.wait_for_function(DONE, timeout=CELLS * 1000)
    finally:
        page.screenshot(path=str(tmp_path / "lite.png"))
    ran = time.monotonic() - start - booted
    print(f"kernel idle after {booted:.0f} s, cells ran in {ran:.0f} s")
    printed = [text_of(outputs) for outputs in page.evaluate(OUTPUTS)]
    assert printed[:-1] == EXPECTED[:-1], f"screenshot: {tmp_path / 'lite.png'}"
    slider = page.locator(".jp-OutputArea .widget-slider")
    slider.wait_for(timeout=30_000)
    assert slider.locator(".widget-readout").inner_text().strip() == "7"
    cdn = {p["file_name"] for p in lock_packages(site).values() if "://" in p["file_name"]}
    assert set(outside) == cdn and len(cdn) == len(CDN_WHEELS)
