#!/bin/bash
# usage: ab.sh ROWS EPS... ; runs base then new, then base again
cd /work/wt-perf/benchmarks
rows=$1; shift
for which in base new; do
  if [ $which = base ]; then src=/tmp/pw42/base/src; else src=/work/wt-perf/src; fi
  echo "== $which $(uptime)"
  PYTHONPATH=$src:. nice -n 10 /work/main/.venv/bin/python bench_fixed_part.py --rows $rows --epsilon "$@" --out /tmp/pw42/ab_${which}_${rows}.json 2>&1 | grep -v Warn
done
