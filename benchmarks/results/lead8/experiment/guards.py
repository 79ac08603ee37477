"""Experiment (BENCHMARKS.md, #41 item 6, eighth session): the watchdog's held-out upper end
also under a G with no mass inside the box (the gap G: per size stratum, the non-parametric MLE
by EM of the counts with every tuple outside its box), mixed with the fitted G:
G_lambda = (1 - lambda) G_fit + lambda G_gap, judged on the kept tuples (their Beta(records
breaking, others) over all records).

Run from the repository root: python benchmarks/results/lead8/experiment/guards.py SETTING
watchdog SEEDS GUARD, GUARD one of
  mixture  lambda the largest with log-likelihood deficit <= C over all tuples of the value
  stratum  the same per size stratum
  binary   lambda = 1 where the deficit at lambda = 1 is <= C, else 0 (what the product does)
C = chi2_1(0.95) / 2. Where no lambda is positive the upper end is left as it was. Run it on the
seventh stop's code (PYTHONPATH=<git archive 1585dfd>/src): later code's held-out figures
already include the product's guard.

The logs beside it: mixture_*, stratum_mixture_* and binary_* (gross, planted and compas were
made by the three variants this script merges, with the same arithmetic; binary_rare520.log by
this script)."""
import sys, json, numpy as np
sys.path.insert(0, 'benchmarks')
from bench_calibration_merged import *
from privwatch.release.heldout._model import HeldOutModel
from privwatch.release.heldout import _prior as eb
from scipy.special import expit
C = 1.92
def lam_bound(model, vm, lo, hi, keep, rng, method_tol):
    f = vm.fitted
    k = model.x[:, vm.column]; n = model.n
    seen = np.flatnonzero(n > 0)
    ll = eb.grid_log_likelihood(k[seen], n[seen], f.eta[seen])
    ll -= ll.max(1, keepdims=True); L = np.exp(ll)
    strat = eb.stratum_of(n[seen])
    G = np.stack([np.exp(eb.log_prior(f.alpha[1 + s])) for s in range(4)])[strat]  # rows x grid
    theta = expit(f.eta[seen][:, None] + eb.GRID[None, :])
    out = (theta < lo) | (theta > hi)
    m = (L * G).sum(1); mo_hat = (L * G * out).sum(1)
    # gap G per stratum: argmax_G sum_x log L_x.(G * out_x) (EM), then the mixture's marginal
    Ggap = np.zeros_like(G)
    for s in range(4):
        sel = strat == s
        if not sel.any(): continue
        Ls = L[sel] * out[sel]
        g = np.full(len(eb.GRID), 1 / len(eb.GRID))
        for _ in range(500):
            mm = np.maximum(Ls @ g, 1e-300)
            g = g * (Ls.T @ (1 / mm)) / sel.sum()
            g /= g.sum()
        Ggap[sel] = g
    mprime = (L * Ggap).sum(1)
    mo_gap = (L * Ggap * out).sum(1)
    ratio = mprime / m
    lam = np.zeros(len(seen))
    d1s = []
    groups = [strat == s_ for s_ in range(4)] if GUARD == "stratum" else [np.ones(len(seen), bool)]
    for sel in groups:
        if not sel.any():
            continue
        r_ = ratio[sel]
        def deficit(l): return -np.log((1 - l) + l * r_).sum()
        d1s.append(deficit(1.0))
        if deficit(1.0) <= C:
            l_ = 1.0
        elif GUARD == "binary":
            l_ = 0.0
        else:  # the largest lambda within C
            a, b = 0.0, 1.0
            for _ in range(50):
                mid = (a + b) / 2
                a, b = (mid, b) if deficit(mid) <= C else (a, mid)
            l_ = a
        lam[sel] = l_
    pout = ((1 - lam) * mo_hat + lam * mo_gap) / ((1 - lam) * m + lam * mprime)
    pout_hat = mo_hat / m
    full = np.zeros(len(n)); full[seen] = pout
    kept = np.flatnonzero(keep)
    P = full[kept]; rec = n[kept]; total = n.sum()
    I = rng.random((2000, len(kept))) < P
    a = (I * rec).sum(1); b = total - a
    share = np.where(a > 0, rng.beta(np.maximum(a, 1e-9), b), 0.0)
    return float(lam.max()), max(d1s), float(share.mean()), float(np.quantile(share, 0.975))
setting, method, seeds, GUARD = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
pmf = PMFS[setting]()
rows = []
for seed in range(seeds):
    df = pmf.sample(5000, np.random.default_rng(10_000 + seed))
    units = TupleUnits.count(df, ["s"], pmf.columns, 5, seed)
    delta = DELTA if method == "relaxed" else None
    found = merge_to_pass(units, pmf.epsilon, "both", tolerance=DELTA if delta else TOLERANCE, delta=delta, rng=seed)
    t = truth(pmf, units, found.keep)
    held = found.held
    if held is None:
        rows.append(dict(seed=seed, truth=t, kept=False)); print(seed, "nothing kept"); continue
    model = HeldOutModel._cache[-1][2]
    from privwatch.release.heldout._evaluation import values_of
    box = found.box if hasattr(found, "box") else None
    prior = model.prior_counts / model.prior_counts.sum()
    res = []
    for c, vm in model._values.items():
        p = vm.prior; e = pmf.epsilon
        lo, hi = np.exp(-e) * p, np.exp(e) * p
        if prior.shape[0] == 2:
            lo, hi = max(lo, 1 - np.exp(e) * (1 - p)), min(hi, 1 - np.exp(-e) * (1 - p))
        res.append(lam_bound(model, vm, lo, hi, found.keep, np.random.default_rng(seed), TOLERANCE))
    up_l = max(r[3] for r in res)
    lo_, up = held.breach_probability_ci
    tol = DELTA if delta else TOLERANCE
    new_up = max(up, up_l) if max(r[0] for r in res) > 0 else up  # no G adopted: unchanged
    row = dict(seed=seed, truth=t, est=held.breach_probability, ci=[lo_, up], lam=[r[0] for r in res], d1=[r[1] for r in res],
               est_l=max(r[2] for r in res), up_l=up_l, cov_old=bool(lo_ <= t + 1e-12 <= up + 2e-12), cov_new=bool(lo_ <= t + 1e-12 <= new_up + 2e-12),
               met_old=bool(found.satisfied), met_new=bool(found.satisfied and new_up <= tol), kept=True)
    rows.append(row)
    print(seed, f"truth {t:.4f} ci [{lo_:.4f},{up:.4f}] lam {np.round(row['lam'],2)} d1 {np.round(row['d1'],1)} est_l {row['est_l']:.4f} up_l {up_l:.4f} cov {row['cov_old']}->{row['cov_new']} met {row['met_old']}->{row['met_new']}", flush=True)
k = [r for r in rows if r['kept']]
print(setting, method, "cov old", np.mean([r['cov_old'] for r in k]), "new", np.mean([r['cov_new'] for r in k]),
      "MET old", np.mean([r['met_old'] for r in k]), "new", np.mean([r['met_new'] for r in k]),
      "truth0 MET old", [r['met_old'] for r in k if r['truth'] == 0].count(True), "new", [r['met_new'] for r in k if r['truth'] == 0].count(True), "of", sum(r['truth'] == 0 for r in k))
json.dump(rows, open(f"/tmp/guard_{GUARD}_{setting}_{method}_{seeds}.json", "w"))
