"""Compare two decide outputs: every number within 1e-9 relative, everything else equal."""
import json, sys, math
a, b = (json.load(open(p)) for p in sys.argv[1:3])
worst = [0.0, None]; bad = []
def walk(x, y, path):
    if isinstance(x, dict):
        if set(x) != set(y): bad.append((path, "keys")); return
        for k in x: walk(x[k], y[k], f"{path}.{k}")
    elif isinstance(x, list):
        if len(x) != len(y): bad.append((path, "len")); return
        for i, (u, v) in enumerate(zip(x, y)): walk(u, v, f"{path}[{i}]")
    elif isinstance(x, (int, float)) and not isinstance(x, bool) and isinstance(y, (int, float)):
        if x == y or (math.isnan(x) and math.isnan(y)): return
        rel = abs(x - y) / max(abs(x), abs(y))
        if rel > worst[0]: worst[:] = [rel, path]
        if rel > 1e-9: bad.append((path, x, y))
    elif x != y: bad.append((path, x, y))
for k in ("status", "information_nats", "held_out", "frontier", "n_alternatives"):
    walk(a.get(k), b.get(k), k)
print("cpu base %.1f new %.1f ratio %.2f; wall %.1f / %.1f" % (a["cpu_s"], b["cpu_s"], a["cpu_s"] / b["cpu_s"], a["wall_s"], b["wall_s"]))
print("identical" if not bad and worst[0] == 0 else f"max rel diff {worst}; over 1e-9: {bad[:5]}")
