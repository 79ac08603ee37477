"""The one-pass curve against the per-threshold computation (HEAD's helpers and leakage_report of
each release), on saved joints: every watchdog column that is not bit-identical, and per report
measure the largest relative difference (_maxrel_) and the points beyond 1e-12 relative.
Run: PYTHONPATH=src python compare_head.py JOINT.npy ..."""
import sys, time, math, numpy as np
from privwatch.watchdog import tradeoff
from privwatch.watchdog._table import release_joint
from privwatch.watchdog._partition import _symbol_risk
from privwatch.watchdog._mechanism import _utility, _effective_level
from privwatch.watchdog._bounds import _gamma
from privwatch.watchdog._relaxed import _breach
from privwatch.measures import leakage_report

def head(arr, grid, alpha=2.0):
    risk = _symbol_risk(arr); p_x = arr.sum(axis=0); rows=[]; reps=[]
    for eps in grid:
        keep = risk <= eps
        u = _utility(p_x, keep); r, e = _effective_level(arr, keep, risk)
        rows.append((eps, u.utility_mi, u.nmil, _gamma(p_x, keep, eps), e, r, u.flagged_probability, _breach(arr, keep, eps)))
        reps.append(leakage_report(release_joint(arr, keep), alpha=alpha))
    return rows, reps

def compare(arr, grid, alpha=2.0, rtol=1e-12, atol=0.0, verbose=False):
    c0=time.process_time(); c = tradeoff(arr, grid, alpha=alpha); t_new=time.process_time()-c0
    c0=time.process_time(); rows, reps = head(arr, grid, alpha); t_head=time.process_time()-c0
    fr = c.to_frame()
    worst = {}
    names = ["threshold","utility_mi","nmil","gamma_bound","effective_epsilon","randomized_epsilon","flagged_probability","breach_probability"]
    for i,(row, rep) in enumerate(zip(rows, reps)):
        for j,n in enumerate(names):
            a,b = fr[n].iloc[i], row[j]
            if not (a == b or (np.isnan(a) and np.isnan(b))):
                worst.setdefault(n, []).append((i, a, b))
        for k,v in rep.to_dict().items():
            if k in ("base","alpha"): continue
            a = fr["release_"+k].iloc[i]
            if a == v: continue
            if math.isinf(a) or math.isinf(v) or math.isnan(a) or math.isnan(v):
                worst.setdefault(k, []).append((i,a,v)); continue
            d = abs(a-v); rel = d/max(abs(a),abs(v))
            if d > rtol*max(abs(a),abs(v)) + atol:
                worst.setdefault(k, []).append((i,a,v,rel))
            m = worst.setdefault("_maxrel_"+k, [0.0]); m[0] = max(m[0], rel)
    return t_new, t_head, worst

if __name__ == "__main__":
    from privwatch.audit._route_engine import propose_epsilon
    for f in sys.argv[1:]:
        j = np.load(f)
        eps, why, curve = propose_epsilon(j)
        grid = curve["threshold"].to_numpy()
        t_new, t_head, worst = compare(j, grid)
        print(f, "eps", eps, "new cpu", round(t_new,3), "head cpu", round(t_head,3))
        for k,v in worst.items(): print("  ", k, v[:3])
