import sys, time, cProfile, pstats
sys.path.insert(0, "/work/main/benchmarks")
from bench_fixed_part import synth_table, OBS, FOLDS
from privwatch.audit import AuditSpec
from privwatch.audit._route_engine import EngineRoute, _Counted
counts = synth_table(int(sys.argv[1]))
spec = AuditSpec(sensitive=["s"], observed=OBS, epsilon=float(sys.argv[2]), folds=FOLDS, records=False)
route = EngineRoute("duckdb", "bench")
holes = counts.iloc[:0][[*OBS, "s"]]
counted = _Counted(counts, "duckdb", "bench", ["s"], list(OBS), spec, {}, holes)
pr = cProfile.Profile()
t0=time.perf_counter()
pr.enable()
d = route.decide(spec, counted, lambda m: print(m, round(time.perf_counter()-t0,2), flush=True))
pr.disable()
print("decide wall", round(time.perf_counter()-t0,2))
st=pstats.Stats(pr); st.sort_stats("cumulative").print_stats(45); st.print_callees("gap_upper"); st.print_callees("_model.py.*gap")
