#!/bin/bash
cd /work/wt6-notmet
PY=/work/main/.venv/bin/python
src=/tmp/nm/c1/src; tree=c1_no_moment_memo
uptime
PYTHONPATH=$src /usr/bin/time -f "$tree fixed_part 1e7: wall %e s, cpu %U+%S s, maxrss %M KiB" nice -n 10 $PY benchmarks/bench_fixed_part.py --rows 10000000 --epsilon 0.5 0.003 --out /tmp/nm/ab6/fixed_$tree.json 2>&1 | grep -v Warning | grep -v "decision = "
for eps in 1 0.3; do uptime
PYTHONPATH=$src /usr/bin/time -f "$tree census eps $eps: wall %e s, cpu %U+%S s, maxrss %M KiB" nice -n 10 $PY benchmarks/bench_census_audit.py --epsilon $eps --out /tmp/nm/ab6/census_${tree}_$eps.json 2>&1 | grep -v Warning | grep -v "strategy_\|decision = "
done; uptime
