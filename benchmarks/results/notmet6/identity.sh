#!/bin/bash
cd /work/wt6-notmet
PYTHONPATH=src nice -n 10 /work/main/.venv/bin/python benchmarks/bench_fixed_part.py --rows 10000000 --epsilon 0.003 --out /tmp/nm/new3_1e7.json > /tmp/nm/new3_1e7.txt 2>&1
PYTHONPATH=src nice -n 10 /work/main/.venv/bin/python /tmp/ab_leak.py /tmp/nm/leak_new3 > /tmp/nm/leak_new3.txt 2>&1
/work/main/.venv/bin/python - <<'PY' > /tmp/nm/verify.out
import json, filecmp
def load(p):
    d=json.load(open(p))
    for r in d["runs"]:
        for k in ("wall_s","cpu_s","steps","load"): r.pop(k)
    return d
print("1e7 same:", load("/tmp/nm/base_1e7.json")==load("/tmp/nm/new3_1e7.json"))
for e in ("0.3","1.0"):
    print(e, "census same:", filecmp.cmp(f"/tmp/nm/leak_base_{e}.json", f"/tmp/nm/leak_new3_{e}.json", shallow=False))
PY
