"""Classic disclosure measures and the inference attack on a 30,000-row, 10-column census-like
table: privwatch against pycanon 1.3.6 and anonymeter 1.1.0 (each in its own venv under
.ref-venvs/, created on first use), measured in the same run.

Run: python benchmarks/bench_classic.py
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from _timing import best_of, write
from tests.release._reference_venvs import (
    ANONYMETER,
    PYCANON,
    census_like,
    frame_payload,
    generalise,
    reference_python,
    run_json,
)

from privwatch.release import classic_report, inference_attack

N = 30_000
QIS = ["age", "sex", "race", "education", "marital"]
SENSITIVE = ["occupation", "hours"]  # one categorical, one numeric (ordered EMD)


def main() -> None:
    table = generalise(census_like(N, np.random.default_rng(0)))
    assert table.shape == (N, 10)

    # classic measures
    ours_s = best_of(lambda: classic_report(table, QIS, SENSITIVE), repeat=5)
    report = classic_report(table, QIS, SENSITIVE)
    pycanon = reference_python("pycanon")
    t0 = time.perf_counter()
    theirs = run_json(pycanon, PYCANON, {"data": frame_payload(table), "qi": QIS, "sa": SENSITIVE})
    pycanon_wall = time.perf_counter() - t0
    pycanon_s = sum(sum(v["seconds"].values()) for v in theirs.values())
    per_measure = {
        s: {
            name: {
                "pycanon_s": sec,
                "pycanon": theirs[s]["values"][name],
                "privwatch": report.sensitive[s].get(
                    name, report.table.get(name, report.sensitive[s]["recursive_cl_diversity"])
                ),
            }
            for name, sec in theirs[s]["seconds"].items()
        }
        for s in SENSITIVE
    }

    # inference attack: 28,000 released, 2,000 of them attacked, 2,000 held out as control
    released = table.iloc[:28_000].reset_index(drop=True)
    control = table.iloc[28_000:].reset_index(drop=True)
    targets = released.sample(2_000, random_state=0).reset_index(drop=True)
    secret = "occupation"
    attack_s = best_of(
        lambda: inference_attack(released, targets, control, QIS, secret, rng=0), repeat=5
    )
    ours_attack = inference_attack(released, targets, control, QIS, secret, rng=0)
    anonymeter = reference_python("anonymeter")
    job = {
        "ori": frame_payload(targets),
        "syn": frame_payload(released),
        "control": frame_payload(control),
        "aux": QIS,
        "secret": secret,
    }
    knn = run_json(anonymeter, ANONYMETER, {**job, "model": "knn"}, timeout=3600)
    majority = run_json(anonymeter, ANONYMETER, {**job, "model": "majority"})

    payload = {
        "rows": N,
        "columns": table.shape[1],
        "quasi_identifiers": QIS,
        "sensitive": SENSITIVE,
        "n_classes": report.n_classes,
        "classic_privwatch_s": ours_s,
        "classic_pycanon_s": pycanon_s,
        "classic_pycanon_wall_s": pycanon_wall,
        "classic_ratio": pycanon_s / ours_s,
        "per_measure": per_measure,
        "attack_privwatch_s": attack_s,
        "attack_anonymeter_knn_s": knn["seconds"],
        "attack_anonymeter_same_attacker_s": majority["seconds"],
        "attack_ratio_knn": knn["seconds"] / attack_s,
        "risk_privwatch": [ours_attack.risk, *ours_attack.risk_ci],
        "risk_anonymeter_same_attacker": [majority["risk"], *majority["risk_ci"]],
        "risk_anonymeter_knn": [knn["risk"], *knn["risk_ci"]],
        "success_targets_privwatch": ours_attack.success_targets,
        "success_control_privwatch": ours_attack.success_control,
    }
    out = write("classic", payload)
    for key, value in payload.items():
        if key != "per_measure":
            print(f"{key}: {value}")
    for s, rows in per_measure.items():
        for name, row in rows.items():
            same = math.isclose(row["pycanon"], row["privwatch"], rel_tol=1e-9) or (
                math.isnan(row["pycanon"]) and math.isinf(row["privwatch"])
            )
            print(f"  {s:10s} {name:24s} {row['pycanon_s']:7.2f} s  pycanon {row['pycanon']:.6g}"
                  f"  privwatch {row['privwatch']:.6g}{'' if same else '  (differs)'}")  # fmt: skip
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
