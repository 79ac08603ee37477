#!/bin/bash
for which in new base; do
  if [ $which = base ]; then src=/tmp/pw42/base/src; else src=/work/wt-perf/src; fi
  echo "== $which $(date -u +%T) $(uptime)"
  PYTHONPATH=$src nice -n 10 /work/main/.venv/bin/python /tmp/pw42/census_prof.py 1 0.3 2>&1 | grep -v Warn
done
