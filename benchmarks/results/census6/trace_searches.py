import sys, time
sys.path.insert(0, 'benchmarks')
from bench_census_audit import census_like
import privwatch as pw
from privwatch.release.search import _frontier, _margin, _one_search
orig = _frontier.search_to_pass
def wrapped(space, opts, *a):
    t = time.perf_counter(); r = orig(space, opts, *a)
    print(f"search_to_pass eps={opts.epsilon} disc={opts.disclosure} sup={opts.max_suppressed} conf={opts.confidence} -> conf={r.options.confidence} info={r.information_nats:.3f} {time.perf_counter()-t:.3f}s", flush=True)
    return r
_frontier.search_to_pass = wrapped
oj = _frontier.Releases._judged
def j(self, found, eps):
    t = time.perf_counter(); r = oj(self, found, eps)
    print(f"  judged at {eps} searched {found.options.epsilon} {time.perf_counter()-t:.3f}s reasons={len(r.reasons)}", flush=True)
    return r
_frontier.Releases._judged = j
ofa = _frontier.Releases._fails_at
def fa(self, found, eps):
    t = time.perf_counter(); r = ofa(self, found, eps)
    print(f"  fails_at {eps} searched {found.options.epsilon} {time.perf_counter()-t:.3f}s -> {r}", flush=True)
    return r
_frontier.Releases._fails_at = fa
df = census_like(30000)
t=time.perf_counter()
pw.audit.run(source=df, sensitive="race", epsilon=float(sys.argv[1]))
print("total", time.perf_counter()-t)
