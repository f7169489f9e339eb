"""The judge's layers (grading/README.md): imports only go down the written order (module-level, in a function or
through importlib), no import cycle, reports without torch, a worker that needs nothing else of grading/, the checks
reached only through the catalog, and files and functions short enough to read."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GRADING = REPO / "grading"

# grading/README.md's order: a module imports only from its own layer and the layers above it.
LAYERS = (
    ("grading.i18n",),  # the messages' marks and catalogs: a leaf
    ("grading.model",),  # what a chapter is made of and what grading produces: plain data
    ("grading.dependencies", "grading.techniques"),  # the learner file's call graph and the note it gives; the
    # techniques its functions use
    ("grading.reports", "grading.submissions"),  # formatting over result records; a class folder's submissions
    ("grading.worker",),  # everything that runs in the sandbox
    ("grading.checks",),  # the course's checks (judge side only)
    ("grading.catalog",),  # loads the checks (by name, through importlib) and selects a target
    ("grading.engine",),  # grades: workers, the checker, the scheduler
    ("grading.notebook", "grading.gradescope", "grading.class_run", "grading"),  # the front doors: check(),
    # Gradescope, a class run, the package
)

MAX_FILE_LINES, MAX_FUNCTION_LINES = 400, 80
LONG_FILES: dict[str, str] = {}  # file -> why it may be longer
LONG_FUNCTIONS = {  # (file, function) -> why it may be longer
    ("grading/worker/guard.py", "_hook"): "the audit hook: one function that reads no global name, so learner code "
                                          "cannot rebind what it calls (its parts are default arguments)",
}
DYNAMIC_BY_NAME = {  # module -> why it may import a module whose name is only known at run time
    "grading.worker.transport": "unpickles inputs: only the classes its allow-list names (grading/worker/inputs.py)",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_in(code: str, name: str, is_package: bool, modules: set[str]) -> tuple[set[str], bool]:
    """(every grading module `code` imports, whether it imports a module named at run time): `import` and `from`
    at module level or inside a function (`from . import x` imports x), and importlib.import_module / __import__
    of a literal name or of an f-string whose fixed start names a package ("grading.checks.{n}")."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    by_name = False
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            subs = {f"{base}.{a.name}" for a in node.names} & modules
            found |= subs if len(subs) == len(node.names) else subs | {base}
        elif isinstance(node, ast.Call) and node.args and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))):
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.add(arg.value)
            elif (isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant)
                  and arg.values[0].value.startswith("grading")):
                found.add(arg.values[0].value.rstrip("."))
            else:
                by_name = True
    return {m for m in found if m == "grading" or m.startswith("grading.")}, by_name


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in GRADING.rglob("*.py")}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    out = {}
    for name, p in modules.items():
        found, _ = imports_in(p.read_text(encoding="utf-8"), name, p.name == "__init__.py", set(modules))
        out[name] = {m for m in found if m != name}
    return out


def layer_of(module: str) -> int:
    """The index in LAYERS of the layer `module` belongs to (the longest package that holds it)."""
    best = max((prefix for layer in LAYERS for prefix in layer if module == prefix or module.startswith(prefix + ".")
                and prefix != "grading"), key=len, default="grading")
    return next(i for i, layer in enumerate(LAYERS) if best in layer)


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """'a -> b' for every import of a module from a layer below the importer's."""
    return sorted(f"{m} -> {d}" for m, deps in graph.items() for d in deps if layer_of(d) > layer_of(m))


def test_every_import_goes_down_the_written_layers():
    graph = _graph()
    assert len(graph) > 30 and all(layer_of(m) < len(LAYERS) for m in graph)
    assert not upward_imports(graph), upward_imports(graph)
    readme = (GRADING / "README.md").read_text(encoding="utf-8")
    layers = readme[readme.index("## Layers"):readme.index("## Glossary")]
    order = [layers.index(f"{i + 1} `{m}`" if m == layer[0] else f"`{m}`") for i, layer in enumerate(LAYERS)
             for m in layer]
    assert order == sorted(order), "grading/README.md writes the layers in LAYERS order"


