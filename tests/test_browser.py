"""End to end: the course notebooks in JupyterLab, run in headless Chromium.

One JupyterLab server (this environment's, on a free loopback port, with a token) serves a
temporary copy of ``notebooks/``; Playwright drives Debian's Chromium. For each notebook the test
clears the stored outputs, runs all cells from the Run menu, waits until every prompt shows its
execution count and the kernel is idle, then checks that only the exercise cells tagged
``raises-exception`` show an error (their NotImplementedError) and that the widgets rendered; every
notebook of the course is run this way. In ``03_dimension`` it also moves the ``a`` slider of ``dimension_explorer`` with the keyboard and
checks that the printed line and the plot follow.

Run alone with ``pytest -m browser``. Skipped when ``/usr/bin/chromium`` is absent, except on CI
(``CI`` set), where ``.ci/run`` installs it and its absence fails. A failed check saves a
screenshot under the test's ``tmp_path`` and names it in the message. A failed attempt is
reported as a warning and repeated once on a fresh page (see :func:`retried`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
import warnings
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
DIMENSION = "03_dimension.ipynb"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

START = 180    # seconds: server up; JupyterLab loaded with the notebook's kernel idle
RUN_ALL = 120  # seconds: all cells of one notebook
WIDGET = 30    # seconds: any other wait (a menu, a widget rendering or reacting to a slider)

pytestmark = [
    pytest.mark.browser,
    # On CI (CI=true), .ci/run installs Chromium, so a missing one fails below instead.
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"),
                       reason=f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)"),
]

# JavaScript, evaluated with the argument {name, index}: the notebook panel of file `name`, found
# through the app object that --LabApp.expose_app_in_browser puts on window.
PANEL = ("Array.from(window.jupyterapp.shell.widgets('main'))"
         ".find(w => w.context && w.context.path === name)")
KERNEL_IDLE = f"""
    const panel = {PANEL};
    const kernel = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;
    const indicator = panel && panel.node.querySelector('.jp-Notebook-ExecutionIndicator');
    const idle = Boolean(kernel && kernel.status === 'idle'
                         && indicator && indicator.dataset.status === 'idle');
"""

# A client that subscribes to the kernel's IOPub just after the kernel started can miss the
# status messages that answer its first kernel_info request (ZeroMQ does not replay to late
# subscribers): the kernel is connected and idle, but its status stays 'unknown' until the next
# message. Ask for the kernel info again, at most every two seconds, so that a status comes.
NUDGE = """
    if (kernel && kernel.connectionStatus === 'connected' && kernel.status === 'unknown'
        && !(window.lastNudge > Date.now() - 2000)) {
        window.lastNudge = Date.now();
        kernel.requestKernelInfo();
    }
