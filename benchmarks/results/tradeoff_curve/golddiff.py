"""Every difference between the goldens and this code's outputs, by JSON path, with the size
of each numeric difference (abs, and rel to max(|golden|, 1e-300))."""
import json, sys, tempfile
from pathlib import Path
sys.path.insert(0, ".")
from tests.audit._golden import CASES, normalised, read_golden, run_case

def walk(a, b, key, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            walk(a.get(k), b.get(k), f"{key}/{k}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{key}[{i}]", out)
    elif a != b or type(a) is not type(b):
        out.append((key, a, b))

names = sys.argv[1:] or list(CASES)
for name in names:
    case = CASES[name]
    status, golden = read_golden(case)
    with tempfile.TemporaryDirectory() as tmp:
        got_status = run_case(case, Path(tmp) / "out")
        found = normalised(Path(tmp) / "out", case.files)
    print(f"== {name}: exit {got_status} (golden {status})")
    for f in sorted(golden):
        if f == "leakage.json":
            diffs = []
            walk(json.loads(found[f]), json.loads(golden[f]), "", diffs)
            other = [d for d in diffs if not d[0].startswith("/tradeoff/release_")]
            num = [(k, a, b) for k, a, b in diffs if isinstance(a, float) and isinstance(b, float)]
            print(f"  leakage.json: {len(diffs)} differences, {len(other)} outside /tradeoff/release_*")
            for d in other[:20]:
                print("    OTHER", d)
            by = {}
            for k, a, b in num:
                col = k.split("[")[0]
                d = abs(a - b)
                m = by.setdefault(col, [0, 0.0, 0.0])
                m[0] += 1; m[1] = max(m[1], d); m[2] = max(m[2], d / max(abs(b), 1e-300))
            for col, (c, d, r) in sorted(by.items()):
                print(f"    {col}: {c} values, max abs {d:.1e}, max rel {r:.1e}")
        else:
            print(f"  {f}: {'same' if found[f] == golden[f] else 'DIFFERENT'}")
