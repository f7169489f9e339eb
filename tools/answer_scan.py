"""Find copies of the course's answers: every function body in solutions/ and mutants/, compared as syntax trees.

    python tools/answer_scan.py DIR     list the files under DIR that hold an answer's body (exit 1 if any)

A body is normalised before it is compared: the docstring, type annotations and string contents are dropped, and
every name (variables, arguments, functions, modules) is replaced by its order of first appearance, so a copy
with renamed variables, another docstring or other messages is still found. Attributes (`torch.softmax`,
`.topk`) and keyword names (`dim=`) are kept: they are what the code does. A body is found when it appears as
consecutive statements of any block (a function, a class, a loop, a cell) of a `.py` file, of a string in it that
is Python source (learner code written by a test), of a notebook's code cells, text outputs and Markdown code
blocks, or of a Markdown file's code blocks; a lambda counts as a one-statement body returning its expression.
Bodies of one operation (`return E[ids]`, fewer than MIN_NODES nodes) are not looked for: the chapters' prose
names them.
"""
from __future__ import annotations

import ast
import copy
import json
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ANSWER_DIRS = ("solutions", "mutants")
MIN_NODES = 7  # syntax-tree nodes of a normalised body; fewer is one operation (see _too_small)


@dataclass(frozen=True)
class Leak:
    """One place where an answer's body was found."""
    file: str       # path relative to the scanned folder (a notebook: "nb.ipynb#cell 12")
    line: int       # first line of the copy in that file or cell
    answer: str     # where the body comes from, e.g. "solutions/ch04_sampling.py:top_p_filter"

    def __str__(self) -> str:
        return f"{self.file}:{self.line} holds the body of {self.answer}"


class _Canonical(ast.NodeTransformer):
    """Names by order of appearance; no docstrings, annotations or string contents."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def _name(self, name: str) -> str:
        return self.names.setdefault(name, f"n{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name(id=self._name(node.id), ctx=ast.Load())

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return ast.arg(arg=self._name(node.arg))

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.Constant(value="" if isinstance(node.value, str) else node.value)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        return ast.Constant(value="")

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is None:
            return None
        return self.visit(ast.Assign(targets=[node.target], value=node.value))

    def _function(self, node):
        node.name = self._name(node.name)
        node.returns = None
        node.body = _without_docstring(node.body)
        self.generic_visit(node)
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self._name(node.name)
        node.body = _without_docstring(node.body)
        self.generic_visit(node)
        return node

    def visit_alias(self, node: ast.alias) -> ast.AST:
        return ast.alias(name=node.name, asname=None)


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:] or [ast.Pass()]
    return body


def _key(statements: list[ast.stmt]) -> str:
    """The normalised form of consecutive statements (a fresh name order for each window)."""
    module = ast.Module(body=[copy.deepcopy(s) for s in statements], type_ignores=[])
    return ast.dump(_Canonical().visit(module))


def _blocks(tree: ast.AST) -> list[list[ast.stmt]]:
    """Every list of statements in the tree, plus every lambda as a one-statement block."""
    blocks = []
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            value = getattr(node, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                blocks.append(_without_docstring(value) if field == "body" else value)
        if isinstance(node, ast.Lambda):
            blocks.append([ast.Return(value=node.body, lineno=node.lineno, col_offset=0)])
    return blocks


def _shape(statement: ast.stmt) -> str:
    """A cheap first filter: the statement's kind and its value's kind."""
    value = getattr(statement, "value", None)
    return f"{type(statement).__name__}:{type(value).__name__}"


def answer_index(repo: Path) -> dict[tuple[str, ...], dict[str, str]]:
    """{statement shapes: {normalised body: "solutions/file.py:function"}} for every answer function."""
    index: dict[tuple[str, ...], dict[str, str]] = {}
    for folder in ANSWER_DIRS:
        for path in sorted((repo / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    body = _without_docstring(node.body)
                    if _too_small(body):
                        continue
                    where = f"{path.relative_to(repo).as_posix()}:{node.name}"
                    index.setdefault(tuple(map(_shape, body)), {}).setdefault(_key(body), where)
    return index


def _too_small(body: list[ast.stmt]) -> bool:
    """A body of one operation (`return E[ids]`, `return h @ W.T`, `raise NotImplementedError`, `pass`).

    The chapter's own prose names such an operation; a copy of it gives away no more than the prose does.
    """
    module = _Canonical().visit(ast.Module(body=[copy.deepcopy(s) for s in body], type_ignores=[]))
    return sum(not isinstance(n, (ast.expr_context, ast.Module)) for n in ast.walk(module)) < MIN_NODES


def _trees_in_source(source: str, name: str) -> list[tuple[ast.AST, int]]:
    """The module's tree, and the tree of every string in it that is itself Python source with a function."""
    tree = ast.parse(source, filename=name)
    trees = [(tree, 0)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" in node.value:
            try:
                inner = ast.parse(textwrap.dedent(node.value))
            except (SyntaxError, ValueError):
                continue
            if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) for n in ast.walk(inner)):
                trees.append((inner, node.lineno - 1))
    return trees


