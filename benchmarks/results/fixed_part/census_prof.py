import sys, time, cProfile, pstats, io, os, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, "/work/wt-perf/benchmarks")
from bench_census_audit import census_like
import privwatch as pw
df = census_like(30000)
top = int(os.environ.get("TOP", "0"))
for eps in [float(e) for e in sys.argv[1:]]:
    pr = cProfile.Profile(time.process_time) if top else None
    c0 = time.process_time(); t0 = time.perf_counter()
    if pr: pr.enable()
    r = pw.audit.run(source=df, sensitive="race", epsilon=eps)
    if pr: pr.disable()
    print("eps", eps, "wall", round(time.perf_counter() - t0, 2), "cpu", round(time.process_time() - c0, 2), r.leakage["status"], "held", r.leakage["held_out"]["breach_probability"] if r.leakage.get("held_out") else None, "info", r.found.information_nats if r.found else None, "load", os.getloadavg(), flush=True)
    if pr:
        for key in ("cumulative", "tottime"):
            buf = io.StringIO(); pstats.Stats(pr, stream=buf).sort_stats(key).print_stats(top); print(buf.getvalue()[:9000])
