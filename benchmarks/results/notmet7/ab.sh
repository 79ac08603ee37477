#!/bin/bash
# A/B: base (/tmp/notmet_base) and new ($NEW, default the worktree) alternating, one process each
# usage: ab.sh ROUNDS TAG
NEW=${NEW:-/work/wt7-notmet}; R=${1:-2}; TAG=${2:-ab}
mkdir -p /tmp/nm7/$TAG
for i in $(seq 1 $R); do
  for side in base new; do
    T=/tmp/notmet_base; [ $side = new ] && T=$NEW
    echo "== round $i $side $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    cd $T && PYTHONPATH=$T/src /usr/bin/time -f "process wall %e s cpu %U+%S s maxrss %M KB" nice -n 10 /work/main/.venv/bin/python benchmarks/bench_fixed_part.py --rows 10000000 --epsilon 0.5 0.003 --out /tmp/nm7/$TAG/${side}_$i.json 2>&1 | grep -v "Warn\|decision = " | cut -c1-160
  done
done
python3 - <<PY
import json, glob, statistics as st
for side in ("base", "new"):
    rows = []
    for p in sorted(glob.glob("/tmp/nm7/$TAG/%s_*.json" % side)):
        r = json.load(open(p))["runs"]
        rows.append((r[0]["cpu_s"], r[1]["cpu_s"], r[0]["wall_s"], r[1]["wall_s"]))
    for m, n, mw, nw in rows:
        print(side, "MET cpu %.2f NOT MET cpu %.2f ratio %.2fx | wall %.2f / %.2f ratio %.2fx" % (m, n, n / m, mw, nw, nw / mw))
PY
