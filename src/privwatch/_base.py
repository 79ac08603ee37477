"""A minimal scikit-learn estimator contract (get_params / set_params / repr) without sklearn."""

from __future__ import annotations

import inspect
from typing import Any

from .exceptions import NotFittedError, ValidationError

__all__ = ["ParamsMixin", "check_is_fitted"]


class ParamsMixin:
    """``__init__`` only stores its keyword arguments; these round-trip through get/set_params."""

    @classmethod
    def _param_names(cls) -> list[str]:
        """Named ``__init__`` arguments, following ``**kwargs`` up the class hierarchy."""
        names: list[str] = []
        for klass in cls.__mro__:
            if klass is object or "__init__" not in vars(klass):
                continue
            params = list(inspect.signature(vars(klass)["__init__"]).parameters.values())
            for p in params:
                if p.name != "self" and p.kind != p.VAR_KEYWORD and p.name not in names:
                    names.append(p.name)
            if not any(p.kind == p.VAR_KEYWORD for p in params):
                break
        return names

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor arguments, as stored."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> Any:
        """Set constructor arguments; unknown names are refused. Returns ``self``."""
        valid = set(self._param_names())
        for name, value in params.items():
            if name not in valid:
                raise ValidationError(
                    f"`{name}` must be a parameter of {type(self).__name__} "
                    f"({sorted(valid)}); got it as an unknown name."
                )
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


def check_is_fitted(estimator: Any, attribute: str) -> None:
    if not hasattr(estimator, attribute):
        raise NotFittedError(
            f"This {type(estimator).__name__} is not fitted yet; call fit(...) first."
        )
