#!/bin/bash
# Base (git archive of main HEAD, /tmp/notmet_base) against new (this worktree), one process
# each, one after the other; CPU and wall from /usr/bin/time, load from uptime.
PY=/work/main/.venv/bin/python
OUT=${1:-/tmp/nm/ab}
mkdir -p "$OUT"
for tree in base new; do
  src=/tmp/notmet_base/src; [ $tree = new ] && src=/work/wt6-notmet/src
  uptime
  PYTHONPATH=$src /usr/bin/time -f "$tree fixed_part 1e7: wall %e s, cpu %U+%S s, maxrss %M KiB" \
    nice -n 10 $PY benchmarks/bench_fixed_part.py --rows 10000000 --epsilon 0.5 0.003 \
    --out "$OUT/fixed_$tree.json" 2>&1 | grep -v Warning | grep -v "decision = "
  for eps in 1 0.3; do
    uptime
    PYTHONPATH=$src /usr/bin/time -f "$tree census eps $eps: wall %e s, cpu %U+%S s, maxrss %M KiB" \
      nice -n 10 $PY benchmarks/bench_census_audit.py --epsilon $eps \
      --out "$OUT/census_${tree}_$eps.json" 2>&1 | grep -v Warning | grep -v "strategy_\|decision = "
  done
done
uptime