"""


def code_cells(name):
    """``(cell index, tags, stored output has a widget view, source)`` for each code cell."""
    cells = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))["cells"]
    return [(i, cell.get("metadata", {}).get("tags", []),
             any(WIDGET_MIME in output.get("data", {}) for output in cell.get("outputs", [])),
             "".join(cell["source"]))
            for i, cell in enumerate(cells) if cell["cell_type"] == "code"]


# --------------------------------------------------------------------------------------------
# The server and the browser.

def _poll(predicate, what, server, log):
    """Poll a cheap local check (a file, a loopback request) while the server starts."""
    deadline = time.monotonic() + START
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"JupyterLab exited ({server.returncode}) before {what}; log: {log}")
        result = predicate()
        if result:
            return result
        time.sleep(0.1)
    raise TimeoutError(f"no {what} after {START} s; log: {log}")


def _server_url(info_file):
    try:
        url = json.loads(info_file.read_text(encoding="utf-8"))["url"]
    except (OSError, ValueError, KeyError):  # not written yet, or half written
        return None
    return url if url.endswith("/") else url + "/"


def _answers(url, token):
    try:
        with urllib.request.urlopen(f"{url}api/status?token={token}", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _write_settings(settings_dir):
    settings = {
        # Attach every cell to the DOM (the default, contentVisibility, does too; "full" would not).
        "notebook-extension/tracker": {"windowingMode": "none"},
        # No "fetch news?" toast, no update check: the network is closed anyway.
        "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    }
    for plugin, values in settings.items():
        path = settings_dir / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on a copy of notebooks/: yields ``(url, token)``, then stops it, kernels too."""
    psutil = pytest.importorskip("psutil")
    # A fresh environment compiles its bytecode and builds matplotlib's font cache on first use:
    # do it here, so the kernel's first start is not counted against the waits below.
    warm = "import ipykernel, ipywidgets, matplotlib.pyplot, lsa_helpers.widgets"
    subprocess.run([sys.executable, "-c", warm], check=True, timeout=600)
    base = tmp_path_factory.mktemp("lab")
    root = base / "notebooks"
    shutil.copytree(NOTEBOOKS, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    _write_settings(base / "settings")
    runtime = base / "runtime"
    token = os.urandom(16).hex()
    # Only this test's configuration: no user config, kernelspecs, workspaces or matplotlib backend.
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("JUPYTER", "JPY_")) and key != "MPLBACKEND"}
    env.update(JUPYTER_CONFIG_DIR=str(base / "config"), JUPYTER_DATA_DIR=str(base / "data"),
               JUPYTER_RUNTIME_DIR=str(runtime), IPYTHONDIR=str(base / "ipython"))
    command = [sys.executable, "-m", "jupyterlab", "--no-browser",
               "--ServerApp.ip=127.0.0.1", "--ServerApp.port=0",  # 0: the OS picks a free port
               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
               "--LabApp.expose_app_in_browser=True",
               f"--LabApp.user_settings_dir={base / 'settings'}",
               f"--LabApp.workspaces_dir={base / 'workspaces'}"]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = base / "jupyterlab.log"
    with open(log, "wb") as output:
        server = subprocess.Popen(command, cwd=root, env=env, stdin=subprocess.DEVNULL,
                                  stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = _poll(lambda: _server_url(runtime / f"jpserver-{server.pid}.json"),
                    "server info file", server, log)
        _poll(lambda: _answers(url, token), "answer from /api/status", server, log)
        yield url, token
    finally:
        # SIGTERM makes the server shut its kernels down before it exits; afterwards no process
        # of its family (kernels are its children) may be left.
        try:
            process = psutil.Process(server.pid)
            family = [process, *process.children(recursive=True)]
        except psutil.NoSuchProcess:
            family = []
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
            pytest.fail(f"JupyterLab ignored SIGTERM for 30 s and was killed; log: {log}")
        _, alive = psutil.wait_procs(family, timeout=15)
        for process in alive:
            process.kill()
        assert not alive, f"left running after the server stopped: {alive}; log: {log}"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Headless Debian Chromium with a fresh user data dir, driven by Playwright."""
    if not CHROMIUM.exists():
        pytest.fail(f"CI without {CHROMIUM}: .ci/run should have installed Debian's chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=str(CHROMIUM),
            headless=True, args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000})
        try:
            yield context
        finally:
            context.close()


# --------------------------------------------------------------------------------------------
# The page.

class Notebook:
    """One notebook open in JupyterLab. A failed check saves a screenshot in ``tmp_path``."""

    def __init__(self, context, url, token, name, tmp_path):
        from playwright.sync_api import Error, TimeoutError

        self.error, self.timeout_error = Error, TimeoutError
        self.name, self.tmp_path, self.arg = name, tmp_path, {"name": name}
        self.console = []
        self.page = context.new_page()
        self.page.on("console", lambda message: message.type in ("error", "warning")
                     and self.console.append(f"{message.type}: {message.text}"))
        self.page.on("pageerror", lambda error: self.console.append(str(error)))
        self.page.set_default_timeout(WIDGET * 1000)
        # reset: a fresh layout with this notebook alone, not the tabs of an earlier page
        self.page.goto(f"{url}lab/tree/{name}?reset&token={token}")
        self.wait("() => window.jupyterapp && window.jupyterapp.shell", "JupyterLab to load", START)
        self.wait(f"({{name}}) => {{ {KERNEL_IDLE} {NUDGE} return idle; }}",
                  "the notebook's kernel to start and go idle", START,
                  seen=lambda: self.page.evaluate(f"({{name}}) => {{ {KERNEL_IDLE} return "
                                                  "kernel && [kernel.connectionStatus, "
                                                  "kernel.status].join(', '); }}", self.arg))
        self.panel = self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")

    def close(self):
        """Shut the notebook's kernel down, then close the page (also after a failure)."""
        try:
            self.page.evaluate(f"({{name}}) => {PANEL}.sessionContext.shutdown()", self.arg)
        except self.error:
            pass  # a page that broke down: the server shuts the kernel down at the end
        self.page.close()

    def fail(self, message):
        shot = self.tmp_path / f"{Path(self.name).stem}-failure.png"
        try:
            self.page.screenshot(path=str(shot), full_page=True)
        except self.error as error:  # the screenshot must not hide the failure
            shot = f"(none: {error})"
        console = "; ".join(self.console[-8:]) or "none"
        pytest.fail(f"{self.name}: {message}\nscreenshot: {shot}\n"
                    f"browser console errors and warnings: {console}", pytrace=False)

    def check(self, condition, message):
        if not condition:
            self.fail(message)

    def wait(self, function, what, timeout=WIDGET, arg=None, seen=None):
        """Wait until the JavaScript ``function(arg)`` returns something truthy; return it.

        On a timeout, ``seen()`` (if given) describes what the page shows instead.
        """
        try:
            return self.page.wait_for_function(function, arg=arg or self.arg,
                                               timeout=timeout * 1000).json_value()
        except self.timeout_error:
            pass  # fail outside the except clause: the Playwright call log adds nothing here
        shown = f"; instead: {seen()}" if seen else ""
        self.fail(f"timed out after {timeout} s waiting for {what}{shown}")

    def wait_for(self, locator, what, timeout=WIDGET):
        try:
            locator.wait_for(timeout=timeout * 1000)
            return locator
        except self.timeout_error:
            pass
        self.fail(f"timed out after {timeout} s waiting for {what}")

    def menu(self, menu, item):
        """Click ``menu`` in the menu bar, then ``item`` in the menu it opens."""
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{menu}$")).click()
        entry = self.page.locator(".lm-Menu-item:not(.lm-mod-disabled) .lm-Menu-itemLabel",
                                  has_text=re.compile(f"^{re.escape(item)}$"))
        self.wait_for(entry, f"the menu item {menu} > {item}").click()

    def cell(self, index):
        """The DOM node of cell ``index``, checked to be that cell's widget node in JupyterLab."""
        cell = self.panel.locator(".jp-Notebook .jp-Cell").nth(index)
        same = cell.evaluate(
            f"(node, {{name, index}}) => node === {PANEL}.content.widgets[index].node",
            {"name": self.name, "index": index})
        self.check(same, f"the {index}th .jp-Cell is not cell {index}")
        return cell

    def run_all(self):
        """Clear the outputs, run all cells, wait until none is pending; return the prompts."""
        # Stored outputs hold widget views whose models are in no kernel ("Error displaying
        # widget: model not found") and stored counts: clear them, so that all checked is new.
        self.menu("Edit", "Clear Outputs of All Cells")
        self.wait("""({name}) => Array.from(document.querySelectorAll(
                     '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt'))
                     .every(p => p.textContent.trim() === '[ ]:')""", "the prompts to clear")
        self.menu("Run", "Run All Cells")
        # Run All marks every code cell [*] at once; done when none is [*] and the kernel is idle
        # (also when an unexpected error aborted the rest: those cells go back to [ ]).
        return self.wait(f"""({{name}}) => {{
            {KERNEL_IDLE}
            const prompts = Array.from(panel.node.querySelectorAll('.jp-CodeCell .jp-InputPrompt'))
                .map(p => p.textContent.trim());
            return idle && !prompts.includes('[*]:') && prompts.some(p => p !== '[ ]:') && prompts;
        }}""", "all cells to run and the kernel to go idle", RUN_ALL, seen=self.state)

    def state(self) -> str:
        """The kernel's connection and status, and the prompts of the code cells."""
        return self.page.evaluate(f"""({{name}}) => {{
            {KERNEL_IDLE}
            const prompts = Array.from(panel.node.querySelectorAll(
                '.jp-CodeCell .jp-InputPrompt')).map(p => p.textContent.trim()).join(' ');
            return `kernel ${{kernel && kernel.connectionStatus}}, ${{kernel && kernel.status}}, `
                + `indicator ${{indicator && indicator.dataset.status}}; prompts ${{prompts}}`;
        }}""", self.arg)

    def errors(self):
        """``{cell index: ["ename: evalue", ...]}`` read from the cell models, for error outputs."""
        return {index: errors for index, errors in self.page.evaluate(f"""({{name}}) => {{
            const panel = {PANEL};
            return panel.content.widgets.map((cell, index) => [index,
                cell.model.type !== 'code' ? [] : cell.model.outputs.toJSON()
                    .filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue)])
                .filter(([, errors]) => errors.length);
        }}""", self.arg)}


def run_and_check(context, lab, tmp_path, name):
    """Open ``name``, run all, check errors and widgets; return the open :class:`Notebook`."""
    cells = code_cells(name)
    exercises = sorted(i for i, tags, _, _ in cells if "raises-exception" in tags)
    notebook = Notebook(context, *lab, name, tmp_path)
    try:
        check_run(notebook, cells, exercises)
    except BaseException:
        notebook.close()
        raise
    return notebook


def check_run(notebook, cells, exercises):
    """Run all cells of the open ``notebook`` and check its errors, prompts and widgets."""
    prompts = notebook.run_all()

    errors = notebook.errors()
    notebook.check(sorted(errors) == exercises,
                   f"the cells with an error output, {sorted(errors)}, are not the "
                   f"{len(exercises)} exercise cells tagged raises-exception, {exercises}: "
                   f"{errors}")
    notebook.check(all(len(found) == 1 and found[0].startswith("NotImplementedError")
                       for found in errors.values()),
                   f"an exercise cell raised something else than its NotImplementedError: {errors}")
    notebook.check(prompts == [f"[{n}]:" for n in range(1, len(cells) + 1)],
                   f"the execution counts are not 1 to {len(cells)} in order: {prompts}")
    shown = notebook.panel.locator(".jp-OutputArea-output", has_text="NotImplementedError").count()
    notebook.check(shown == len(exercises),
                   f"{shown} tracebacks of NotImplementedError shown, {len(exercises)} expected")

    widget_cells = [i for i, _, widget, _ in cells if widget]
    demos = [i for i, _, _, source in cells if "_explorer(" in source]
    notebook.check(set(demos) <= set(widget_cells),
                   f"the demo cells {demos} show no widget in the stored notebook, so none is "
                   "checked")
    for index in widget_cells:
        cell = notebook.cell(index)
        for selector, what in ((".jupyter-widgets.widget-interact", "the widget"),
                               (".widget-slider", "a slider"),
                               (".widget-output img, .widget-output pre", "the widget's output")):
            notebook.wait_for(cell.locator(selector).first, f"{what} in cell {index}")
        shown = cell.locator(".widget-output").first.inner_text()
        notebook.check(not re.search(r"Traceback|\w+Error:", shown),
                       f"the widget of cell {index} shows an error: {shown[:300]!r}")
    notebook.check(notebook.page.get_by_text("Error displaying widget").count() == 0,
                   "a widget failed to display ('Error displaying widget')")


def retried(attempt, tmp_path):
    """``attempt(folder)``, and once more on a fresh page with a fresh kernel if it fails.

    Now and then a reply between JupyterLab and the kernel stalls (Run All stops with the kernel
    idle, or a widget's new output never arrives), a fault of neither the course nor its widgets
    that a user's next action clears. A second attempt absorbs it; the first failure is still
    reported as a warning, and two failures fail the test with both messages.
    """
    from playwright.sync_api import Error

    failures = []
    for number in (1, 2):
        folder = tmp_path / f"attempt-{number}"
        folder.mkdir()
        try:
            return attempt(folder)
        except (pytest.fail.Exception, Error) as failure:
            failures.append(f"attempt {number}: {failure}")
            warnings.warn(f"browser test, attempt {number} failed: {failure}", stacklevel=2)
    pytest.fail("\n".join(failures), pytrace=False)


def test_dimension_notebook_runs_and_its_widget_follows_a_slider(browser, lab, tmp_path):
    def attempt(folder):
        notebook = run_and_check(browser, lab, folder, DIMENSION)
        try:
            follow_the_slider(notebook)
        finally:
            notebook.close()

    retried(attempt, tmp_path)


def follow_the_slider(notebook):
    """Move ``a`` of ``dimension_explorer`` one step down; the line and the plot must follow."""
    from lsa_helpers import Architecture, dimension, formula_dimension

    index = next(i for i, _, _, source in code_cells(DIMENSION) if "dimension_explorer(" in source)
    demo = notebook.cell(index)
    sliders = demo.locator(".widget-slider")
    labels = [label.strip() for label in sliders.locator(".widget-label").all_inner_texts()]
    notebook.check(labels == ["d", "d_out", "a", "t"], f"dimension_explorer's sliders: {labels}")
    output = demo.locator(".widget-output")
    text_before = output.inner_text()
    image_before = output.locator("img").get_attribute("src")
    notebook.check("formula" in text_before and "exact rank" in text_before,
                   f"the widget printed no line with formula and exact rank: {text_before!r}")

    slider_a = sliders.nth(labels.index("a"))
    readout = slider_a.locator(".widget-readout")
    notebook.check(readout.inner_text().strip() == "3", f"a starts at {readout.inner_text()!r}")
    # Focus and key press in one action, so that nothing can take the focus in between.
    slider_a.locator(".noUi-handle").press("ArrowLeft")  # one step down: a = 2
    notebook.wait(f"""({{name, index}}) => {{
        const readouts = {PANEL}.content.widgets[index].node.querySelectorAll('.widget-readout');
        return readouts[{labels.index("a")}].innerText.trim() === '2';
    }}""", "the slider a to read 2 after ArrowLeft", arg={"name": DIMENSION, "index": index},
        seen=lambda: f"a reads {readout.inner_text()!r}, focus on "
                     + notebook.page.evaluate("document.activeElement.className"))

    arch = Architecture((3, 3), (2,), tokens=3)  # the other sliders at their defaults
    formula, exact = formula_dimension(arch).value, dimension(arch, rng=2025).rank
    expected = [str(arch), f"formula [paper] {formula}", f"exact rank {exact}"]
    text_after = notebook.wait(f"""({{name, index, before, expected}}) => {{
        const output = {PANEL}.content.widgets[index].node.querySelector('.widget-output');
        const text = output.innerText;
        return text !== before && output.querySelector('img')
            && expected.every(part => text.includes(part)) && text;
    }}""", f"the widget's line to show {expected}",
        arg={"name": DIMENSION, "index": index, "before": text_before, "expected": expected},
        seen=lambda: repr(output.inner_text()[:600]))
    notebook.check((arch.parameter_count, formula, exact) == (21, 16, 16),
                   f"a = 2: {arch.parameter_count} parameters, formula {formula}, "
                   f"exact rank {exact}")
    notebook.check("ranks=(3)" not in text_after,
                   f"the line for a = 3 is still shown: {text_after!r}")
    image_after = output.locator("img").get_attribute("src")
    notebook.check(image_after and image_after != image_before, "the plot did not change with a")


@pytest.mark.parametrize("name", [path.name for path in sorted(NOTEBOOKS.glob("0*.ipynb"))
                                  if path.name != DIMENSION])
def test_every_other_notebook_runs_with_its_widgets(browser, lab, tmp_path, name):
    retried(lambda folder: run_and_check(browser, lab, folder, name).close(), tmp_path)
