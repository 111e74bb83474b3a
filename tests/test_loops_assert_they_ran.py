"""Every test that asserts inside a loop also asserts that the loop ran.

An assert in a loop over an empty collection never runs, so the test passes without checking anything:
a fixture that finds no stacks, a catalog that lost its machines, a filter that matches nothing. This
module reads the tests' source (stdlib `ast` only, no imports of the project) and fails on a loop whose
collection nothing shows to be non-empty.

The loops it checks, in each `test*` function (nested functions aside): a `for` statement whose body
holds an `assert`, and each `for` of a comprehension given to `all(...)` where `all(...)` is an assert's
condition or one of its `and` terms (`all` of nothing is true). Such a loop passes when:

1. its collection is a non-empty literal (`("a", "b")`, `{"k": 1}`, `range(3)`), a name bound to one in
   the module or the function, an item (`[key]`, `.get(key, default)`) of a dict literal whose values all
   are, or a test parameter that every `pytest.mark.parametrize` value gives as one;
2. a check outside the loop mentions the collection, or a name assigned from an expression that holds
   it: `assert items, "..."` before the loop, `assert len(items) == 3` after it, or `(only,) = items`.
   A check is an `assert`'s condition (not its message) or a tuple unpacking, and counts only where it
   runs whenever the loop is reached: not inside another loop that does not hold this one;
3. a check after the loop mentions a name the loop assigns or adds to (`seen.append(x)`, then
   `assert seen == {...}`), or a name assigned from one.

The collection is looked through `sorted`, `list`, `enumerate` and the like, `.items()`, `.values()`,
`.keys()` and `.splitlines()` (a non-empty string has a line), either side of `+`, every argument of
`zip` and a comprehension without `if`: `assert stacks` shows `sorted(stacks.items())` and
`{s.cloud for s in stacks}` non-empty. It is a heuristic, not a proof: a check
that mentions the collection may not need it non-empty, and `assert not any(...)`, where an empty
collection is often the right answer, is not checked at all.

For the rare loop that may honestly be empty, put `# loop may be empty: <reason>` on its `for` line
(for `all(...)`, on the assert's lines).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
#: The opt-out, on a loop's `for` line (or an `all(...)` assert's lines), followed by the reason.
OPT_OUT = "# loop may be empty:"
#: Calls that are non-empty when their first argument is.
WRAPPERS = frozenset({"sorted", "list", "tuple", "set", "frozenset", "enumerate", "reversed", "iter", "dict"})
#: Methods that are non-empty when their object is.
METHODS = frozenset({"items", "values", "keys", "splitlines"})
#: Methods by which a loop adds to a collection.
ADDS = frozenset({"append", "add", "update", "extend", "setdefault", "insert"})
NESTED = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef


def in_scope(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes under `node`, but not those of the functions, lambdas and classes it defines."""
    todo = list(ast.iter_child_nodes(node))
    while todo:
        child = todo.pop()
        yield child
        if not isinstance(child, NESTED):
            todo.extend(ast.iter_child_nodes(child))


def same(node: ast.AST) -> str:
    """The expression, without where it stands or whether it is read or written."""
    return ast.dump(node, annotate_fields=False).replace("Load()", "").replace("Store()", "")


def names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


@dataclass(frozen=True)
class Loop:
    node: ast.For | ast.comprehension
    #: What holds every assert the loop runs: the `for` statement, or the comprehension in `all(...)`.
    body: ast.AST
    #: The statement whose lines may carry the opt-out.
    statement: ast.stmt


