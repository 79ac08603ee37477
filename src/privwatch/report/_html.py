"""The self-contained HTML report (images inline), rendered with Jinja2."""

from __future__ import annotations

import base64
import math
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

if TYPE_CHECKING:
    from ._audit import AuditResult

__all__ = ["render_report"]


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return "inf" if math.isinf(value) else f"{value:.4g}"
    return str(value)


def _image(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def render_report(result: AuditResult, images: Path, max_rows: int = 25) -> str:
    """HTML of the report; ``images`` is the folder holding tradeoff.png and lift.png."""
    template = jinja2.Template(
        resources.files("privwatch.report").joinpath("templates/report.html.j2").read_text(),
        autoescape=True,
    )
    scores = result.scores
    flagged = scores[scores["flagged"]].sort_values("risk", ascending=False).head(max_rows)
    obs = result.settings["observed"]
    wd = result.watchdog
    positions = flagged.index.to_numpy()  # records are numbered 0 .. n - 1
    values = result.data[obs].to_numpy()[positions]
    top = [
        {"record": int(p), "risk": _fmt(float(r)), "values": [_fmt(v) for v in vals]}
        for p, r, vals in zip(positions, flagged["risk"].to_numpy(), values, strict=True)
    ]
    before = result.leakage.get("before", {})
    after = result.leakage.get("after", {})
    names = [k for k in before if k not in ("base", "alpha")]
    leak_rows = [
        {"name": k, "before": _fmt(before.get(k)), "after": _fmt(after.get(k, "-"))} for k in names
    ]
    found = result.found
    findings = None
    if found is not None:
        held = found.held_out
        findings = {
            "met": found.satisfied,
            "reasons": found.reasons,
            "alternatives": found.alternatives,
            "words": result.leakage.get("guarantee_in_words", ""),
            "method": found.method,
            "information": f"{found.information_nats:.2f}",
            "information_input": f"{found.information_input_nats:.2f}",
            "information_global": f"{found.information_global_nats:.2f}",
            "information_local": "-"
            if found.information_local_nats is None
            else f"{found.information_local_nats:.2f}",
            "suppressed": found.suppressed_records,
            "n": found.n_records,
            "worst": f"{found.max_log_lift:.3f}",
            "disclosure": found.disclosure,
            "held": None
            if held is None
            else {
                "folds": held.folds,
                "breach": f"{held.breach_probability:.1%}",
                "breach_ci": f"{held.breach_probability_ci[0]:.1%} - "
                f"{held.breach_probability_ci[1]:.1%}",
                "breach_plugin": f"{held.breach_probability_plugin:.1%}",
                "worst": f"{held.max_log_lift:.2f}",
                "worst_ci": f"{held.max_log_lift_ci[0]:.2f} - {held.max_log_lift_ci[1]:.2f}",
                "interval": held.interval,
            },
            "frontier": [
                {
                    "epsilon": f"{p['epsilon']:g}",
                    "info": f"{p['information_nats']:.2f}",
                    "glob": f"{p['information_global_nats']:.2f}",
                    "suppressed": f"{p['suppressed_share']:.1%}",
                    "method": p["method"],
                }
                for p in found.frontier
            ],
            "advice": found.records.loc[found.records["flagged"], "advice_column"]
            .replace("", "(none helps)")
            .value_counts()
            .to_dict(),
            "n_flagged": int(found.records["flagged"].sum()),
        }
    html: str = template.render(
        findings=findings,
        summary=result.summary,
        settings={k: _fmt(v) for k, v in result.settings.items()},
        epsilon=_fmt(result.epsilon),
        epsilon_reason=result.epsilon_reason,
        guarantee={k: _fmt(v) for k, v in wd.guarantee_.to_dict().items()},
        guarantee_words=wd.guarantee_.explain(),
        leak_rows=leak_rows,
        flagged=top,
        observed=obs,
        n_flagged=int(scores["flagged"].sum()),
        tradeoff_png=_image(images / "tradeoff.png"),
        lift_png=_image(images / "lift.png"),
    )
    return html
