import sys, json, time
sys.path.insert(0, 'benchmarks')
from bench_census_audit import census_like
import privwatch as pw
df = census_like(30000)
out = {}
for eps in (1.0, 0.3):
    t0 = time.process_time()
    r = pw.audit.run(source=df, sensitive="race", epsilon=eps)
    out[str(eps)] = (time.process_time() - t0)
    json.dump(r.leakage, open(f"{sys.argv[1]}_{eps}.json", "w"), sort_keys=True, default=str)
print(pw.__file__, out, out['0.3']/out['1.0'])
