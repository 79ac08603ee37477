"""The curve's leakage reports against an extended-precision evaluation (np.longdouble, 64-bit
significand on x86) of the same releases' measures: "HEAD" is leakage_report of each release on
its own (the per-threshold computation before the one pass; leakage_report is unchanged), "new"
the one pass (tradeoff's release_* columns). Run with PYTHONPATH=src:

    python exact.py JOINT.npy [comma-separated grid; default: propose_epsilon's]"""
import sys, numpy as np
from privwatch.watchdog import tradeoff
from privwatch.watchdog._partition import _symbol_risk
from privwatch.watchdog._table import release_joint
from privwatch.measures import leakage_report
L = np.longdouble

def ref(arr, keep, a=2.0):
    A = arr.astype(L)
    cols = [A[:, keep]] + ([A[:, ~keep].sum(axis=1, keepdims=True)] if (~keep).any() else [])
    q = np.hstack(cols); q = q / q.sum()
    ps, px = q.sum(axis=1), q.sum(axis=0)
    rows, live = ps > 0, px > 0
    q = q[rows][:, live]; ps = ps[rows]; px = px[live]
    lift = q / ps[:, None] / px[None, :]
    pos = lift > 0
    out = {}
    out["mutual_information"] = np.sum(q[pos] * np.log(lift[pos]))
    cond = q / ps[:, None]
    out["maximal_leakage"] = np.log(cond.max(axis=0).sum())
    out["sibson_mi"] = a / (a - 1) * np.log(np.sum(np.sum(ps[:, None] * cond**a, axis=0) ** (1 / a)))
    out["arimoto_mi"] = a / (a - 1) * np.log(np.sum(np.sum(q**a, axis=0) ** (1 / a)) / np.sum(ps**a) ** (1 / a))
    f = {"chi2": lambda t: (t - 1) ** 2, "tv": lambda t: abs(t - 1) / 2, "hellinger": lambda t: (np.sqrt(t) - 1) ** 2}
    for k, g in f.items():
        out[k + "_information"] = np.sum(ps[:, None] * px[None, :] * g(lift))
    out["bayes_leakage"] = np.log(q.max(axis=0).sum() / ps.max())
    out["guessing_probability"] = q.max(axis=0).sum()
    out["bayes_error"] = 1 - q.max(axis=0).sum()
    out["lift_epsilon"] = max(np.log(lift.max()), -np.log(lift.min())) if lift.min() > 0 else np.inf
    return out


j = np.load(sys.argv[1]); grid = [float(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else None
if grid is None:
    from privwatch.audit._route_engine import propose_epsilon
    grid = propose_epsilon(j)[2]["threshold"].tolist()
risk = _symbol_risk(j)
fr = tradeoff(j, grid).to_frame()
stats = {}
for i, eps in enumerate(grid):
    keep = risk <= eps
    r = ref(j, keep); h = leakage_report(release_joint(j, keep)).to_dict()
    for k, v in r.items():
        v = float(v)
        if not np.isfinite(v): continue
        n, hd = float(fr["release_" + k].iloc[i]), float(h[k])
        s = stats.setdefault(k, [0, 0, 0, 0, 0])
        s[0] = max(s[0], abs(hd - v)); s[1] = max(s[1], abs(n - v)); s[2] = max(s[2], abs(n - hd))
        if abs(v) > 0:
            s[3] = max(s[3], abs(hd - v) / abs(v)); s[4] = max(s[4], abs(n - v) / abs(v))
print(f"{sys.argv[1]}: {len(grid)} thresholds; max over them (abs / rel error against longdouble)")
print(f"{'measure':24s} {'HEAD abs':>10s} {'new abs':>10s} {'new-HEAD':>10s} {'HEAD rel':>10s} {'new rel':>10s}")
for k, s in stats.items():
    print(f"{k:24s} " + " ".join(f"{x:10.1e}" for x in s))