class ScannedTest:
    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef, module: ast.Module,
                 lines: list[str]) -> None:
        self.function = function
        self.lines = lines
        self.parent: dict[ast.AST, ast.AST] = {}
        for node in (function, *in_scope(function)):
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node
        nodes = list(in_scope(function))
        self.checks = [n for n in nodes if isinstance(n, ast.Assert)
                       or (isinstance(n, ast.Assign) and any(isinstance(t, ast.Tuple | ast.List) for t in n.targets))]
        self.assigned: dict[str, list[ast.Assign]] = {}
        for node in nodes:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.assigned.setdefault(target.id, []).append(node)
        self.module_values = {t.id: n.value for n in module.body if isinstance(n, ast.Assign | ast.AnnAssign)
                              and n.value for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                              if isinstance(t, ast.Name)}
        self.parameters = parametrized(function, self.module_values)
        self.loops = [Loop(n, n, n) for n in nodes
                      if isinstance(n, ast.For) and any(isinstance(m, ast.Assert) for m in in_scope(n))]
        for node in nodes:
            if isinstance(node, ast.Assert):
                for term in node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(
                        node.test.op, ast.And) else [node.test]:
                    if (isinstance(term, ast.Call) and isinstance(term.func, ast.Name) and term.func.id == "all"
                            and len(term.args) == 1 and isinstance(term.args[0], ast.GeneratorExp | ast.ListComp)):
                        self.loops += [Loop(g, term.args[0], node) for g in term.args[0].generators]

    def loops_around(self, node: ast.AST) -> set[ast.AST]:
        found = set()
        while node in self.parent:
            node = self.parent[node]
            if isinstance(node, ast.For):
                found.add(node)
        return found

    def inside(self, node: ast.AST, container: ast.AST) -> bool:
        while node in self.parent:
            node = self.parent[node]
            if node is container:
                return True
        return False

    def checks_reaching(self, loop: Loop) -> Iterator[ast.AST]:
        """What each check asserts, where it runs whenever the loop is reached, less the loop itself."""
        around = self.loops_around(loop.body)
        for check in self.checks:
            if self.inside(check, loop.body) or not self.loops_around(check) <= around:
                continue
            yield from without(check.test if isinstance(check, ast.Assert) else check.value, loop.body)

    def literal(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(not isinstance(e, ast.Starred) for e in node.elts)
        if isinstance(node, ast.Dict):
            return any(k is not None for k in node.keys)
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str | bytes) and bool(node.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
            bounds = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, int)]
            return len(bounds) == len(node.args) > 0 and len(range(*bounds)) > 0
        if isinstance(node, ast.Subscript) and isinstance(table := self.bound(node.value), ast.Dict):
            return all(self.literal(v) for v in table.values)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and len(node.args) == 2 and isinstance(table := self.bound(node.func.value), ast.Dict)):
            return self.literal(node.args[1]) and all(self.literal(v) for v in table.values)
        if isinstance(node, ast.Name):
            if node.id in self.parameters:
                return all(self.literal(v) for v in self.parameters[node.id])
            value = self.bound(node)
            return value is not None and value is not node and self.literal(value)
        return False

    def bound(self, node: ast.AST) -> ast.AST | None:
        """What a name was last bound to, in the function or else the module."""
        if not isinstance(node, ast.Name):
            return node
        if node.id in self.assigned:
            before = [a for a in self.assigned[node.id] if a.lineno < node.lineno]
            return before[-1].value if len(before) == len(self.assigned[node.id]) else None
        return self.module_values.get(node.id)

    def shown(self, collection: ast.AST, loop: Loop) -> bool:
        """Whether the collection is a non-empty literal, or a check outside the loop mentions it."""
        if self.literal(collection) or self.mentioned(collection, loop):
            return True
        if isinstance(collection, ast.Call):
            call = collection.func
            if isinstance(call, ast.Name) and call.id in WRAPPERS and collection.args:
                return self.shown(collection.args[0], loop)
            if isinstance(call, ast.Name) and call.id == "zip":
                return all(self.shown(a, loop) for a in collection.args)
            if isinstance(call, ast.Attribute) and call.attr in METHODS and not collection.args:
                return self.shown(call.value, loop)
        if isinstance(collection, ast.BinOp) and isinstance(collection.op, ast.Add):
            return self.shown(collection.left, loop) or self.shown(collection.right, loop)
        if isinstance(collection, ast.ListComp | ast.SetComp | ast.GeneratorExp) and len(collection.generators) == 1:
            return not collection.generators[0].ifs and self.shown(collection.generators[0].iter, loop)
        return False

    def mentioned(self, collection: ast.AST, loop: Loop) -> bool:
        wanted = same(collection)
        derived = {name for name, assigns in self.assigned.items() for a in assigns
                   if not self.inside(a, loop.body) and any(same(n) == wanted for n in ast.walk(a.value))}
        return any(same(n) == wanted or (isinstance(n, ast.Name) and n.id in derived)
                   for n in self.checks_reaching(loop))

    def counted_after(self, loop: Loop) -> bool:
        """Whether a check after the loop mentions a name the loop assigns or adds to."""
        if not isinstance(loop.node, ast.For):
            return False
        names = set()
        for node in (loop.node, *in_scope(loop.node)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ADDS:
                names |= names_in(node.func.value)
        names |= {name for name, assigns in self.assigned.items() for a in assigns
                  if a.lineno > (loop.node.end_lineno or 0) and names_in(a.value) & names}
        end = loop.node.end_lineno or 0
        return any(isinstance(n, ast.Name) and n.id in names and n.lineno > end for n in self.checks_reaching(loop))

    def opted_out(self, loop: Loop) -> bool:
        statement = loop.statement
        last = statement.end_lineno if isinstance(statement, ast.Assert) else statement.lineno
        return any(OPT_OUT in line for line in self.lines[statement.lineno - 1:last])

    def unshown(self) -> list[Loop]:
        return [loop for loop in self.loops
                if not (self.opted_out(loop) or self.shown(loop.node.iter, loop) or self.counted_after(loop))]


def without(node: ast.AST, left_out: ast.AST) -> Iterator[ast.AST]:
    todo = [node]
    while todo:
        current = todo.pop()
        if current is not left_out:
            yield current
            todo.extend(ast.iter_child_nodes(current))


def parametrized(function: ast.FunctionDef | ast.AsyncFunctionDef,
                 module_values: dict[str, ast.AST]) -> dict[str, list[ast.AST]]:
    """Each parameter a literal `pytest.mark.parametrize` gives (written out, or a module's name for a
    list written out), with the values it gives it."""
    found: dict[str, list[ast.AST]] = {}
    for decorator in function.decorator_list:
        if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                and decorator.func.attr == "parametrize" and len(decorator.args) >= 2):
            continue
        names, values = decorator.args[:2]
        if isinstance(values, ast.Name):
            values = module_values.get(values.id, values)
        if isinstance(names, ast.Constant) and isinstance(names.value, str):
            argnames = [n.strip() for n in names.value.split(",")]
        elif isinstance(names, ast.Tuple | ast.List) and all(isinstance(n, ast.Constant) for n in names.elts):
            argnames = [n.value for n in names.elts if isinstance(n, ast.Constant)]
        else:
            continue
        if not isinstance(values, ast.List | ast.Tuple):
            continue
        for i, name in enumerate(argnames):
            rows = [v if len(argnames) == 1 else v.elts[i] if isinstance(v, ast.Tuple) and len(v.elts) == len(argnames)
                    else None for v in values.elts]
            if all(rows):
                found[name] = [r for r in rows if r is not None]
    return found


