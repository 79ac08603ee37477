"""A package's exported names imported on first use (PEP 562), so that importing the package
costs only what is used: ``estimators/`` and ``watchdog/`` (their learned families load
scikit-learn and PyTorch; docs/architecture.md, "Start-up cost")."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, where: Mapping[str, str], names: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``: each name of ``where`` is
    imported from its module (relative to ``package``) on first use and kept on the package;
    ``dir()`` lists ``names`` (its ``__all__``)."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__
