"""The real-data release (issue #15): information kept on the raw COMPAS file against the
independent brute-force reference (``../shared/tools/release-check``), and audit wall times.

Run: python benchmarks/bench_release.py [--skip-big]

1. Raw COMPAS (7,214 records, six race values), the shared ARX hierarchies, --max-suppressed 0.05,
   epsilon 1 and 2, two- and one-sided: privwatch's global recoding, its local recoding, and
   release-check's brute force (ignoring the suppressed cell: an upper reference, not a valid
   release; honouring it: a valid greedy release), release-check's own verification of the
   release privwatch wrote, and the wall time of the whole ``privwatch audit`` command.
2. ``privwatch audit`` on 1,000,000 rows with 6 categorical observed columns (bench_audit's file)
   at epsilon 1: wall time and peak memory of the child process.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import write
from bench_audit import big_csv

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
RAW = SHARED / "data" / "compas-scores-two-years.csv"
HIER = SHARED / "data" / "hierarchies" / "compas"
CHECK = SHARED / "tools" / "release-check"
OBSERVED = ["sex", "age_cat", "c_charge_degree", "priors_count", "decile_score"]
PRIVWATCH = [sys.executable, "-m", "privwatch"]


def timed(args: list[str]) -> tuple[subprocess.CompletedProcess[str], float, float]:
    t0 = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    return proc, time.perf_counter() - t0, peak


def compas_case(epsilon: float, disclosure: str, tmp: Path) -> dict[str, object]:
    out = tmp / f"compas-{epsilon}-{disclosure}"
    args = [
        *PRIVWATCH,
        "audit",
        str(RAW),
        "--sensitive",
        "race",
        "--observed",
        ",".join(OBSERVED),
        "--epsilon",
        str(epsilon),
        "--disclosure",
        disclosure,
        *[a for c in OBSERVED for a in ("--hierarchy", f"{c}={HIER / (c + '.csv')}")],
        "--out",
        str(out),
    ]
    proc, seconds, _ = timed(args)
    if proc.returncode not in (0, 3):
        raise SystemExit(proc.stderr)
    leak = json.loads((out / "leakage.json").read_text())
    check = subprocess.run(
        [
            sys.executable,
            str(CHECK),
            str(RAW),
            "--sensitive",
            "race",
            "--hierarchies",
            str(HIER),
            "--epsilon",
            str(epsilon),
            "--disclosure",
            disclosure,
            "--release",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    nums = [float(x) for x in re.findall(r"best full-domain release .*?: ([0-9.]+) nats", check)]
    verified = re.search(r"release: ([0-9.]+) nats kept, worst .*? ([0-9.inf]+) \(epsilon", check)
    return {
        "epsilon": epsilon,
        "disclosure": disclosure,
        "privwatch_global_nats": leak["release"]["information_global_nats"],
        "privwatch_local_nats": leak["release"]["information_local_nats"],
        "privwatch_released_nats": leak["release"]["entropy_nats"],
        "suppressed_records": leak["release"]["suppressed_records"],
        "reference_ignoring_suppressed_cell": nums[0] if nums else None,
        "reference_honouring_suppressed_cell": nums[1] if len(nums) > 1 else None,
        "release_check_verified_nats": float(verified.group(1)) if verified else None,
        "release_check_worst_log_lift": float(verified.group(2)) if verified else None,
        "held_out_breach": leak["held_out"]["breach_probability"],
        "held_out_breach_ci": leak["held_out"]["breach_probability_ci"],
        "status": leak["status"],
        "audit_seconds": seconds,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-big", action="store_true")
    a = ap.parse_args()
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cases = [compas_case(e, d, Path(tmp)) for e in (1.0, 2.0) for d in ("both", "positive")]
        results["compas_raw"] = cases
        for c in cases:
            print(json.dumps(c))
        if not a.skip_big:
            csv = Path(tmp) / "big.csv"
            big_csv(csv)
            proc, seconds, peak = timed(
                [
                    *PRIVWATCH,
                    "audit",
                    str(csv),
                    "--sensitive",
                    "group",
                    "--epsilon",
                    "1",
                    "--out",
                    f"{tmp}/big",
                ]
            )
            if proc.returncode not in (0, 3):
                raise SystemExit(proc.stderr)
            leak = json.loads((Path(tmp) / "big" / "leakage.json").read_text())
            results["csv_1M_rows_6_observed"] = {
                "seconds": seconds,
                "peak_rss_gib": peak,
                "status": leak["status"],
                "information_nats": leak["release"]["entropy_nats"],
                "information_global_nats": leak["release"]["information_global_nats"],
            }
            print(json.dumps(results["csv_1M_rows_6_observed"]))
    print(f"written to {write('release', results)}")


if __name__ == "__main__":
    main()
