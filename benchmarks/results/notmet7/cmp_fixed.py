import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def strip(d):
    return [{k: v for k, v in r.items() if k not in ("wall_s", "cpu_s", "steps", "load")} for r in d["runs"]]
sa, sb = strip(a), strip(b)
print("fixed JSON equal" if sa == sb else "FIXED JSON DIFFER")
if sa != sb:
    for x, y in zip(sa, sb):
        for k in x:
            if x[k] != y.get(k): print(k, x[k], y.get(k))
