"""One decide on a pickled folded table; prints JSON (cpu, wall, status, information, held_out, frontier)."""
import json, os, pickle, sys, time
sys.path.insert(0, "benchmarks")
table, eps, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
prof = int(sys.argv[4]) if len(sys.argv) > 4 else 0
import bench_fixed_part as b
import privwatch
counts = pickle.load(open(table, "rb"))
r = b.decide_once(counts, eps, prof)
r["load"] = os.getloadavg(); r["src"] = privwatch.__file__
json.dump(r, open(out, "w"), default=str, indent=1)
print(json.dumps({k: r[k] for k in ("cpu_s", "wall_s", "steps", "status", "information_nats", "load")}))
