#!/bin/bash
# A/B of helper "codes" (#42, sixth session): base = git archive of main ca7d26a in /tmp/codes_base,
# new = this worktree. One process at a time, base and new alternating. Run from the worktree root.
set -e
R=benchmarks/results/codes6
T=/tmp/codes_work
PY=/work/main/.venv/bin/python
NEW=$PWD
[ -f $T/s1e8.pkl ] || PYTHONPATH=$NEW/src $PY benchmarks/results/table5/mktable.py synth 1e8 $T/s1e8.pkl
[ -f $T/d5m.pkl ] || PYTHONPATH=$NEW/src $PY benchmarks/results/table5/mktable.py duckdb /tmp/pw5m/data_5000000.parquet $T/d5m.pkl
for table in s1e8 d5m; do for i in 1 2; do for side in base new; do
  src=$([ $side = base ] && echo /tmp/codes_base/src || echo $NEW/src)
  echo -n "$table $side $i "
  PYTHONPATH=$src nice -n 10 $PY benchmarks/results/table5/ab_decide.py $T/$table.pkl 0.5 $T/dec_${table}_${side}_$i.json $src
done; done; done
