"""docs/glossary.md lists every public result attribute, and only attributes that exist.

Walks the ``__all__`` of privwatch and its subpackages: the fields of every public result
dataclass (and NamedTuple) and the fitted attributes (public names ending in ``_``, assigned as
``self.name_ = ...`` or defined as properties) of every class with a ``fit`` method. Each must have
a row in the glossary's table whose last column names the class; each class a row names must
have that attribute.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import re
import textwrap
from pathlib import Path

import pytest

GLOSSARY = Path(__file__).resolve().parents[1] / "docs" / "glossary.md"
MODULES = [
    "privwatch",
    "privwatch.measures",
    "privwatch.watchdog",
    "privwatch.mechanisms",
    "privwatch.estimators",
    "privwatch.adversarial",
    "privwatch.datasets",
    "privwatch.release",
    "privwatch.theory",
    "privwatch.preprocessing",
    "privwatch.joint",
    "privwatch.engines",
    "privwatch.audit",
    "privwatch.report",
    "privwatch.gallery",
]


SKIPPED: list[str] = []  # modules whose optional dependency is missing


def _public_classes() -> dict[str, type]:
    out: dict[str, type] = {}
    for name in MODULES:
        try:
            mod = importlib.import_module(name)
        except ImportError:  # an optional extra (torch) is missing
            SKIPPED.append(name)
            continue
        for attr in getattr(mod, "__all__", []):
            obj = getattr(mod, attr, None)
            if inspect.isclass(obj) and obj.__module__.startswith("privwatch"):
                out.setdefault(obj.__name__, obj)
    return out


def _fitted_attributes(cls: type) -> set[str]:
    """``self.name_ = ...`` assignments and ``name_`` properties in the class and its privwatch
    bases."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("privwatch"):
            continue
        for attr, value in vars(klass).items():
            if isinstance(value, property) and attr.endswith("_") and not attr.startswith("_"):
                names.add(attr)
        tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
                and node.attr.endswith("_")
                and not node.attr.startswith("_")
            ):
                names.add(node.attr)
    return names


def result_attributes() -> dict[str, set[str]]:
    """Class name -> its public result attributes, for every public result or estimator class."""
    out: dict[str, set[str]] = {}
    for name, cls in _public_classes().items():
        if dataclasses.is_dataclass(cls):
            fields = {f.name for f in dataclasses.fields(cls) if not f.name.startswith("_")}
        elif issubclass(cls, tuple) and hasattr(cls, "_fields"):
            fields = set(cls._fields)
        elif callable(getattr(cls, "fit", None)):
            fields = _fitted_attributes(cls)
        else:
            continue
        if fields:
            out[name] = fields
    return out


def glossary_rows() -> dict[str, set[str]]:
    """Attribute name -> the classes its row names (the last column)."""
    text = GLOSSARY.read_text(encoding="utf-8")
    section = text.split("## Result attributes", 1)[1]
    rows: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) != 4 or not cells[0].startswith("`"):
            continue
        name = cells[0].strip("`")
        assert name not in rows, f"{name!r} has two rows in docs/glossary.md"
        rows[name] = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", cells[3]))
    return rows


CODE = result_attributes()
ROWS = glossary_rows()


def test_the_walk_finds_the_result_types() -> None:
    # the walk must see the families it is meant to guard (a broken walk would pass vacuously)
    for cls in (
        "LeakageReport",
        "OptimalBayesResult",
        "Guarantee",
        "ReleaseResult",
        "Privacy",
        "Audit",
        "AuditSpec",
    ):
        assert cls in CODE
    assert "prior_" in CODE["PluginLift"] and "guarantee_" in CODE["Watchdog"]
    assert len(ROWS) > 150


@pytest.mark.parametrize("cls", sorted(CODE))
def test_every_result_attribute_is_in_the_glossary(cls: str) -> None:
    missing = sorted(a for a in CODE[cls] if a not in ROWS)
    assert not missing, f"docs/glossary.md has no row for {cls}.{missing}"
    unnamed = sorted(a for a in CODE[cls] if cls not in ROWS[a])
    assert not unnamed, f"docs/glossary.md rows {unnamed} do not name {cls} in 'where it appears'"


def test_every_glossary_row_exists_in_the_code() -> None:
    stale = sorted(
        f"{cls}.{name}"
        for name, classes in ROWS.items()
        for cls in classes
        if cls in CODE and name not in CODE[cls]
    )
    assert not stale, f"docs/glossary.md lists attributes the code no longer has: {stale}"
    orphans = sorted(name for name, classes in ROWS.items() if not classes & set(CODE))
    assert not orphans or SKIPPED, f"docs/glossary.md rows name no public class: {orphans}"
