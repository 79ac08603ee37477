"""Which release methods apply to an audit, ``auto``, and the other methods as alternatives.

- :func:`why_not`: why a method does not apply to a spec on a route (None: it does): the
  plug-in methods (``search``, ``relaxed``, ``randomized``) need ``estimator`` ``plugin``;
  ``relaxed`` needs ``delta`` and the others refuse it (it is the relaxation's breach budget;
  the learned watchdog reads it as its own); each runs on its routes only.
- :class:`AutoMethod` (``method`` ``auto``): audits every method that applies (:func:`try_methods`;
  ``delta`` goes to ``relaxed`` only) and keeps the one with the most information, I(X; Y) in
  nats, among those that are met (ties: the order of :data:`ORDER`); when none is met, the
  method the spec's rule names, not met, with every method's result among the alternatives.
  ``Audit.summary`` says which method was released and why (``release_method``,
  ``release_method_reason``) with every method's verdict and information (``methods``).
- :func:`with_other_methods`: a method's section of leakage.json that is not met gets the other
  methods that apply among its alternatives, each audited (feasible when met).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from .._numbers import fmt, pct
from ..exceptions import ValidationError
from ._method import AuditView, Decision, Measured, ReleaseMethod, SavedMechanism, Step
from ._spec import AuditSpec

__all__ = [
    "ORDER",
    "AutoMethod",
    "Tried",
    "spec_for",
    "try_methods",
    "why_not",
    "with_other_methods",
]

#: The methods ``auto`` tries, in its order of preference on a tie.
ORDER = ("search", "watchdog", "relaxed", "randomized")
#: The methods that need the plug-in joint p(s, x).
PLUGIN_ONLY = ("search", "relaxed", "randomized")


def why_not(method: ReleaseMethod, spec: AuditSpec, route: str | None) -> str | None:
    """Why ``method`` does not apply to ``spec`` on ``route`` (None: any route), or None."""
    name = method.name
    if name in PLUGIN_ONLY and spec.estimator != "plugin":
        return (
            f"the {method.title} needs the plug-in joint p(s, x) (`estimator`='plugin'); got "
            f"`estimator`={spec.estimator!r}"
        )
    if name == "relaxed" and spec.delta is None:
        return f"the {method.title} needs `delta`, the breach share it may tolerate"
    if name in ("search", "randomized") and spec.delta is not None:
        return (
            f"`delta` is the breach budget of the (epsilon, delta) watchdog (`method`='relaxed'), "
            f"not of the {method.title}; leave `delta` out"
        )
    if name == "watchdog" and spec.delta is not None and spec.estimator == "plugin":
        return (
            "`delta` is the breach budget of the (epsilon, delta) watchdog (`method`='relaxed'), "
            "not of the plug-in watchdog; leave `delta` out"
        )
    if name == "auto" and route == "stream":
        return "the streamed route has one method, the learned watchdog"
    if route is not None and name != "auto" and route not in method.routes:
        return (
            f"the {method.title} runs on the {' and '.join(method.routes)} route(s); got the "
            f"{route} route"
            + (" (read the records into memory: `engine`='pandas')" if route == "engine" else "")
        )
    return None


def spec_for(name: str, spec: AuditSpec) -> AuditSpec:
    """``spec`` asking for method ``name`` (``delta`` kept for ``relaxed`` only)."""
    return spec.replace(method=name, delta=spec.delta if name == "relaxed" else None)


@dataclass
class Tried:
    """One method audited on the measurements: its spec, decision and leakage section."""

    method: ReleaseMethod
    spec: AuditSpec
    decision: Decision
    leakage: dict[str, Any]

    @property
    def met(self) -> bool:
        return bool(self.leakage["status"] == "met")

    @property
    def information(self) -> float:
        value = self.leakage["utility"].get("information_nats")
        return float("-inf") if value is None else float(value)

    def row(self) -> dict[str, Any]:
        """Its line of ``Audit.summary["methods"]``."""
        held = self.leakage.get("held_out") or None
        return {
            "method": self.method.name,
            "epsilon": self.decision.epsilon,
            "status": self.leakage["status"],
            "information_nats": None if self.information == float("-inf") else self.information,
            "held_out": None
            if held is None
            else {
                "estimate": held["breach_probability"],
                "interval": list(held["breach_probability_ci"]),
            },
            "tolerance": self.spec.held_out_tolerance
            if self.spec.delta is None
            else self.spec.delta,
        }


def try_methods(
    methods: Mapping[str, ReleaseMethod],
    spec: AuditSpec,
    measured: Measured,
    step: Step,
    skip: tuple[str, ...] = (),
) -> list[Tried]:
    """Every method of :data:`ORDER` that applies (:func:`why_not`), audited on ``measured``;
    one that cannot run on these records (its ``decide`` raises :class:`ValidationError`, e.g.
    a randomization LP over more tuples than it is solved for) is left out, with a progress
    line saying why."""
    out = []
    for name in ORDER:
        if name in skip:
            continue
        sub = spec_for(name, spec)
        method = methods[name]
        if why_not(method, sub, measured.route) is not None:
            continue
        try:
            decision = method.decide(sub, measured, step)
        except ValidationError as err:  # it cannot run on these records (e.g. an LP too large)
            step(f"the {method.title} was not tried: {err}")
            continue
        out.append(Tried(method, sub, decision, method.leakage(sub, measured, decision)))
    return out


def _alternative(row: Mapping[str, Any], title: str, spec: AuditSpec) -> dict[str, Any]:
    """A method audited on the same records (its :meth:`Tried.row`), as an alternative of
    leakage.json."""
    name = str(row["method"])
    args: dict[str, Any] = {"method": name}
    if spec.delta is not None and name != "relaxed":
        args["delta"] = None  # the other methods have no delta
    held = row["held_out"]
    judged = (
        ""
        if held is None
        else f", held-out breach {pct(held['estimate'])} (95 % up to {pct(held['interval'][1])})"
    )
    met = row["status"] == "met"
    verdict = "met" if met else "not feasible (not met)"
    return {
        "epsilon": row["epsilon"],
        "disclosure": spec.disclosure,
        "changed": "method",
        "args": args,
        "information_nats": row["information_nats"],
        "held_out": held,
        "feasible": met,
        "unprotected": [],
        "searched_epsilon": None,  # another method's release: no search at an epsilon made it
        "description": (
            f"another release method, the {title} (`method`={name!r}): "
            f"{verdict} at the same epsilon, {fmt(row['information_nats'], 3)} nats kept{judged}"
        ),
    }


def with_other_methods(
    methods: Mapping[str, ReleaseMethod],
    method: ReleaseMethod,
    spec: AuditSpec,
    measured: Measured,
    leakage: dict[str, Any],
    step: Step,
) -> dict[str, Any]:
    """``leakage`` with, when it is not met, every other method that applies (audited on the
    same measurements) first among its alternatives (records in memory only)."""
    if leakage["status"] == "met" or method.name == "auto" or measured.route != "memory":
        return leakage
    tried = try_methods(methods, spec, measured, step, skip=(method.name,))
    ranked = sorted(tried, key=lambda t: (not t.met, -t.information))
    first = [_alternative(t.row(), t.method.title, spec) for t in ranked]
    leakage["alternatives"] = first + list(leakage["alternatives"])
    return leakage


class AutoMethod(ReleaseMethod):
    """Every method that applies, the most informative one met kept (see the module docstring).

    ``methods``: the registry it picks from (:data:`privwatch.audit.METHODS`); ``default``: the
    spec's rule (:func:`privwatch.audit.choose_method` without ``method``), kept when none is
    met.
    """

    name: ClassVar[str] = "auto"
    title: ClassVar[str] = "most informative method met"
    routes: ClassVar[tuple[str, ...]] = ("memory", "engine")

    def __init__(self, methods: Mapping[str, ReleaseMethod], default: Any) -> None:
        self.methods = methods
        self.default = default

    def _chosen(self, summary: Mapping[str, Any]) -> ReleaseMethod:
        return self.methods[str(summary["release_method"])]

    def decide(self, spec: AuditSpec, measured: Measured, step: Step) -> Decision:
        tried = try_methods(self.methods, spec, measured, step)
        if not tried:
            raise ValidationError("`method`='auto' found no release method that applies.")
        met = [t for t in tried if t.met]
        if met:
            best = max(met, key=lambda t: t.information)  # max keeps the first of a tie
            others = [t for t in met if t is not best]
            why = (
                f"the most information among the {len(met)} method(s) met "
                f"({fmt(best.information, 3)} nats"
                + ("" if not others else ", next: " + ", ".join(
                    f"{t.method.name} {fmt(t.information, 3)}" for t in others))
                + ")"
            )  # fmt: skip
        else:
            fallback = self.default(spec.replace(method=None))
            best = next((t for t in tried if t.method.name == fallback), tried[0])
            why = f"no method is met; the release of the spec's rule ({best.method.name}) is shown"
        d = best.decision
        summary = {
            **d.summary,
            "release_method": best.method.name,
            "release_method_reason": why,
            "methods": [t.row() for t in tried],
        }
        return dataclasses.replace(d, summary=summary)

    def leakage(self, spec: AuditSpec, measured: Measured, decision: Decision) -> dict[str, Any]:
        chosen = self._chosen(decision.summary)
        sub = spec_for(chosen.name, spec)
        leakage = chosen.leakage(sub, measured, decision)
        leakage["guarantee_in_words"] = (
            f"Released by the {chosen.title} (`method`='auto': "
            f"{decision.summary['release_method_reason']}). {leakage['guarantee_in_words']}"
        )
        if leakage["status"] != "met":  # every other method's result, none of them met
            others = [r for r in decision.summary["methods"] if r["method"] != chosen.name]
            first = [_alternative(r, self.methods[r["method"]].title, spec) for r in others]
            leakage["alternatives"] = first + list(leakage["alternatives"])
        return leakage

    def rows(self, result: AuditView) -> list[tuple[str, str]]:
        chosen = self._chosen(result.summary)
        return _choice_rows(result) + chosen.rows(result)

    def report_rows(self, result: AuditView) -> list[tuple[str, str]]:
        chosen = self._chosen(result.summary)
        return _choice_rows(result) + chosen.report_rows(result)

    def mechanism(self, result: AuditView) -> SavedMechanism:
        return self._chosen(result.summary).mechanism(result)

    def mechanism_refusal(self, spec: AuditSpec, route: str) -> str | None:
        """On the engine route the release search is the one method that runs, and it saves
        its generalisation there; elsewhere the default."""
        return None if route == "engine" else super().mechanism_refusal(spec, route)

    def attack(
        self, spec: AuditSpec, measured: Measured, decision: Decision, step: Step
    ) -> dict[str, Any] | None:
        chosen = self._chosen(decision.summary)
        return chosen.attack(spec_for(chosen.name, spec), measured, decision, step)


def _choice_rows(result: AuditView) -> list[tuple[str, str]]:
    """The method released and why, then every method's verdict and information."""
    s = result.summary
    rows = [("release method (auto)", f"{s['release_method']}: {s['release_method_reason']}")]
    for r in s["methods"]:
        held = r["held_out"]
        judged = (
            ""
            if held is None
            else f", held-out {pct(held['estimate'])} (95 % up to {pct(held['interval'][1])})"
        )
        verdict = str(r["status"]).replace("_", " ")
        rows.append(
            (f"  {r['method']}", f"{verdict}, {fmt(r['information_nats'], 3)} nats{judged}")
        )
    return rows