def defined_tests(module: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in module.body:
        for function in node.body if isinstance(node, ast.ClassDef) else [node]:
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) and function.name.startswith("test"):
                yield function


def unshown_loops(source: str) -> list[str]:
    """`line: test: collection` for each loop whose collection nothing shows to be non-empty."""
    module = ast.parse(source)
    lines = source.splitlines()
    return [f"{loop.node.iter.lineno}: {function.name}: {ast.unparse(loop.node.iter)}"
            for function in defined_tests(module) for loop in ScannedTest(function, module, lines).unshown()]


def scanned_files() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def test_every_loop_that_asserts_shows_it_ran() -> None:
    files = scanned_files()
    assert len(files) > 100, "the scan found the test modules"
    unshown = [f"{path.relative_to(TESTS)}:{found}" for path in files for found in unshown_loops(path.read_text())]
    assert unshown == [], (
        "these loops assert, but nothing shows their collection is non-empty (assert it before the loop, or "
        f"mark an honestly empty one `{OPT_OUT} <reason>`):\n" + "\n".join(unshown))


@pytest.mark.parametrize(("source", "lines"), [
    ("def test_x(xs):\n    for x in xs:\n        assert x\n", [2]),
    ("def test_x(xs):\n    assert all(x for x in xs)\n", [2]),
    ("def test_x(xs):\n    assert xs.ok\n    for x in xs.items:\n        assert x\n", [3]),
    ("def test_x(xs):\n    for x in xs:\n        assert x, xs\n", [2]),
    ("def test_x(docs):\n    assert docs\n    for d in docs:\n        for t in d.terms:\n            assert t\n", [4]),
    ("def test_x(xs):\n    for x in xs:\n        assert x\n    for x in xs:\n        assert xs\n", [2, 4]),
    ("def test_x(xs):\n    n = 0\n    for x in xs:\n        assert x\n    assert n == 0\n", [3]),
], ids=["for", "all", "another collection", "only in the message", "inner loop", "in a sibling loop",
        "not counted"])
def test_a_loop_nothing_shows_ran_is_found(source: str, lines: list[int]) -> None:
    assert sorted(int(found.split(":")[0]) for found in unshown_loops(source)) == lines, unshown_loops(source)


@pytest.mark.parametrize("source", [
    "def test_x(xs):\n    assert xs\n    for x in xs:\n        assert x\n",
    "def test_x(xs):\n    for x in sorted(xs.items()):\n        assert x\n    assert len(xs) == 2\n",
    "def test_x(xs):\n    assert xs and all(x for x in xs)\n",
    "def test_x(xs):\n    (one,) = xs\n    for x in xs:\n        assert x\n",
    "def test_x():\n    for x in ('a', 'b'):\n        assert x\n",
    "NAMES = ('a', 'b')\ndef test_x():\n    for x in NAMES:\n        assert x\n",
    "import pytest\n@pytest.mark.parametrize('xs', [('a',), ['b']])\ndef test_x(xs):\n    for x in xs:\n"
    "        assert x\n",
    "def test_x(xs):\n    wanted = [x for x in xs if x]\n    assert wanted[0]\n    for x in xs:\n        assert x\n",
    "def test_x(xs):\n    seen = []\n    for x in xs:\n        assert x\n        seen.append(x)\n"
    "    assert seen == [1]\n",
    "def test_x(xs):\n    for x in xs:  # loop may be empty: no x is fine\n        assert x\n",
    "def test_x(docs):\n    for d in docs:\n        assert d.terms\n        for t in d.terms:\n            assert t\n"
    "    assert docs\n",
    "def test_x(k):\n    some = {'a': [1]}\n    for x in some.get(k, [2]):\n        assert x\n",
], ids=["asserted before", "counted after", "in the same assert", "unpacked", "literal", "module literal",
        "parameter", "derived name", "added to", "opted out", "inner loop", "item of a literal"])
def test_a_loop_shown_to_run_passes(source: str) -> None:
    assert unshown_loops(source) == []
