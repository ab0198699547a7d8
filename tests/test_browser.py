"""End to end: the course notebooks in JupyterLab, run in headless Chromium.

One JupyterLab server (this environment's, on a free loopback port, with a token) serves a
temporary copy of ``notebooks/``; Playwright drives Debian's Chromium. For each notebook the test
clears the stored outputs, runs all cells from the Run menu, waits until every prompt shows its
execution count and the kernel is idle, then checks that only the exercise cells tagged
``raises-exception`` show an error (their NotImplementedError) and that the widgets rendered; every
notebook of the course is run this way. In ``03_dimension`` it also moves the ``a`` slider of
``dimension_explorer`` with the keyboard and checks that the printed line and the plot follow.
One more test plays ``02`` as a RISE slideshow (``/rise/<notebook>``): math, the keyboard walk to
the demo's slide, the demo run live there.

Run alone with ``pytest -m browser``. Skipped when ``/usr/bin/chromium`` is absent, except on CI
(``CI`` set), where ``.ci/run`` installs it and its absence fails. A failed check saves a
screenshot under the test's ``tmp_path`` and names it in the message. A failure fails: nothing
is run twice.
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
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
DIMENSION = "03_dimension.ipynb"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

START = 180    # seconds: server up; JupyterLab loaded with the notebook's kernel idle
RUN_ALL = 180  # seconds: all cells of one notebook (one cell of 07 takes 20 s or more)
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
# JavaScript, with `panel` defined: the execution counts of the code cells, read from their models
# (a collapsed input, source_hidden, shows no prompt of its own to read them from).
COUNTS = ("panel.content.widgets.filter(cell => cell.model.type === 'code')"
          ".map(cell => cell.model.executionCount)")
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
    """``(cell index, tags, source)`` for each code cell."""
    cells = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))["cells"]
    return [(i, cell.get("metadata", {}).get("tags", []), "".join(cell["source"]))
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
        self.wait(f"""({{name}}) => {{
            const panel = {PANEL};
            return {COUNTS}.every(count => count === null);
        }}""", "the execution counts to clear")
        self.menu("Run", "Run All Cells")
        # Run All marks every code cell [*] at once; done when none is [*] and the kernel is idle
        # (also when an unexpected error aborted the rest: those cells go back to [ ]).
        return self.wait(f"""({{name}}) => {{
            {KERNEL_IDLE}
            const pending = Array.from(panel.node.querySelectorAll('.jp-CodeCell .jp-InputPrompt'))
                .some(p => p.textContent.trim() === '[*]:');
            const prompts = {COUNTS}.map(count => count === null ? '[ ]:' : `[${{count}}]:`);
            return idle && !pending && prompts.some(p => p !== '[ ]:') && prompts;
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

    def widget_cells(self):
        """The indices of the cells whose outputs hold a widget view, read from the cell models."""
        return self.page.evaluate(f"""({{name}}) => {{
            const panel = {PANEL};
            return panel.content.widgets.map((cell, index) => [index,
                cell.model.type === 'code' && cell.model.outputs.toJSON()
                    .some(o => o.data && '{WIDGET_MIME}' in o.data)])
                .filter(([, widget]) => widget).map(([index]) => index);
        }}""", self.arg)

    def errors(self):
        """``{cell index: ["ename: evalue", ...]}`` read from the cell models, for error outputs."""
        return dict(self.page.evaluate(f"""({{name}}) => {{
            const panel = {PANEL};
            return panel.content.widgets.map((cell, index) => [index,
                cell.model.type !== 'code' ? [] : cell.model.outputs.toJSON()
                    .filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue)])
                .filter(([, errors]) => errors.length);
        }}""", self.arg))


def run_and_check(context, lab, tmp_path, name):
    """Open ``name``, run all, check errors and widgets; return the open :class:`Notebook`."""
    cells = code_cells(name)
    exercises = sorted(i for i, tags, _ in cells if "raises-exception" in tags)
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

    widget_cells = notebook.widget_cells()
    demos = [i for i, _, source in cells if "_explorer(" in source]
    notebook.check(set(demos) <= set(widget_cells),
                   f"the demo cells {demos} show no widget view after Run All: {widget_cells}")
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


def test_dimension_notebook_runs_and_its_widget_follows_a_slider(browser, lab, tmp_path):
    notebook = run_and_check(browser, lab, tmp_path, DIMENSION)
    try:
        follow_the_slider(notebook)
    finally:
        notebook.close()


def follow_the_slider(notebook):
    """Move ``a`` of ``dimension_explorer`` one step down; the line and the plot must follow."""
    from lsa_helpers import Architecture, dimension, formula_dimension

    index = next(i for i, _, source in code_cells(DIMENSION) if "dimension_explorer(" in source)
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
    before = dimension(Architecture((3, 3), (3,), tokens=3), rng=2025).rank
    expected = [f"formula [paper] {formula}", f"exact rank {exact},", f"certified {exact}"]
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
    notebook.check(f"exact rank {before}," not in text_after,
                   f"the line for a = 3 is still shown: {text_after!r}")
    image_after = output.locator("img").get_attribute("src")
    notebook.check(image_after and image_after != image_before, "the plot did not change with a")


@pytest.mark.parametrize("name", [path.name for path in sorted(NOTEBOOKS.glob("0*.ipynb"))
                                  if path.name != DIMENSION])
def test_every_other_notebook_runs_with_its_widgets(browser, lab, tmp_path, name):
    run_and_check(browser, lab, tmp_path, name).close()


# --------------------------------------------------------------------------------------------
# The notebook as a RISE slideshow (jupyterlab-rise): /rise/<path> serves a page of its own, with
# reveal.js and a kernel but without JupyterLab's app object, so the kernel is watched and shut
# down through the server's REST API. What RISE 0.43.1 puts in the DOM: the notebook panel is the
# `.reveal` element (class `ready` once reveal.js has started); `.reveal .slides` holds one
# `section` per slide, each with the `section` of its subslides; reveal.js marks the one shown
# `present` and names it in location.hash (`#/slide-<h>-<v>[/<fragment>]`). The cells
# (`.jp-Cell`, in notebook order) are moved into those sections; cells of slide type skip stay
# there with the class `reveal-skip` and `display: none`; fragments get `.fragment`. Navigation
# is linear: Space and ArrowRight both step through fragments and subslides.

DECK = "02_fibers_and_identifiability.ipynb"
# The slide shown now.
PRESENT = "document.querySelector('.reveal .slides > section.present > section.present')"
# The horizontal index of the slide that holds `node`.
SLIDE_INDEX = ("(node) => Array.from(document.querySelectorAll('.reveal .slides > section'))"
               ".indexOf(node && node.closest('.reveal .slides > section'))")
# What the widget manager logs in the RISE page when it cannot load (see the xfail below).
NO_WIDGET_MANAGER = "Failed to create module: package: @jupyter-widgets/jupyterlab-manager"


def slide_types(name):
    """The slideshow ``slide_type`` of each cell of ``name`` (``"-"`` where none is set)."""
    cells = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))["cells"]
    return [cell.get("metadata", {}).get("slideshow", {}).get("slide_type", "-") for cell in cells]


