#!/bin/bash
# #42 fifth pass ("table"): base (f75c676, git archive to /tmp/t5/base) against new (this branch),
# one process each, one after the other; CPU and wall with the load. Run from the worktree root.
set -u
PY=/work/main/.venv/bin/python
BASE=/tmp/t5/base/src; NEW=/tmp/t5/new/src;  # git archive of the branch head
 R=benchmarks/results/table5
ld() { cut -d' ' -f1-3 /proc/loadavg; }
echo "start $(date -u +%H:%M:%S) load $(ld)"
# 1. decide on the folded tables (the fixed part): 10^8 synthesised, 5,000,000-row DuckDB
PYTHONPATH=$NEW $PY $R/mktable.py synth 1e8 /tmp/t5/s1e8.pkl
PYTHONPATH=$NEW $PY $R/mktable.py duckdb /tmp/pw5m/data_5000000.parquet /tmp/t5/d5e6.pkl
for T in s1e8 d5e6; do for W in base new; do
  SRC=$BASE; [ $W = new ] && SRC=$NEW
  echo "decide $T $W $(date -u +%H:%M:%S)"
  PYTHONPATH=$SRC nice -n 10 $PY $R/ab_decide.py /tmp/t5/$T.pkl 0.5 /tmp/t5/dec_${T}_$W.json benchmarks
done; done
# 2. the 5,000,000-row DuckDB audit against the hand job (bench_scale.py of this branch for both)
for W in base new; do
  SRC=$BASE; [ $W = new ] && SRC=$NEW
  echo "bench_scale 5e6 $W $(date -u +%H:%M:%S) load $(ld)"
  PYTHONPATH=$SRC nice -n 10 $PY benchmarks/bench_scale.py --rows 5000000 --engine duckdb --dir /tmp/pw5m > $R/scale_5e6_$W.txt
done
echo "end $(date -u +%H:%M:%S) load $(ld)"
