"""One line each for the classic measures and the inference attack of an audit."""

from __future__ import annotations

from ..audit import Audit
from ..report import fmt, pct

__all__ = ["attack_lines", "classic_line"]


def classic_line(result: Audit) -> str | None:
    classic = result.leakage.get("classic")
    if not classic:
        return None
    rel = classic["release"]
    t = rel["table"]
    parts = [
        f"k-anonymity {t['k_anonymity']['value']} (threshold {t['k_anonymity']['threshold']}: "
        f"{'pass' if t['k_anonymity']['passes'] else 'fail'})"
    ]
    for attr, block in rel["sensitive"].items():
        m = block["measures"]
        parts.append(
            f"{attr}: distinct l-diversity {m['distinct_l_diversity']['value']}, t-closeness "
            f"{fmt(float(m['t_closeness']['value']), 2)}"
        )
    fails = sum(not e["passes"] for e in t.values()) + sum(
        not e["passes"] for b in rel["sensitive"].values() for e in b["measures"].values()
    )
    total = len(t) + sum(len(b["measures"]) for b in rel["sensitive"].values())
    return f"Classic measures of the release: {'; '.join(parts)}; {total - fails} of {total} pass."


def attack_lines(result: Audit) -> list[str]:
    attack = result.leakage.get("attack")
    if not attack:
        return []
    lines = []
    for attr, a in attack["attributes"].items():
        lo, hi = a["risk_ci"]
        verdict = "pass" if a["passes"] else "fail"
        lines.append(
            f"Inference attack on {attr}: right for {pct(a['success_targets'])} of released "
            f"records vs {pct(a['success_control'])} of held-out ones; risk "
            f"{fmt(float(a['risk']), 2)} (95 % {fmt(float(lo), 2)} to {fmt(float(hi), 2)}, "
            f"threshold {fmt(float(a['threshold']), 2)}: {verdict}); best possible attacker "
            f"{pct(a['bayes_success'])} vs {pct(a['prior_success'])} without the release."
        )
    return lines