class Slideshow(Notebook):
    """One notebook open as a RISE slideshow; the checks and waits of :class:`Notebook`.

    ``viewport``: the page's size (``{"width": ..., "height": ...}``) if not the browser's;
    ``idle``: wait for the kernel to be idle before returning.
    """

    def __init__(self, context, url, token, name, tmp_path, viewport=None, idle=True):
        from playwright.sync_api import Error, TimeoutError

        self.error, self.timeout_error = Error, TimeoutError
        self.url, self.token = url, token
        self.name, self.tmp_path, self.arg = name, tmp_path, {"name": name}
        self.console = []
        # RISE asks for rise.css and <name>.css next to the notebook: harmless 404s, left out.
        folder = Path(name).parent
        harmless = (f"/files/{folder / 'rise.css'}", f"/files/{Path(name).with_suffix('.css')}")
        self.page = context.new_page()
        if viewport:
            self.page.set_viewport_size(viewport)
        self.page.on("console", lambda message: message.type in ("error", "warning")
                     and not any(css in message.text for css in harmless)
                     and self.console.append(f"{message.type}: {message.text}"))
        self.page.on("pageerror", lambda error: self.console.append(str(error)))
        self.page.set_default_timeout(WIDGET * 1000)
        self.page.goto(f"{url}rise/{name}?token={token}")
        self.wait(f"() => document.querySelector('.reveal.ready') && {PRESENT}",
                  "reveal.js to show the first slide", START,
                  seen=lambda: repr(self.page.inner_text("body")[:300]))
        if idle:  # else the kernel starts while the slides are looked at
            self.wait_for_kernel("the notebook's kernel to start and go idle", START)

    def api(self, path, method="GET"):
        request = urllib.request.Request(f"{self.url}api/{path}?token={self.token}",
                                         method=method)
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def session(self):
        """The server's session of this notebook (opened by the slideshow), or None."""
        return next((s for s in self.api("sessions") if s["path"] == self.name), None)

    def kernel_state(self):
        session = self.session()
        return session and session["kernel"]["execution_state"]

    def wait_for_kernel(self, what, timeout=WIDGET):
        """Wait until the server reports the kernel of this notebook idle."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.kernel_state() == "idle":
                return
            time.sleep(0.2)
        self.fail(f"timed out after {timeout} s waiting for {what}; instead: kernel state "
                  f"{self.kernel_state()!r}")

    def close(self):
        """Shut the kernel down (deleting its session), then close the page."""
        try:
            session = self.session()
            if session:
                self.api(f"sessions/{session['id']}", method="DELETE")
        except OSError:
            pass  # the server shuts the kernel down at the end
        self.page.close()

    def shown(self) -> str:
        """The slide shown: reveal.js's hash and the start of its text."""
        return self.page.evaluate(f"""() => {{
            const slide = {PRESENT};
            return location.hash + ' '
                + JSON.stringify(slide ? slide.innerText.slice(0, 80) : null);
        }}""")

    def cell(self, index):
        """The DOM node of cell ``index``: RISE keeps the cells in notebook order."""
        return self.page.locator(".reveal .slides .jp-Cell").nth(index)

    def slide_of(self, index):
        return self.cell(index).evaluate(SLIDE_INDEX)

    def check_math(self):
        """The slide shown renders its mathematics: MathJax output, visible, and no raw $...$."""
        found = self.wait(f"""() => {{
            const slide = {PRESENT};
            if (!slide) return false;
            const markdown = Array.from(slide.querySelectorAll('.jp-MarkdownCell'))
                .filter(cell => getComputedStyle(cell).display !== 'none');
            const rendered = markdown.every(cell => cell.classList.contains('jp-mod-rendered'));
            const text = markdown.map(cell => cell.innerText).join('\\n');
            const math = Array.from(slide.querySelectorAll('mjx-container')).filter(node => {{
                const box = node.getBoundingClientRect();
                return box.width > 0 && box.height > 0 && box.top < innerHeight && box.bottom > 0;
            }});
            return rendered && math.length && !/\\$[^$\\n]+\\$/.test(text) && math.length;
        }}""", "the slide's mathematics to render (visible MathJax output, no raw $...$)",
            seen=lambda: self.shown() + "; MathJax nodes on it: " + str(self.page.evaluate(
                f"() => {PRESENT}.querySelectorAll('mjx-container').length")))
        return found

    def forward(self, key):
        """Press ``key`` once (from the page, not a cell); return the new hash, checked changed."""
        before = self.page.evaluate("location.hash")
        self.page.evaluate("document.activeElement && document.activeElement.blur()")
        self.page.keyboard.press(key)
        return self.wait("(before) => location.hash !== before && location.hash",
                         f"{key} to move on from {before}", arg=before, seen=self.shown)


