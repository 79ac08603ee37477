#!/bin/bash
# A/B of the census audit: base (5bd1fe0) and new (worktree), alternating, in-process totals from the bench's JSON
out=$1; shift
for r in 1 2 3; do
 for v in base new; do
  d=/tmp/census_base; [ $v = new ] && d=/work/wt6-census
  for e in 1 0.3; do
   uptime >> $out
   (cd $d && PYTHONPATH=$d/src nice -n 10 /usr/bin/time -f "cpu_user %U sys %S wall %e" /work/main/.venv/bin/python benchmarks/bench_census_audit.py --epsilon $e --out /tmp/census_ab_${v}_${e}_$r.json 2>&1 | grep -v Warn | grep -v "^  " | tail -3) >> $out 2>&1
   python3 -c "import json;d=json.load(open('/tmp/census_ab_${v}_${e}_$r.json'));print('$v','$e','$r','total',round(d['total_s'],3),d['status'])" >> $out
  done
 done
done
