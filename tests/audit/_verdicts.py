"""The verdict's own rules, checked on a leakage.json whatever the held-out numbers say.

The held-out estimator decides which data sets end MET, and it is meant to change (issue 32):
a test that asserted "this table is NOT MET" would test the estimator of the day, not the
product. :func:`assert_verdict_consistent` checks what must hold for any estimator
(docs/release.md, "The verdict" and "When the request cannot be met"):

- exit status 3 iff ``status`` is ``"not_met"`` (0 otherwise), ``reasons`` non-empty iff not met;
- ``held_out.verdict`` follows its interval: ``"met"`` iff the upper end is at most the
  tolerance, ``"breach"`` iff the lower end is above it;
- a met release keeps information, protects at least one sensitive value, meets epsilon
  in-sample and has a held-out upper end at most the tolerance, and offers no alternative;
- every alternative is a well-formed object whose ``args`` give its epsilon and disclosure,
  ranked strongest privacy first; a feasible one is met by the same rules and leaves no value
  the request protected unprotected;
- the sentence for one person names the value whose belief can grow the most and every value
  left unprotected.
"""

from __future__ import annotations

from typing import Any

NOTHING_KEPT = 1e-9
ALTERNATIVE_KEYS = {
    "epsilon",
    "disclosure",
    "changed",
    "args",
    "information_nats",
    "held_out",
    "feasible",
    "unprotected",
    "description",
    "searched_epsilon",
}


def _interval_ok(lo: float, estimate: float, hi: float) -> None:
    assert 0.0 <= lo <= estimate + 1e-12 and estimate <= hi + 1e-12 and hi <= 1.0, (lo, hi)


def _check_held_out(held: dict[str, Any] | None, tolerance: float) -> str | None:
    """The held-out verdict, after checking it follows its interval (None without a check)."""
    if held is None:
        return None
    lo, hi = held["breach_probability_ci"]
    _interval_ok(lo, held["breach_probability"], hi)
    expected = "met" if hi <= tolerance else ("breach" if lo > tolerance else "inconclusive")
    assert held["verdict"] == expected, (held["verdict"], lo, hi, tolerance)
    return str(held["verdict"])


def _check_per_value(leak: dict[str, Any]) -> list[dict[str, Any]]:
    guarantee = leak["guarantee"]
    rows: list[dict[str, Any]] = guarantee["per_value"]
    assert rows, "guarantee.per_value lists every sensitive value"
    both = guarantee["disclosure"] == "both"
    for r in rows:
        assert {"attribute", "value", "share", "belief_max", "belief_min", "protected"} <= set(r)
        assert 0.0 <= r["share"] <= r["belief_max"] <= 1.0, r
        assert (r["belief_min"] is None) == (not both), r
        assert r["protected"] == (r["belief_max"] < 1.0 - 1e-12), r
    words = leak["guarantee_in_words"]
    worst = max(rows, key=lambda r: r["belief_max"] - r["share"])
    assert f" is {worst['value']} can grow" in words, (worst, words)
    for r in rows:
        if not r["protected"]:
            assert r["value"] in words, (r, words)
    return rows


def _check_alternatives(leak: dict[str, Any], protected: set[str], tolerance: float) -> None:
    alternatives = leak["alternatives"]
    for a in alternatives:
        assert set(a) == ALTERNATIVE_KEYS, sorted(a)
        assert a["changed"] in ("epsilon", "disclosure", "max_suppressed", "method"), a["changed"]
        args = a["args"]
        assert args.get("epsilon", a["epsilon"]) == a["epsilon"], a
        assert args.get("disclosure", a["disclosure"]) == a["disclosure"], a
        assert a["information_nats"] >= 0.0 and isinstance(a["feasible"], bool)
        assert all(isinstance(v, str) for v in a["unprotected"])
        assert isinstance(a["description"], str) and a["description"]
        held = a["held_out"]
        if held is not None:
            lo, hi = held["interval"]
            _interval_ok(lo, held["estimate"], hi)
        if a["feasible"]:
            assert a["information_nats"] > NOTHING_KEPT, a
            assert held is None or held["interval"][1] <= tolerance, a
            assert not protected.intersection(a["unprotected"]), a
            assert "not feasible" not in a["description"], a
        else:
            assert "not feasible" in a["description"], a
    # the other release methods (#41) come first, those met before those not; then the
    # settings of the same method, ranked strongest privacy first
    methods = [a for a in alternatives if a["changed"] == "method"]
    assert alternatives[: len(methods)] == methods, "the other methods come first"
    assert [not a["feasible"] for a in methods] == sorted(not a["feasible"] for a in methods)
    order = [
        (a["epsilon"], a["disclosure"] == "positive", a["args"]["max_suppressed"])
        for a in alternatives[len(methods) :]
    ]
    assert order == sorted(order), "alternatives are ranked strongest privacy first"


def assert_verdict_consistent(leak: dict[str, Any], exit_code: int | None = None) -> str:
    """Check the rules of the module docstring on one leakage.json; return its ``status``."""
    status = leak["status"]
    assert status in ("met", "not_met"), status
    if exit_code is not None:
        assert exit_code == (3 if status == "not_met" else 0), (exit_code, status)
    assert bool(leak["reasons"]) == (status == "not_met"), leak["reasons"]
    if leak["release"] is None:  # a watchdog or learned route: no release search
        return str(status)
    tolerance = leak["settings"]["held_out_tolerance"]
    verdict = _check_held_out(leak["held_out"], tolerance)
    rows = _check_per_value(leak)
    protected = {f"{r['attribute']}={r['value']}" for r in rows if r["protected"]}
    _check_alternatives(leak, protected, tolerance)
    guarantee = leak["guarantee"]
    if status == "met":
        assert verdict in (None, "met"), verdict
        assert leak["utility"]["information_nats"] > NOTHING_KEPT
        assert protected, "a guarantee that protects no value is never met"
        assert guarantee["max_log_lift_in_sample"] <= guarantee["epsilon"] + 1e-9
        assert not any(a["feasible"] for a in leak["alternatives"]), "met: nothing to offer"
    elif verdict == "met":  # then the held-out check is not why
        assert leak["utility"]["information_nats"] <= NOTHING_KEPT or not protected
    return str(status)
