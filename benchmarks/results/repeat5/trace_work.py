"""Which searches and held-out checks an audit makes, with their CPU time, and whether two checks
(different plans) have the same cells (the same estimate_breach inputs): issue #42 item 3, fifth
pass. Run from the repository root: PYTHONPATH=src python trace_work.py census EPS
(or: fixed ROWS EPS, the synthesised folded table of bench_fixed_part.py)."""
import hashlib, sys, time, traceback, collections
import numpy as np
sys.path.insert(0, "benchmarks")
from privwatch.release.search import _one_search as os_, _margin as mg, _held_out as ho
log = []
def _where():
    st = [f.name for f in traceback.extract_stack()]
    return "alt" if "suggest" in st else ("frontier" if "frontier_points" in st else "release")
if hasattr(ho, "HeldOutCheck"):  # the checks in two steps: estimate, then figures
    init, figures = ho.HeldOutCheck.__init__, ho.HeldOutCheck.figures
    def check_init(self, space, table, fit, box, **kw):
        t = time.process_time()
        init(self, space, table, fit, box, **kw)
        self._box = box
        log.append(("est", _where(), box.epsilon, box.disclosure, f"estimate {self.estimate:.3g}",
                    time.process_time() - t))
    def check_figures(self):
        t = time.process_time()
        out = figures(self)
        log.append(("check", _where(), self._box.epsilon, self._box.disclosure,
                    f"ci {out.breach_probability_ci[1]:.3g}", time.process_time() - t))
        return out
    ho.HeldOutCheck.__init__, ho.HeldOutCheck.figures = check_init, check_figures
else:
    orig_check = ho.estimate_breach
    def check(table, box, folds, release, plugin, **kw):
        cell_of, n_cells, star = release
        d = hashlib.blake2b(cell_of.tobytes(), digest_size=8).hexdigest() + f"/{n_cells}/{star}"
        t = time.process_time()
        out = orig_check(table, box, folds, release, plugin, **kw)
        log.append(("check", _where(), box.epsilon, box.disclosure, d, time.process_time() - t))
        return out
    ho.estimate_breach = check
orig_search = os_.Fitter._search
def search(self, counts, digest):
    st = [f.name for f in traceback.extract_stack()]
    where = "alt" if "suggest" in st else ("frontier" if "frontier_points" in st else "release")
    t = time.process_time()
    out = orig_search(self, counts, digest)
    o = self.options
    log.append(("search", where, o.epsilon, o.disclosure, f"sup={o.max_suppressed} conf={o.confidence}",
                time.process_time() - t))
    return out
os_.Fitter._search = search
kind, a, eps = sys.argv[1], sys.argv[2], float(sys.argv[3])
t0 = time.process_time()
if kind == "census":
    from bench_census_audit import census_like
    import privwatch as pw
    r = pw.audit.run(source=census_like(int(a)), sensitive="race", epsilon=eps)
    status = r.leakage["status"]
else:
    import bench_fixed_part as bfp
    counts = bfp.synth_table(int(float(a)))
    t0 = time.process_time()
    status = bfp.decide_once(counts, eps, 0)["status"]
total = time.process_time() - t0
print("status", status, "cpu", round(total, 1))
for e in log:
    print(f"{e[0]:6s} {e[1]:8s} eps={e[2]:<6g} {e[3]:8s} {e[4]:32s} {e[5]:6.2f}")
by = collections.defaultdict(float); cnt = collections.Counter()
for e in log:
    by[(e[0], e[1])] += e[5]; cnt[(e[0], e[1])] += 1
for k in sorted(by): print(k, cnt[k], round(by[k], 2))
cells = collections.Counter((e[2], e[3], e[4]) for e in log if e[0] == "check" and "/" in e[4])
print("checks with equal cells and box:", sum(v - 1 for v in cells.values()))
