"""The release methods of the audit, by name, and which one an audit uses.

:data:`METHODS` is the one registry (one line per method; the interface is
:class:`~privwatch.audit.ReleaseMethod`); :func:`choose_method` is the one place that picks a
method from the spec (``method`` when given, checked to apply; else the rule); every route asks
:func:`method_for`, and :func:`check_method` refuses, before any work, a method that does not
apply to the route, naming the nearest one that does.
"""

from __future__ import annotations

from .._validation import short_repr
from ..exceptions import ValidationError
from ._method import ReleaseMethod
from ._method_auto import ORDER, AutoMethod, spec_for, why_not
from ._method_randomized import RandomizedMethod
from ._method_relaxed import RelaxedMethod
from ._method_search import SearchMethod
from ._method_watchdog import WatchdogMethod
from ._result import ROUTES
from ._spec import AuditSpec

__all__ = ["METHODS", "check_method", "choose_method", "method_for"]

#: Every release method, by name (``METHODS[name].name == name``).
METHODS: dict[str, ReleaseMethod] = {
    "search": SearchMethod(),
    "relaxed": RelaxedMethod(),
    "watchdog": WatchdogMethod(),
    "randomized": RandomizedMethod(),
}


def choose_method(spec: AuditSpec, route: str | None = None) -> str:
    """The name of the release method an audit with ``spec`` (on ``route``) uses.

    ``method`` given: that method, refused with the reason and the nearest method that applies
    when it does not apply to the spec or the route. Otherwise the rule: ``delta`` given:
    ``relaxed`` (the (epsilon, delta) watchdog); a learned ``estimator``: ``watchdog``
    (record-level, Hsu et al. §IV); otherwise (plug-in counts): ``search``, the most
    informative generalisation.

    Examples
    --------
    >>> choose_method(AuditSpec(epsilon=1.0)), choose_method(AuditSpec(epsilon=1.0, delta=0.05))
    ('search', 'relaxed')
    """
    if not isinstance(spec, AuditSpec):
        raise ValidationError(f"`spec` must be an AuditSpec; got {short_repr(spec)}.")
    if route is not None and route not in ROUTES:
        raise ValidationError(f"`route` must be one of {ROUTES} or None; got {short_repr(route)}.")
    if spec.method is not None:
        reason = why_not(METHODS[spec.method], spec, route)
        if reason is not None:
            raise ValidationError(
                f"`method`={spec.method!r} does not apply here: {reason}. The nearest that "
                f"does: {_nearest(spec, route)}."
            )
        return spec.method
    if spec.delta is not None:
        return "relaxed"
    if spec.estimator != "plugin":
        return "watchdog"
    return "search"


def method_for(spec: AuditSpec, route: str | None = None) -> ReleaseMethod:
    """The registered method :func:`choose_method` names for ``spec`` (on ``route``)."""
    return METHODS[choose_method(spec, route)]


def check_method(spec: AuditSpec, route: str) -> None:
    """Refuse, before any work, a ``method`` that does not apply to ``spec`` on ``route``."""
    choose_method(spec, route)


def _nearest(spec: AuditSpec, route: str | None) -> str:
    """The method the rule names, when it applies; else the first of ``ORDER`` that does."""
    rule = spec.replace(method=None)
    names = [choose_method(rule), *ORDER]
    for name in names:
        if name != spec.method and why_not(METHODS[name], rule, route) is None:
            return f"`method`={name!r}"
    for name in ORDER:  # one that applies once `delta` is left out or given
        if name != spec.method and why_not(METHODS[name], spec_for(name, rule), route) is None:
            return f"`method`={name!r}" + ("" if name == "relaxed" else " without `delta`")
    return "none (give `estimator`='plugin' and the records in memory)"


METHODS["auto"] = AutoMethod(METHODS, choose_method)
