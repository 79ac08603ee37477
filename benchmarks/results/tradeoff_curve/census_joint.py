"""The in-memory route's plug-in joint of bench_census_audit.census_like(30,000) (sensitive race)
saved to /tmp/cv/census_joint.npy; prints the audit's grid (for exact.py). Run from the repo root."""
import sys, numpy as np
sys.path.insert(0, "benchmarks")
from bench_census_audit import census_like
from privwatch.audit._steps import estimate_log_lift
frame = census_like(30_000)
cols = [c for c in frame.columns if c != "race"]
probe, risk, grid = estimate_log_lift(frame, "race", cols, None, None, 0)
np.save("/tmp/cv/census_joint.npy", probe.joint_.p); print(",".join(str(g) for g in grid))
