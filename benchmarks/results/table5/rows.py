"""The count-table readers' cumulative CPU seconds in cProfile dumps (base and new names)."""
import pstats
import sys

ROWS = [
    ("decide", [("_route_engine.py", "decide")]),
    ("count table build (count_space)", [("_counting.py", "count_space")]),
    ("joint codes (_codes / table_codes, released_joint included)",
     [("_route_engine.py", "_codes"), ("_engine_codes.py", "table_codes")]),
    ("re-identification findings", [("_route_engine.py", "_reidentification")]),
]
for path in sys.argv[1:]:
    st = pstats.Stats(path).stats
    out = []
    for label, keys in ROWS:
        t = sum(v[3] for k, v in st.items() for f, fn in keys if k[0].endswith(f) and k[2] == fn)
        out.append(f"{label}: {t:.2f}")
    print(path, " | ".join(out))