def _cell_source(source: str) -> str:
    """A code cell's source as Python: IPython magics and shell lines become `pass`, keeping line numbers."""
    lines = source.splitlines()
    return "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line for line in lines)


FENCE = re.compile(r"^```(?:python|py|ipython3?)?[ \t]*\n(.*?)^```", re.M | re.S)


def _sources(rel: str, text: str) -> list[tuple[str, str]]:
    """(label, text that may be Python) for a file: a .py file; a notebook's code cells, the code blocks of its
    markdown cells and its text outputs; the code blocks of a Markdown file."""
    if rel.endswith(".py"):
        return [(rel, text)]
    if rel.endswith(".md"):
        return [(f"{rel}#block {i}", m.group(1)) for i, m in enumerate(FENCE.finditer(text))]
    if not rel.endswith(".ipynb"):
        return []
    found = []
    for i, cell in enumerate(json.loads(text).get("cells", [])):
        source = _joined(cell.get("source", ""))
        if cell.get("cell_type") == "code":
            found.append((f"{rel}#cell {i}", _cell_source(source)))
            for j, out in enumerate(cell.get("outputs", [])):
                texts = [out.get("text", "")] + [v for k, v in out.get("data", {}).items() if k.startswith("text/")]
                found += [(f"{rel}#cell {i} output {j}", _joined(t)) for t in texts if t]
        elif cell.get("cell_type") == "markdown":
            found += [(f"{rel}#cell {i} block {k}", m.group(1)) for k, m in enumerate(FENCE.finditer(source))]
    return found


def _joined(text: str | list[str]) -> str:
    return "".join(text) if isinstance(text, list) else text


def find_leaks(root: Path, index: dict[tuple[str, ...], dict[str, str]], files: list[str] | None = None
               ) -> list[Leak]:
    """Every place in the files under root (or the given relative paths) that holds an answer's body."""
    paths = [root / f for f in files] if files is not None else sorted(p for p in root.rglob("*") if p.is_file())
    texts = {p.relative_to(root).as_posix(): p.read_bytes() for p in paths}
    return leaks_in(texts, index)


def leaks_in(files: dict[str, bytes], index: dict[tuple[str, ...], dict[str, str]]) -> list[Leak]:
    """Every place in these files (relative path -> content) that holds an answer's body."""
    sizes = sorted({len(shapes) for shapes in index})
    leaks: list[Leak] = []
    for rel, data in sorted(files.items()):
        if not rel.endswith((".py", ".md", ".ipynb")):
            continue
        for label, source in _sources(rel, data.decode("utf-8", errors="replace")):
            try:
                trees = _trees_in_source(source, label)
            except SyntaxError as exc:
                if label.endswith(".py"):  # a Python file we cannot read could hold anything: say so
                    leaks.append(Leak(label, exc.lineno or 0, f"(unparsable: {exc.msg}; check it by hand)"))
                continue
            for tree, offset in trees:
                for block in _blocks(tree):
                    shapes = [_shape(s) for s in block]
                    for size in sizes:
                        for start in range(len(block) - size + 1):
                            keys = index.get(tuple(shapes[start:start + size]))
                            answer = keys and keys.get(_key(block[start:start + size]))
                            if answer:
                                leaks.append(Leak(label, offset + getattr(block[start], "lineno", 0), answer))
    return leaks


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    repo = Path(__file__).resolve().parent.parent
    leaks = find_leaks(Path(argv[0]), answer_index(repo))
    print("\n".join(map(str, leaks)) or "No answer bodies found.")
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
