"""decide() of bench_fixed_part's 10^8 table under a CPU-clock cProfile: the time outside
search_release, by reader. Usage: PYTHONPATH=SRC python outside.py TABLE.pkl EPSILON"""
import cProfile, pickle, pstats, sys, time
from privwatch.audit import AuditSpec
from privwatch.audit._route_engine import EngineRoute, _Counted
OBS = [f"x{i}" for i in range(1, 7)]
counts = pickle.load(open(sys.argv[1], "rb"))
spec = AuditSpec(sensitive=["s"], observed=OBS, epsilon=float(sys.argv[2]), folds=5, records=False)
counted = _Counted(counts, "duckdb", "bench", ["s"], OBS, spec, {}, counts.iloc[:0][[*OBS, "s"]])
prof = cProfile.Profile(time.process_time)
prof.enable()
EngineRoute("duckdb", "bench").decide(spec, counted, lambda m: None)
prof.disable()
st = pstats.Stats(prof).stats
def cum(file_part, name):
    return sum(v[3] for k, v in st.items() if k[0].endswith(file_part) and k[2] == name)
d, s = cum("audit/_route_engine.py", "decide"), cum("audit/_steps.py", "search_release")
rows = {"decide": d, "search_release": s, "outside": d - s,
        "count table codes (table_codes in decide)": cum("audit/_route_engine.py", "decide") and sum(v[3] for k, v in st.items() if k[2] == "table_codes" and any(c[2] == "decide" for c in v[4])),
        "leakage (before/after, released joint)": cum("audit/_method_search.py", "leakage"),
        "propose_epsilon": cum("audit/_route_engine.py", "propose_epsilon"),
        "re-identification": cum("audit/_route_engine.py", "_reidentification")}
print(" | ".join(f"{k} {v:.2f}" for k, v in rows.items()))
