"""The judge's layers (grading/README.md): no import cycle, reports without torch, a worker that needs nothing else
of grading/, and no checks file too long to read."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GRADING = REPO / "grading"


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """Every grading module `path` imports, at module level or inside a function (`from . import x` imports x)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            subs = {f"{base}.{a.name}" for a in node.names} & modules
            found |= subs if len(subs) == len(node.names) else subs | {base}
    return {m for m in found if m == "grading" or m.startswith("grading.")}


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in GRADING.rglob("*.py")}
    return {name: {m for m in _imports(p, set(modules)) if m in modules and m != name} for name, p in modules.items()}


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


def test_no_checks_file_is_too_long_to_read():
    long = {str(p.relative_to(REPO)): n for p in (GRADING / "checks").rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 420}
    assert not long, long
