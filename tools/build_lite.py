"""Build the course as a JupyterLite site: JupyterLab and a Python kernel (Pyodide) in the browser.

Usage: python tools/build_lite.py [OUTPUT_DIR]    (default: build/lite)

Run it with a Python that has jupyterlite-core, jupyterlite-pyodide-kernel, jupyter_server and
the course's requirements (jupyterlab_widgets brings the widget front end). The site holds the
folder notebooks/ (lessons, solutions, cheat sheet, Korean pages) and a Pyodide that boots from
its own files: the npm package pyodide (lite/package.json) in static/pyodide, with a
pyodide-lock.json that lists

- the wheels bundled beside it: the pure packages and the WebAssembly builds of python-flint and
  contourpy from the package index, and lsa_helpers built from this checkout, each with the
  sha256 of the bundled file and the dependencies its metadata declares;
- numpy, matplotlib, pillow and kiwisolver, which the package index has no WebAssembly build of,
  as Pyodide's own lock lists them (file name and sha256), at Pyodide's CDN: the browser fetches
  these four files from the internet when a notebook imports numpy, and checks their sha256.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

ROOT = Path(__file__).resolve().parent.parent
LITE = ROOT / "lite"
WORK = ROOT / "build" / "lite-work"
PYODIDE_NPM = LITE / "node_modules" / "pyodide"
PYODIDE_VERSION = json.loads((LITE / "package.json").read_text(encoding="utf-8"))[
    "dependencies"]["pyodide"]
CDN = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"
PLATFORM = "pyemscripten_2026_0_wasm32"
# The environment markers of Pyodide's Python, for the dependencies a wheel declares.
BROWSER = {"python_version": "3.14", "python_full_version": "3.14.2", "sys_platform": "emscripten",
           "platform_system": "Emscripten", "platform_machine": "wasm32", "os_name": "posix",
           "implementation_name": "cpython", "platform_python_implementation": "CPython",
           "extra": ""}

# Taken from Pyodide's own lock (no WebAssembly build on the package index), loaded from its CDN.
FROM_CDN = ("numpy", "matplotlib", "pillow", "kiwisolver")
# Bundled: the kernel's packages (micropip, then ipython, jedi and comm, which it installs at
# start), the course's, matplotlib's pure dependencies, and theirs. Versions are requirements.txt's
# pins, else contourpy's only WebAssembly build on the index (1.4.0), else Pyodide's lock's.
BUNDLED = ("micropip", "ipython", "jedi", "comm", "sympy", "ipywidgets", "python-flint",
           "contourpy", "threadpoolctl", "tqdm", "cycler", "fonttools", "packaging", "pyparsing",
           "python-dateutil", "pytz", "asttokens", "decorator", "executing", "matplotlib-inline",
           "mpmath", "parso", "prompt-toolkit", "pure-eval", "pygments", "six", "stack-data",
           "traitlets", "tzdata", "wcwidth", "jupyterlab-widgets", "widgetsnbextension")
VERSIONS = {"contourpy": "1.4.0"}
EXTENSIONS = ("@jupyterlite/pyodide-kernel-extension", "@jupyter-widgets/jupyterlab-manager")
# Test and slideshow files: the site has no nbval and no RISE.
LEFT_OUT = r"(nbval_sanitize\.cfg|rise\.css|slides/.*)$"


def official() -> dict:
    """Pyodide's own lock, from its npm package."""
    return json.loads((PYODIDE_NPM / "pyodide-lock.json").read_text(encoding="utf-8"))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pins() -> dict[str, str]:
    """``{canonical name: version}`` of requirements.txt."""
    lines = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    pairs = (line.split("==") for line in lines if "==" in line and not line.startswith("#"))
    return {canonicalize_name(name): version for name, version in pairs}


def metadata(wheel: Path) -> tuple[list[str], list[str]]:
    """``(depends, imports)`` of a wheel: the canonical names it requires in the browser, and
    its top-level packages and modules."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        text = next(archive.read(n) for n in names if n.endswith(".dist-info/METADATA"))
    message = Parser().parsestr(text.decode("utf-8"))
    depends = []
    for line in message.get_all("Requires-Dist") or []:
        requirement = Requirement(line)
        if requirement.marker is None or Marker(str(requirement.marker)).evaluate(BROWSER):
            depends.append(canonicalize_name(requirement.name))
    tops = {n.split("/")[0] for n in names if "/" in n and n.endswith(".py")} | {
        n[:-3] for n in names if "/" not in n and n.endswith(".py")}
    imports = sorted(top for top in tops if not top.endswith((".dist-info", ".data")))
    return sorted(set(depends)), imports


def download(folder: Path) -> list[Path]:
    """The bundled wheels, for Pyodide's platform and Python, from the package index."""
    pinned, pyodide = pins(), official()["packages"]
    versions = {name: VERSIONS.get(name) or pinned.get(name) or pyodide[name]["version"]
                for name in BUNDLED}
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    "--only-binary=:all:", "--platform", PLATFORM, "--python-version", "3.14",
                    "--implementation", "cp", "--abi", "cp314", "--dest", str(folder),
                    *(f"{name}=={version}" for name, version in versions.items())], check=True)
    wheels = {}
    for wheel in folder.glob("*.whl"):
        name, version, _, _ = parse_wheel_filename(wheel.name)
        if versions.get(name) == str(version):
            wheels[name] = wheel
    return [wheels[name] for name in BUNDLED]


