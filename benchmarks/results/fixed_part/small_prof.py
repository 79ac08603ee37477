import sys, time, os, warnings, cProfile, pstats, io
warnings.simplefilter("ignore")
sys.path.insert(0, "/work/wt-perf/benchmarks")
from bench_census_audit import census_like
import privwatch as pw
df = census_like(int(sys.argv[1]))
pr = cProfile.Profile(time.process_time)
c0 = time.process_time(); pr.enable()
r = pw.audit.run(source=df, sensitive="race", epsilon=float(sys.argv[2]))
pr.disable()
print(pw.__file__, "cpu", round(time.process_time() - c0, 2), r.leakage["status"], (r.leakage.get("held_out") or {}).get("breach_probability"), os.getloadavg())
buf = io.StringIO(); pstats.Stats(pr, stream=buf).sort_stats("cumulative").print_stats(45); print(buf.getvalue()[-9000:]); buf = io.StringIO(); pstats.Stats(pr, stream=buf).sort_stats("tottime").print_stats(20); print(buf.getvalue()[-4000:])