def test_the_layers_test_catches_an_upward_import_at_any_level():
    modules = set(_modules())
    model = (GRADING / "model.py").read_text(encoding="utf-8")
    for added in ("from .engine import scheduler\n",  # at module level
                  "def f():\n    from .worker.calls import PROTOCOLS\n",  # inside a function
                  "import importlib\nx = importlib.import_module('grading.catalog')\n"):  # through importlib
        found, _ = imports_in(model + "\n" + added, "grading.model", False, modules)
        assert upward_imports({"grading.model": found}), added
    found, _ = imports_in("from ..model import CheckFailed\n", "grading.engine.checker", False, modules)
    assert not upward_imports({"grading.engine.checker": found})
    found, by_name = imports_in("import importlib\nm = importlib.import_module(f'grading.checks.{n}')\n",
                                "grading.catalog", False, modules)
    assert found == {"grading.checks"} and not by_name
    assert imports_in("import importlib\nm = importlib.import_module(name)\n", "grading.x", False, modules)[1]


def test_only_the_catalog_loads_the_checks_and_names_are_imported_by_name_only_where_said():
    graph, modules = _graph(), _modules()
    outside = sorted(m for m, deps in graph.items() if not m.startswith("grading.checks") and m != "grading.catalog"
                     and any(d == "grading.checks" or d.startswith("grading.checks.") for d in deps))
    assert not outside, f"only grading.catalog imports the checks: {outside}"
    by_name = sorted(m for m, p in modules.items()
                     if imports_in(p.read_text(encoding="utf-8"), m, p.name == "__init__.py", set(modules))[1])
    assert by_name == sorted(DYNAMIC_BY_NAME), by_name


def test_the_grading_package_has_no_import_cycle():
    graph, state, cycles = _graph(), {}, []

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert len(graph) > 30 and not cycles, cycles


def test_the_worker_imports_nothing_of_grading_outside_its_folder():
    """bubblewrap mounts grading/worker/ (and the package's __init__ and the message marks, i18n.py) only: anything
    else would not be there."""
    from grading.engine.sandbox import COURSE_CODE

    graph = _graph()
    worker = {m: deps for m, deps in graph.items() if m.startswith("grading.worker")}
    assert len(worker) >= 8
    outside = {m: sorted(d for d in deps if not d.startswith("grading.worker") and d != "grading.i18n")
               for m, deps in worker.items()}
    assert not any(outside.values()), outside
    assert GRADING / "i18n.py" in COURSE_CODE and not [d for d in graph.get("grading.i18n", ()) if
                                                       d.startswith("grading")]  # a leaf: it needs nothing else


def test_reports_and_the_result_model_import_no_torch():
    modules = ["grading.model", "grading.catalog", "grading.dependencies", "grading.gradescope"]
    modules += [_module_name(p) for p in sorted((GRADING / "reports").glob("*.py"))]
    code = ("import sys\n" + "".join(f"import {m}\n" for m in modules)
            + "heavy = sorted(m for m in ('torch', 'transformers', 'grading.engine', 'grading.checks') if m in sys.modules)\n"
            + "print(heavy)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout


def test_files_and_functions_are_short_enough_to_read():
    """No grading file over MAX_FILE_LINES lines, no function over MAX_FUNCTION_LINES, but the named exceptions (and
    an exception that no longer needs its place is taken off the list)."""
    long_files, long_functions = {}, {}
    for p in sorted(GRADING.rglob("*.py")):
        rel, text = p.relative_to(REPO).as_posix(), p.read_text(encoding="utf-8")
        if (n := len(text.splitlines())) > MAX_FILE_LINES:
            long_files[rel] = n
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if (n := node.end_lineno - node.lineno + 1) > MAX_FUNCTION_LINES:
                    long_functions[(rel, node.name)] = n
    assert set(long_files) <= set(LONG_FILES), {k: v for k, v in long_files.items() if k not in LONG_FILES}
    assert set(long_functions) <= set(LONG_FUNCTIONS), {k: v for k, v in long_functions.items()
                                                        if k not in LONG_FUNCTIONS}
    stale = (set(LONG_FILES) - set(long_files)) | (set(LONG_FUNCTIONS) - set(long_functions))
    assert not stale, f"no longer long, take them off the exception lists: {sorted(map(str, stale))}"