def play_the_deck(deck):
    """Math, skip cells, keyboard navigation to the demo, the demo run live; see the test."""
    types = slide_types(DECK)
    demo = next(i for i, _, source in code_cells(DECK) if "_explorer(" in source)
    deck.check(deck.page.locator(".reveal .slides .jp-Cell").count() == len(types),
               f"the slideshow holds {deck.page.locator('.reveal .slides .jp-Cell').count()} "
               f"cells, the notebook {len(types)}")
    deck.check("_explorer(" in deck.cell(demo).inner_text(),
               f"cell {demo} of the slideshow is not the demo cell")

    # The title slide: its math renders; no cell of slide type skip is shown anywhere.
    deck.check(deck.page.evaluate("location.hash") in ("", "#/", "#/slide-0-0"),
               f"the slideshow did not start on the title slide: {deck.shown()}")
    deck.check_math()
    shown_skips = deck.page.evaluate("""(skips) => {
        const cells = document.querySelectorAll('.reveal .slides .jp-Cell');
        return skips.filter(i => getComputedStyle(cells[i]).display !== 'none');
    }""", [i for i, kind in enumerate(types) if kind == "skip"])
    deck.check(not shown_skips, f"cells of slide type skip are shown: {shown_skips}")

    # Forward with the keyboard, Space and ArrowRight in turn, to the slide of the demo: every
    # press moves (to a slide, a subslide or a fragment), and never back.
    target, slides, keys = deck.slide_of(demo), [0], ["Space", "ArrowRight"]
    deck.check(target >= 3, f"the demo is on slide {target}: too close to walk a few slides")
    for press in range(target + types.count("fragment") + types.count("subslide") + 1):
        deck.forward(keys[press % 2])
        slides.append(deck.page.evaluate(f"() => ({SLIDE_INDEX})({PRESENT})"))
        deck.check(slides[-1] >= slides[-2], f"the keyboard went back: slides {slides}")
        if slides[-1] == target:
            break
    deck.check(slides[-1] == target and len(set(slides)) >= 4,
               f"the keyboard did not walk slide by slide to the demo's slide {target}: {slides}")
    deck.check_math()

    # The demo, run live inside the slideshow: Ctrl+Enter in its editor (focus and key press in
    # one action). Not Shift+Enter: that selects the next cell, and RISE then shows the slide of
    # the selected cell (here the subslide with the demo's static view). Its first run in this
    # kernel shows [1]; then its sliders and output, or (the known failure) the text fallback.
    deck.wait_for_kernel("the kernel to be idle before the demo runs")
    hash_before = deck.page.evaluate("location.hash")
    cell = deck.cell(demo)
    cell.locator(".jp-InputArea-editor .cm-content").press("Control+Enter")
    state = """(index) => {
        const cell = document.querySelectorAll('.reveal .slides .jp-Cell')[index];
        const prompt = cell.querySelector('.jp-InputPrompt').innerText.trim();
        const sliders = Array.from(cell.querySelectorAll('.widget-slider'))
            .filter(node => node.getBoundingClientRect().width > 0).length;
        const output = cell.querySelector('.widget-output img, .widget-output pre');
        const plain = Array.from(cell.querySelectorAll('.jp-OutputArea-output'))
            .map(node => node.innerText).find(text => text.startsWith('interactive(')) || null;
        return {prompt, sliders, output: Boolean(output), plain,
                 text: cell.querySelector('.jp-Cell-outputArea').innerText};
    }"""
    result = deck.wait(f"""(index) => {{
        const s = ({state})(index);
        return s.prompt === '[1]:' && ((s.sliders && s.output) || s.plain) && s;
    }}""", "the demo cell to run ([1]) and show its sliders and output", RUN_ALL, arg=demo,
        seen=lambda: str(deck.page.evaluate(state, demo)) + "; kernel " + str(deck.kernel_state()))
    deck.check(deck.page.evaluate("location.hash") == hash_before,
               f"running the demo moved the slideshow: {deck.shown()}")
    deck.check(not re.search(r"Traceback|\w+Error:", result["text"]),
               f"the demo shows an error: {result['text'][:300]!r}")
    deck.check("rk A = 1, rk V = 1" in result["text"],
               f"the demo printed no line for its default ranks: {result['text'][:300]!r}")
    manager = [line for line in deck.console if NO_WIDGET_MANAGER in line]
    deck.check(result["sliders"] and result["output"],
               f"the demo shows no live widget: {result['text'][:300]!r}"
               + (f"; the widget manager did not load: {manager[0]}" if manager else ""))
    labels = [label.strip() for label in
              cell.locator(".widget-slider .widget-label").all_inner_texts()]
    deck.check(labels == ["rank_A", "rank_V"], f"fiber_explorer's sliders: {labels}")


def test_a_notebook_plays_as_a_slideshow_with_math_and_a_live_widget(browser, lab, tmp_path):
    """02 at /rise/: math on the title slide; no skip cell shown; Space and ArrowRight walk
    slide by slide to the demo's slide (math there too); Ctrl+Enter runs the demo there, which
    must show its sliders and output without leaving the slide; then the kernel is shut down.

    jupyterlab-rise 0.43.1 shares no ``@jupyterlab/console`` with the page, which
    jupyterlab_widgets needs from 3.0.11 on (jupyterlab-contrib/rise issues 119 and 126): hence
    the pins ipywidgets 8.1.2, jupyterlab_widgets 3.0.10, and a message that says so if it recurs.
    """
    deck = Slideshow(browser, *lab, DECK, tmp_path)
    try:
        play_the_deck(deck)
    finally:
        deck.close()
