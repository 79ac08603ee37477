"""The release methods of the audit, by name, and which one an audit uses.

:data:`METHODS` is the one registry (one line per method; the interface is
:class:`~privwatch.audit.ReleaseMethod`); :func:`choose_method` is the one place that picks a
method from the spec; every route asks :func:`method_for`.
"""

from __future__ import annotations

from ._method import ReleaseMethod
from ._method_randomized import RandomizedMethod
from ._method_relaxed import RelaxedMethod
from ._method_search import SearchMethod
from ._method_watchdog import WatchdogMethod
from ._spec import AuditSpec

__all__ = ["METHODS", "choose_method", "method_for"]

#: Every release method, by name (``METHODS[name].name == name``).
METHODS: dict[str, ReleaseMethod] = {
    "search": SearchMethod(),
    "relaxed": RelaxedMethod(),
    "watchdog": WatchdogMethod(),
    "randomized": RandomizedMethod(),
}


def choose_method(spec: AuditSpec) -> str:
    """The name of the release method an audit with ``spec`` uses.

    ``delta`` given: ``relaxed`` (the (epsilon, delta) watchdog); a learned ``estimator``:
    ``watchdog`` (record-level, Hsu et al. §IV); otherwise (plug-in counts): ``search``, the
    most informative generalisation.

    Examples
    --------
    >>> choose_method(AuditSpec(epsilon=1.0)), choose_method(AuditSpec(epsilon=1.0, delta=0.05))
    ('search', 'relaxed')
    """
    if spec.delta is not None:
        return "relaxed"
    if spec.estimator != "plugin":
        return "watchdog"
    return "search"


def method_for(spec: AuditSpec) -> ReleaseMethod:
    """The registered method :func:`choose_method` names for ``spec``."""
    return METHODS[choose_method(spec)]
