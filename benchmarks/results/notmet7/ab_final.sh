#!/bin/bash
# final A/B: base (/tmp/notmet_base, main 6474253) and new (/work/wt7-notmet) alternating, one process each
NEW=/work/wt7-notmet; R=${1:-2}; TAG=${2:-final}
mkdir -p /tmp/nm7/$TAG
for i in $(seq 1 $R); do
  for side in base new; do
    T=/tmp/notmet_base; [ $side = new ] && T=$NEW
    echo "== 1e7 round $i $side $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    cd $T && PYTHONPATH=$T/src /usr/bin/time -f "process wall %e s cpu %U+%S s maxrss %M KB" nice -n 10 /work/main/.venv/bin/python benchmarks/bench_fixed_part.py --rows 10000000 --epsilon 0.5 0.003 --out /tmp/nm7/$TAG/${side}_$i.json 2>&1 | grep -v "Warn\|decision = \|^table" | cut -c1-120
  done
  for side in base new; do
    T=/tmp/notmet_base; [ $side = new ] && T=$NEW
    for e in 1 0.3; do
      echo "== census round $i $side eps $e $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
      cd $T && PYTHONPATH=$T/src /usr/bin/time -f "process wall %e s cpu %U+%S s maxrss %M KB" nice -n 10 /work/main/.venv/bin/python benchmarks/bench_census_audit.py --epsilon $e --out /tmp/nm7/$TAG/census_${side}_${e}_$i.json 2>&1 | grep -E "^total|process"
    done
  done
done
