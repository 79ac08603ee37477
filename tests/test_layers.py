"""The package rules of docs/architecture.md, checked on the source (issue #40).

- **Layers.** The table under "Layers" in docs/architecture.md lists every top-level unit of
  ``src/privwatch`` (a package ``name/`` or a root module ``name.py``) in one row; imports go up
  the table: a unit imports only units of its own row or of rows above it.
- **Private modules stay private.** No module imports a private module (any dotted part after
  ``privwatch.`` that starts with ``_``) of another top-level package, nor a private name from
  another package. The root modules (``privwatch._validation``, ``privwatch._rng``, ...) are the
  shared toolkit of layer 0: they are modules, not packages, so the rule does not forbid them.
- **Every module is in the guide.** Each module of ``src/privwatch`` is named in
  docs/architecture.md by its path relative to the package (``audit/_route_memory.py``).

The import graph is the one of ``tests/test_imports.py``: every import statement wherever it
stands (module level, function, ``TYPE_CHECKING``), relative imports resolved.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.test_imports import MODULES, PACKAGE, _absolute, _imports

DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def _unit(module: str) -> str:
    """The top-level unit of a dotted module name: ``audit`` for ``privwatch.audit._spec``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer_table(text: str) -> dict[str, int]:
    """Unit -> row number of the layer table (the first table after a ``## Layers`` heading)."""
    lines = text.split("## Layers", 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    table: dict[str, int] = {}
    for i, row in enumerate(lines[start + 2 : end]):  # after the header and its rule
        cells = [c.strip() for c in row.strip("|").split("|")]
        for name in re.findall(r"`([A-Za-z_]+)(?:/|\.py)`", cells[1]):
            assert name not in table, f"{name} is in two rows of the layer table"
            table[name] = i
    return table


def _units() -> set[str]:
    return {_unit(m) for m in MODULES}


def test_the_layer_table_lists_every_unit_once() -> None:
    table = layer_table(DOC.read_text(encoding="utf-8"))
    missing = sorted(_units() - set(table))
    stale = sorted(set(table) - _units())
    assert missing == [] and stale == [], f"not in the table: {missing}; gone: {stale}"


def layer_violations(graph: dict[str, set[str]], table: dict[str, int]) -> list[str]:
    """Edges that go down the table: ``a -> b`` with ``b``'s row below ``a``'s."""
    bad = []
    for a, targets in graph.items():
        for b in targets:
            ua, ub = _unit(a), _unit(b)
            if ua != ub and table[ub] > table[ua]:
                bad.append(f"{a} -> {b} (row {table[ua]} imports row {table[ub]})")
    return sorted(bad)


def test_imports_go_up_the_layer_table() -> None:
    from tests.test_imports import import_graph

    table = layer_table(DOC.read_text(encoding="utf-8"))
    assert layer_violations(import_graph(), table) == []
    # the rule can fail: a toy graph with a downward edge is caught
    assert layer_violations({"privwatch.measures._x": {"privwatch.audit._y"}}, table)


def _private_part(module: str) -> bool:
    return any(p.startswith("_") for p in module.split(".")[2:])


def private_imports(module: str) -> list[str]:
    """Imports in ``module`` of another top-level package's private module or private name."""
    found = []
    home = _unit(module)
    for target, name in _imports(module):
        unit = _unit(target)
        if unit == home or target == "privwatch" or not (PACKAGE / unit).is_dir():
            continue  # own package, the facade, or a root module of layer 0
        full = f"{target}.{name}" if name and f"{target}.{name}" in MODULES else target
        if _private_part(full) or (name is not None and name.startswith("_")):
            found.append(f"{module}: {target} import {name}")
    return found


def test_no_module_imports_another_packages_private_module() -> None:
    bad = [line for m in MODULES for line in private_imports(m)]
    assert bad == [], "\n".join(bad)


def test_the_private_rule_can_fail(tmp_path: Path) -> None:
    # the same walk on a statement that breaks the rule
    tree = ast.parse("from ..release._cells import LiftBox\nfrom ..release import _plugin\n")
    targets = [(_absolute("privwatch.audit._run", n), n.names[0].name) for n in tree.body]
    assert [t for t in targets if _private_part(t[0]) or t[1].startswith("_")] == targets


def module_paths() -> list[str]:
    """Every module of ``src/privwatch`` as a path relative to the package."""
    return sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py"))


def test_every_module_is_named_in_the_architecture_guide() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [p for p in module_paths() if not p.endswith("__init__.py") and f"`{p}`" not in text]
    assert missing == [], f"modules docs/architecture.md does not name: {missing}"


def constant_owners() -> dict[str, list[str]]:
    """Public module-level constants (``NAME = ...`` / ``NAME: T = ...`` in upper case) -> the
    modules that assign them. A name imported from its owner is not an assignment."""
    owners: dict[str, list[str]] = {}
    for module, path in MODULES.items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign) and node.value is not None
                else []
            )
            for t in targets:
                if isinstance(t, ast.Name) and re.fullmatch(r"[A-Z][A-Z0-9_]+", t.id):
                    owners.setdefault(t.id, []).append(module)
    return owners


def test_every_constant_has_one_owner() -> None:
    twice = {name: mods for name, mods in constant_owners().items() if len(mods) > 1}
    assert twice == {}, f"constants assigned in more than one module: {twice}"
