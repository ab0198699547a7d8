"""The public API: ``lsa_helpers.__all__`` is the union of the re-exported modules' ``__all__``,
nothing shadows a submodule, no module reaches into another's private names, and the notebooks
import only public names."""

import ast
import importlib
import json
import pkgutil
import re
import types
from pathlib import Path

import pytest

import lsa_helpers

PACKAGE = Path(lsa_helpers.__file__).parent
NOTEBOOKS = PACKAGE.parent / "notebooks"
REEXPORTED = ["architecture", "weights", "network", "differential", "rank", "symmetries", "virtual",
              "formulas", "function_space", "experiments", "identify", "atlas", "tables", "softmax",
              "singularities", "multihead", "landscape"]
BY_NAME = ["widgets", "symbolic", "invariants"]  # public, imported as lsa_helpers.<module>
TOOLS = ["cli", "workers", "__main__"]            # the command line and its processes
SUBMODULES = sorted(m.name for m in pkgutil.iter_modules([str(PACKAGE)]))


def test_every_submodule_has_a_role():
    public = [name for name in SUBMODULES if not name.startswith("_")]
    assert sorted(public) == sorted(REEXPORTED + BY_NAME + TOOLS[:2])


def test_the_package_exports_exactly_the_union_of_its_modules():
    union = [name for module in REEXPORTED
             for name in importlib.import_module(f"lsa_helpers.{module}").__all__]
    assert len(union) == len(set(union)), "two modules export the same name"
    assert sorted(lsa_helpers.__all__) == sorted(union)


@pytest.mark.parametrize("module", REEXPORTED + BY_NAME)
def test_a_module_exports_only_its_own_public_names(module):
    mod = importlib.import_module(f"lsa_helpers.{module}")
    for name in mod.__all__:
        value = getattr(mod, name)
        assert not name.startswith("_")
        if isinstance(value, (types.FunctionType, type)):  # defined here, not re-exported
            assert value.__module__ == mod.__name__, name


def test_every_exported_name_resolves_and_none_is_a_module():
    for name in lsa_helpers.__all__:
        assert not isinstance(getattr(lsa_helpers, name), types.ModuleType), name


def test_no_attribute_shadows_a_submodule():
    modules = [name for name in SUBMODULES if name != "__main__"]  # that one runs the CLI
    for name in modules:
        importlib.import_module(f"lsa_helpers.{name}")  # binds the module on the package
    for name in modules:
        assert name not in lsa_helpers.__all__
        assert isinstance(getattr(lsa_helpers, name), types.ModuleType), name
    assert callable(lsa_helpers.dimension) and callable(lsa_helpers.jacobian)
    assert callable(lsa_helpers.forward)


def test_function_space_imports_as_a_module():
    import lsa_helpers.function_space as m

    assert isinstance(m, types.ModuleType) and m.dimension is lsa_helpers.dimension


def private_imports(path: Path):
    """``from .x import _y`` in a module: another module's private name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.module, alias.name) for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level and node.module
            for alias in node.names if alias.name.startswith("_")]


def test_the_private_import_scan_sees_one(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from .rank import _nonzero, float_rank\nfrom . import _checks\n")
    assert private_imports(module) == [("rank", "_nonzero")]


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_no_module_imports_a_private_name_of_another(path):
    assert private_imports(path) == []


def test_flint_is_imported_only_by_rank():
    users = [path.name for path in PACKAGE.glob("*.py")
             if re.search(r"^\s*(import flint|from flint)", path.read_text(), re.MULTILINE)]
    assert users == ["rank.py"]


def notebook_imports():
    """``(notebook, module, name)`` for every ``from lsa_helpers... import ...`` of a notebook."""
    found = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")) + sorted(NOTEBOOKS.glob("solutions/*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            lines = [line for line in source.splitlines()
                     if not line.lstrip().startswith(("%", "!"))]  # magics are not Python
            for node in ast.walk(ast.parse("\n".join(lines))):
                module = getattr(node, "module", None) or ""
                if isinstance(node, ast.ImportFrom) and module.startswith("lsa_helpers"):
                    found += [(path.name, node.module, alias.name) for alias in node.names]
    return found


def test_notebooks_import_only_public_names():
    imports = notebook_imports()
    assert len(imports) > 100  # the scan sees the notebooks
    public = {"lsa_helpers": set(lsa_helpers.__all__)}
    for module in BY_NAME:
        public[f"lsa_helpers.{module}"] = set(
            importlib.import_module(f"lsa_helpers.{module}").__all__)
    wrong = [(nb, module, name) for nb, module, name in imports
             if name not in public.get(module, ())]
    assert wrong == []
