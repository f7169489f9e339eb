"""What the judge's own reading of a learner file shows a function uses: the techniques an exercise asks for.

Some cases ask *how* a result is computed (one_hot(ids) @ E, a torch.autograd.Function, chunks and checkpoint).
What the learner's process observes of that (the torch calls it ran, the autograd node, what autograd saved) is
the process's word, and learner code can rewrite it. So such a case also needs the technique to be in the
learner's source, read here with `ast` (never imported or run): the exercise's function and every module-level
function or class it names, transitively. An exercise's `source_check` (grading/model.py) turns these facts into
the message of a case that cannot pass without them (`needs` builds one); the reading can only fail a case, never
pass one.

Facts: the names of the functions and methods called (import aliases resolved: `oh` of `from ... import one_hot
as oh` is "one_hot"), "@" for a matrix product, "loop" for for/while, a comprehension or map(),
"autograd.Function" for a class whose base is a Function and that defines backward, ".weight =" for an existing
object given to a module's weight (`head.weight = embedding.weight`, not `= nn.Parameter(...)` nor `.data = ...`),
and "tie_word_embeddings" where that config name is written (an attribute or a string).
"""
from __future__ import annotations

import ast
from typing import Callable, Iterable

LOOP, MATMUL, CUSTOM_FUNCTION = "loop", "@", "autograd.Function"
WEIGHT_GIVEN, TIE_FLAG = ".weight =", "tie_word_embeddings"
PRODUCTS = frozenset({"matmul", "mm", "bmm", "einsum", "tensordot", "linear", "addmm", "mv", MATMUL})


def _aliases(tree: ast.Module) -> dict[str, str]:
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if a.asname:
                    names[a.asname] = a.name.rsplit(".", 1)[-1]
    return names


def _reach(tree: ast.Module, name: str) -> list[ast.AST]:
    """The definition of `name` and of every module-level function or class it names, transitively."""
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    found, todo = {}, [name]
    while todo:
        current = todo.pop()
        if current in found or current not in defs:
            continue
        found[current] = defs[current]
        todo.extend(n.id for n in ast.walk(defs[current]) if isinstance(n, ast.Name) and n.id in defs)
    return list(found.values())


def _facts_of(nodes: Iterable[ast.AST], aliases: dict[str, str]) -> frozenset[str]:
    facts = set()
    for top in nodes:
        for n in ast.walk(top):
            if isinstance(n, ast.Call):
                f = n.func
                called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                if called:
                    facts.add(aliases.get(called, called))
                if called == "map":
                    facts.add(LOOP)
            elif isinstance(n, (ast.BinOp, ast.AugAssign)) and isinstance(n.op, ast.MatMult):
                facts.add(MATMUL)
            elif isinstance(n, (ast.For, ast.AsyncFor, ast.While, ast.comprehension)):
                facts.add(LOOP)
            elif isinstance(n, ast.ClassDef) and _is_custom_function(n):
                facts.add(CUSTOM_FUNCTION)
            elif isinstance(n, (ast.Assign, ast.AnnAssign)) and _gives_weight(n):
                facts.add(WEIGHT_GIVEN)
            if (isinstance(n, ast.Attribute) and n.attr == TIE_FLAG) or (isinstance(n, ast.Constant)
                                                                          and n.value == TIE_FLAG):
                facts.add(TIE_FLAG)
    return frozenset(facts)


def _gives_weight(node: ast.Assign | ast.AnnAssign) -> bool:
    """`<module>.weight = <an object that exists>` (no call: not a new Parameter, a clone or a copy)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return node.value is not None and not isinstance(node.value, ast.Call) and any(
        isinstance(t, ast.Attribute) and t.attr == "weight" for t in targets)


def _is_custom_function(cls: ast.ClassDef) -> bool:
    bases = [b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in cls.bases]
    methods = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return any(b.endswith("Function") for b in bases) and "backward" in methods


def source_facts(code: str, names: Iterable[str]) -> dict[str, frozenset[str]]:
    """For each of `names` defined at the top of the learner file's `code`: the facts its reach shows. A name the
    file does not define (or a file that does not parse) gets none."""
    names = list(names)
    if not names:  # most chapters ask for no technique: their files are not parsed again
        return {}
    try:
        tree = ast.parse(code)
    except Exception:  # SyntaxError, or RecursionError/MemoryError on absurdly nested code
        return {}
    aliases = _aliases(tree)
    return {name: _facts_of(_reach(tree, name), aliases) for name in names}


def needs(rules: dict[str, tuple[list[Iterable[str]], str]]) -> Callable[[frozenset, str], str]:
    """An Exercise's source_check: a case whose call is C passes only if the function's facts hold one fact of every
    group in rules[C][0]; otherwise rules[C][1] is why it fails. Calls not in `rules` need nothing."""
    def source_check(facts: frozenset, call: str) -> str:
        groups, why = rules.get(call, ((), ""))
        return "" if all(facts & set(group) for group in groups) else why
    return source_check