def package_wheel(folder: Path) -> Path:
    """lsa_helpers as a wheel, built from a fresh copy of the checkout's package."""
    source = WORK / "package"
    shutil.rmtree(source, ignore_errors=True)
    shutil.copytree(ROOT / "lsa_helpers", source / "lsa_helpers",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "pyproject.toml", source)
    for old in folder.glob("lsa_helpers-*.whl"):
        old.unlink()
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "--wheel-dir", str(folder), str(source)], check=True)
    return next(folder.glob("lsa_helpers-*.whl"))


def entry(wheel: Path) -> dict:
    """The lock entry of a bundled wheel (its file beside the lock)."""
    name, version, _, _ = parse_wheel_filename(wheel.name)
    depends, imports = metadata(wheel)
    return {"name": name, "version": str(version), "file_name": wheel.name, "install_dir": "site",
            "sha256": sha256(wheel), "package_type": "package", "imports": imports,
            "depends": depends, "unvendored_tests": False}


def lock(wheels: list[Path]) -> dict:
    """Pyodide's lock with only the bundled wheels and the four from the CDN."""
    pyodide = official()
    packages = {name: {**pyodide["packages"][name],
                       "file_name": CDN + pyodide["packages"][name]["file_name"]}
                for name in FROM_CDN}
    packages.update((entry["name"], entry) for entry in map(entry, wheels))
    missing = {dep for package in packages.values() for dep in package["depends"]
               if dep not in packages}
    if missing:
        sys.exit(f"build_lite: no lock entry for {sorted(missing)}, a dependency of the site")
    return {"info": pyodide["info"], "packages": dict(sorted(packages.items()))}


def pyodide_folder(target: Path) -> None:
    """static/pyodide: the npm runtime, the bundled wheels and their lock."""
    if not (PYODIDE_NPM / "pyodide.mjs").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=LITE,
                       check=True)
    wheels_dir = WORK / "wheels"
    wheels_dir.mkdir(parents=True, exist_ok=True)
    wheels = [*download(wheels_dir), package_wheel(wheels_dir)]
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(PYODIDE_NPM, target, ignore=shutil.ignore_patterns(
        "*.map", "*.d.ts", "*.html", "package.json", "README.md", "pyodide-lock.json"))
    for wheel in wheels:
        shutil.copy2(wheel, target)
    text = json.dumps(lock(wheels), indent=1, sort_keys=True)
    (target / "pyodide-lock.json").write_text(text + "\n", encoding="utf-8")


def build(output: Path) -> None:
    site = WORK / "lite-dir"  # jupyter lite's input folder (its --lite-dir)
    shutil.rmtree(site, ignore_errors=True)
    shutil.copytree(LITE, site, ignore=shutil.ignore_patterns(
        "node_modules", "package*.json", ".gitignore"))
    pyodide_folder(site / "static" / "pyodide")
    shared = Path(sys.prefix) / "share" / "jupyter" / "labextensions"
    jupyter_lite = [str(Path(sys.executable).parent / "jupyter-lite")]
    options = ["--lite-dir", str(site), "--output-dir", str(output.resolve())]
    shutil.rmtree(output, ignore_errors=True)
    subprocess.run([*jupyter_lite, "build", *options, "--contents", str(ROOT / "notebooks"),
                    f"--LiteBuildConfig.extra_ignore_contents={LEFT_OUT}",
                    *(f"--LiteBuildConfig.federated_extensions={shared / name}"
                      for name in EXTENSIONS)], cwd=site, check=True)
    subprocess.run([*jupyter_lite, "check", *options], cwd=site, check=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 or sys.argv[1:2] in (["-h"], ["--help"]):
        sys.exit(__doc__)
    build(Path(sys.argv[1]) if len(sys.argv) == 2 else ROOT / "build" / "lite")
