"""The self-contained HTML report (images inline), rendered with Jinja2: findings first."""

from __future__ import annotations

import base64
import math
import re
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
import numpy as np
import pandas as pd

from ..audit import RELEASE_FILE, SCORES_FILE, Caller
from ..release.heldout import TOLERANCE, verdict_rule
from ..release.search import MAX_NODES, MIN_CLASS_SIZE
from ._figures import risk_counts
from ._reid import reid_view
from ._words import GLOSSARY, MEASURE_NAMES, fmt, pct, pct_ci

if TYPE_CHECKING:
    from ..audit import Audit

__all__ = ["attack_rows", "checks_note", "classic_rows", "next_steps", "render_report"]

SETTING_NAMES = {
    "epsilon_max": "epsilon cap (with delta)",
    "max_levels": "largest number of values of an unbinned numeric column",
    "rng": "random seed",
    "max_suppressed": "largest share of records suppressed",
    "folds": "folds of the held-out check",
    "local_recoding": "local recoding tried",
    "held_out_tolerance": "largest held-out breach probability called met",
    "confidence": "credible level demanded of every cell",
    "checks": "classic measures and attack computed",
}


def _image(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def _value(key: str, value: Any) -> str:
    unit = MEASURE_NAMES.get(key, ("", "", ""))[1]
    if unit == "prob" and isinstance(value, float) and math.isfinite(value):
        return pct(value)
    return fmt(value) + (" nats" if unit == "nats" and fmt(value) not in ("-", "0") else "")


def _setting(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_setting(v)}" for k, v in value.items()) or "none"
    if isinstance(value, (list, tuple)):
        return ", ".join(_setting(v) for v in value) or "none"
    if value is None:
        return "not set"
    return fmt(value)


def _args(args: dict[str, Any], base: dict[str, Any]) -> str:
    """The options an alternative changes from the audit's own, as `name`=value."""
    own = {**base, "local": base.get("local_recoding", True)}
    own.setdefault("max_nodes", MAX_NODES)
    own.setdefault("min_class_size", MIN_CLASS_SIZE)
    changed = {k: v for k, v in args.items() if own.get(k) != v}
    return " ".join(f"`{k}`={v:.4g}" if isinstance(v, float) else f"`{k}`={v!r}"
                    for k, v in changed.items())  # fmt: skip


#: How to keep the generalisation for new records, in each caller's language (the command
#: line's flag is written by the caller's words: cli/_flags.py).
SAVE_STEP = {
    "command line": "save it with `save_mechanism`=M.json (added to the command at the top of "
    "this report, which reproduces this audit), then privwatch apply M.json NEW.csv.",
    "python": 'save it with `result.generalisation().save("M.json")`, then release new records '
    'with `privwatch.release.Generalisation.load("M.json").apply(new)`.',
}


def _caller(result: Audit) -> Caller:
    """Who ran the audit (a Python caller without a command when nobody said)."""
    return result.caller if result.caller is not None else Caller(command="")


def next_steps(result: Audit) -> list[str]:
    """Up to three next steps: publish (when met), else the feasible alternatives, strongest
    privacy first, each with the exact options that give it, in the words of whoever ran the
    audit (:class:`privwatch.audit.Caller`: Python keywords or command-line flags)."""
    words = _caller(result).words
    return [words(step) for step in _steps(result)]


def _steps(result: Audit) -> list[str]:
    found = result.found
    if found is None:
        return [
            "Use the plug-in estimator (discrete or binned columns) to get a searched release "
            "with a held-out check, the classic measures and an attack."
        ]
    if found.method == "external":  # a release made elsewhere, judged by privwatch check
        if found.satisfied:
            return ["The checked release is met as it stands: nothing to change before publishing."]
        return [
            "Do not publish this release as it stands. privwatch audit ORIGINAL searches a "
            "release of the same records that is met at this epsilon (or says why none is); "
            "or re-release with coarser generalisation in the tool that made it and check again."
        ]
    if found.satisfied and result.route == "stream":  # no mechanism to save when streamed
        return [
            f"Publish {RELEASE_FILE}: it holds the record key and the released observed "
            f"columns only; keep {SCORES_FILE} (each record's risk, flag and advice) to "
            f"yourself. Saving the generalisation for new records needs counted records "
            f"(`save_mechanism` is refused on the {result.route} route)."
        ]
    if found.satisfied and result.route == "engine":  # saved from the mapping, applied there
        return [
            f"Publish {RELEASE_FILE}: it holds the record key and the released observed "
            f"columns only; keep {SCORES_FILE} (each record's risk, flag and advice) to "
            "yourself. Release next month's records through the same generalisation (privwatch "
            "apply releases a glob, a large file or a database table in the engine): "
            + SAVE_STEP.get(_caller(result).language, SAVE_STEP["python"])
        ]
    if found.satisfied:
        return [
            "Publish release.csv, and release next month's records through the same "
            "generalisation: " + SAVE_STEP.get(_caller(result).language, SAVE_STEP["python"])
        ]
    feasible = [a for a in found.alternatives if a["feasible"]]
    steps = [
        f"Audit again with {_args(a['args'], result.settings)} ({a['description']}): it is met."
        for a in feasible[:3]
    ]
    return steps or [
        "No setting tried is met: give coarser hierarchies (`hierarchies`), audit more "
        "records, or accept a larger epsilon; the alternatives tried are listed above."
    ]


def classic_rows(classic: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of the classic measures' table from ``leakage.json``'s ``classic`` block."""
    rel, inp = classic["release"], classic["input"]
    rows: list[dict[str, Any]] = []

    def add(group: str, name: str, r: dict[str, Any], i: dict[str, Any]) -> None:
        label, _, gloss = MEASURE_NAMES.get(name, (name, "", ""))
        rows.append(
            {
                "group": group,
                "name": label,
                "hover": GLOSSARY.get(gloss, ""),
                "release": _value(name, r["value"]),
                "input": _value(name, i["value"]),
                "threshold": f"{r['rule']} {_value(name, r['threshold'])}",
                "passes": r["passes"],
                "reference": r["reference"],
            }
        )

    for name, r in rel["table"].items():
        add("whole table", name, r, inp["table"][name])
    for attr, block in rel["sensitive"].items():
        for name, r in block["measures"].items():
            add(attr, name, r, inp["sensitive"][attr]["measures"][name])
    return rows


def attack_rows(attack: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of the attack's tables from ``leakage.json``'s ``attack`` block."""
    rows = []
    for attr, a in attack["attributes"].items():
        rows.append(
            {
                "attribute": attr,
                "targets": pct(a["success_targets"]),
                "targets_ci": pct_ci(*a["success_targets_ci"]),
                "control": pct(a["success_control"]),
                "control_ci": pct_ci(*a["success_control_ci"]),
                "baseline": pct(a["baseline_success"]),
                "risk": fmt(a["risk"], 2),
                "risk_ci": f"{fmt(a['risk_ci'][0], 2)} to {fmt(a['risk_ci'][1], 2)}",
                "threshold": fmt(a["threshold"], 2),
                "passes": a["passes"],
                "reference": a["reference"],
                "n_targets": a["n_targets"],
                "n_control": a["n_control"],
                "control_unmatched": a["control_unmatched"],
                "prior": pct(a["prior_success"]),
                "bayes": pct(a["bayes_success"]),
                "ratio": fmt(a["bayes_leakage_ratio"], 3),
                "bound": fmt(a["bayes_leakage_bound"], 3),
                "bayes_passes": a["bayes_passes"],
                "bayes_reference": a["bayes_reference"],
            }
        )
    return rows


def _measure(key: str) -> str:
    """A classic measure's name as the report's tables write it."""
    return MEASURE_NAMES.get(key, (key.replace("_", " "), "", ""))[0]


def checks_note(result: Audit) -> str | None:
    """One sentence when a met release sits beside failing classic measures or attack."""
    if not result.satisfied:
        return None
    classic = (result.leakage.get("classic") or {}).get("release")
    fails = []
    if classic:
        fails += [_measure(k) for k, v in classic["table"].items() if not v["passes"]]
        for block in classic["sensitive"].values():
            fails += [_measure(k) for k, v in block["measures"].items() if not v["passes"]]
    attack = (result.leakage.get("attack") or {}).get("attributes", {})
    fails += [f"attack on {k}" for k, v in attack.items() if not v["passes"]]
    if not fails:
        return None
    return (
        f"The release is met, yet {', '.join(sorted(set(fails)))} fail their common thresholds: "
        "lift privacy bounds how far a released cell moves any belief about the sensitive value "
        "(per value, above), while k-anonymity and the attack thresholds ask other things "
        "(class sizes, a guess's success over a baseline); a fail there is not a breach of "
        "epsilon, but it is what those measures' users will see."
    )


def _findings(result: Audit) -> dict[str, Any] | None:
    found = result.found
    if found is None:
        return None
    held = found.held_out
    n = found.n_records
    records = found.records
    weight = (
        result.risk_weight if len(result.risk_weight) == len(records) else np.ones(len(records))
    )
    flagged = records["flagged"].to_numpy(dtype=bool)
    # summed per column first (a row per flagged record or tuple), then the blank column
    # renamed on the few sums (renaming the rows' index is a Python loop over every row)
    columns = records.loc[flagged, "advice_column"].reset_index(drop=True)
    advice = (
        pd.Series(weight[flagged])
        .groupby(columns, sort=False)
        .sum()
        .rename_axis(None)
        .rename(index={"": "(no single column helps)"})
        .groupby(level=0, sort=False)
        .sum()
        .sort_values(ascending=False, kind="stable")
    )
    out: dict[str, Any] = {
        "met": found.satisfied,
        "reasons": [_caller(result).words(r) for r in found.reasons],
        "words": result.leakage["guarantee_in_words"],
        "n": f"{n:,}",
        "steps": next_steps(result),
        "alternatives": [a["description"] for a in found.alternatives],
        "per_value": [
            {
                "attribute": r.get("attribute", ""),
                "value": r["value"],
                "share": pct(r["share"]),
                "belief_max": pct(r["belief_max"]),
                "belief_min": "-" if r["belief_min"] is None else pct(r["belief_min"]),
                "protected": r["protected"],
            }
            for r in found.per_value
        ],
        "checks_note": checks_note(result),
        "held": None,
        "frontier": [
            {
                "epsilon": fmt(float(p["epsilon"]), 3),
                "info": fmt(float(p["information_nats"]), 3),
                "glob": fmt(float(p["information_global_nats"]), 3),
                "suppressed": pct(float(p["suppressed_share"])),
                "method": p["method"],
            }
            for p in found.frontier
        ],
        "advice": {str(k): round(float(v)) for k, v in advice.items()},
        "n_flagged": f"{round(float(weight[flagged].sum())):,}",
    }
    if held is not None:
        lo, hi = held.breach_probability_ci
        tolerance = float(result.settings.get("held_out_tolerance", TOLERANCE))
        out["held"] = {
            "folds": held.folds,
            "breach": pct(held.breach_probability, (hi - lo) / 2),
            "breach_ci": pct_ci(lo, hi),
            "breach_plugin": pct(held.breach_probability_plugin),
            "ok": verdict_rule((lo, hi), tolerance) == "met",
            "tolerance": pct(tolerance),
        }
    return out


#: Glossary terms, longest first: a row's label links to the first it contains.
_TERMS = sorted(GLOSSARY, key=len, reverse=True)


def _figure_rows(result: Audit) -> list[dict[str, Any]]:
    """The release method's rows of figures (:meth:`privwatch.audit.Audit.report_rows`), each
    label split around the glossary term it contains (the longest), for the report's table."""
    rows = []
    for label, value in result.report_rows():
        hit = next((m for t in _TERMS if (m := re.search(rf"\b{re.escape(t)}\b", label))), None)
        term = "" if hit is None else hit.group(0)
        before, after = (label, "") if hit is None else (label[: hit.start()], label[hit.end() :])
        number = bool(re.match(r"[-+]?\d", value))  # right-aligned, like the other tables
        rows.append({"before": before, "term": term, "after": after, "value": value,
                     "num": number})  # fmt: skip
    return rows


def _top_flagged(result: Audit, max_rows: int) -> list[dict[str, Any]]:
    """The riskiest flagged records with their observed values (in-memory route only)."""
    scores = result.scores
    if scores is None or result.data is None or not result.settings.get("report_records"):
        return []
    n = len(scores)
    flagged = scores[scores["flagged"]].sort_values("risk", ascending=False).head(max_rows)
    obs = result.settings["observed"]
    positions = flagged.index.to_numpy()  # records are numbered 0 .. n - 1
    rows = result.input_rows if len(result.input_rows) == n else np.arange(n)
    values = result.data[obs].to_numpy()[positions]
    return [
        {"record": f"{int(rows[p]):,}", "risk": fmt(float(r), 3), "values": [str(v) for v in vals]}
        for p, r, vals in zip(positions, flagged["risk"].to_numpy(), values, strict=True)
    ]


def render_report(result: Audit, images: Path, max_rows: int = 25) -> str:
    """HTML of the report; ``images`` is the folder holding tradeoff.png and lift.png."""
    template = jinja2.Template(
        resources.files("privwatch.report").joinpath("templates/report.html.j2").read_text(),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    n = int(result.summary["n_records"])
    before = result.leakage["before"] or {}
    after = result.leakage["after"]
    classic, attack = result.leakage["classic"], result.leakage["attack"]
    leak_rows = [
        {
            "name": MEASURE_NAMES.get(k, (k, "", ""))[0],
            "hover": GLOSSARY.get(MEASURE_NAMES.get(k, ("", "", ""))[2], ""),
            "before": _value(k, before.get(k)),
            "after": _value(k, after.get(k)) if isinstance(after, dict) and k in after else "-",
        }
        for k in before
        if k not in ("base", "alpha")
    ]
    wd = result.watchdog
    g = wd.guarantee_.to_dict() if wd is not None else {}
    settings = {
        SETTING_NAMES.get(k, k.replace("_", " ")): _setting(v) for k, v in result.settings.items()
    }
    counts = risk_counts(result.risk, result.risk_weight)
    caller = _caller(result)
    html: str = template.render(
        findings=_findings(result),
        figure_rows=_figure_rows(result),
        method_title="" if result.release_method is None else result.release_method.title,
        checked=result.found is not None and result.found.method == "external",
        summary=result.summary,
        n=n,
        n_fmt=f"{n:,}",
        counts={k: f"{v:,}" for k, v in counts.items()},
        settings=settings,
        stamp=result.stamp,
        warnings=[{**w, "message": caller.words(w["message"])} for w in result.warnings],
        command=caller.command,
        epsilon=fmt(result.epsilon, 3),
        epsilon_reason=caller.words(result.epsilon_reason),
        watchdog_level=fmt(float(g.get("effective_epsilon", math.nan)), 3),
        watchdog_delta=pct(float(g.get("breach_probability", 0.0))) if g else "-",
        guarantee_words=wd.guarantee_.explain() if wd else result.leakage["guarantee_in_words"],
        leak_rows=leak_rows,
        classic=None if classic is None else classic_rows(classic),
        classic_info=classic,
        attack=None if attack is None else attack_rows(attack),
        reid=reid_view(result.leakage.get("reidentification")),
        attack_info=attack,
        flagged=_top_flagged(result, max_rows),
        report_records=bool(result.settings.get("report_records")),
        n_flagged=f"{int(result.summary.get('n_flagged', 0)):,}",
        observed=result.settings["observed"],
        glossary=GLOSSARY,
        tradeoff_png=_image(images / "tradeoff.png"),
        lift_png=_image(images / "lift.png"),
    )
    return html
