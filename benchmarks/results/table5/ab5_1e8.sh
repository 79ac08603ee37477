#!/bin/bash
# #42 fifth pass ("table") at 10^8 rows: bench_scale.py (this branch's, both sides) with the base
# source (f75c676) then the new, then the two labelling writes of the hand job with 6 score
# columns (the former reference) and with all 10 (the audit's scores); the data deleted after.
set -u
PY=/work/main/.venv/bin/python
BASE=/tmp/t5/base/src; NEW=/tmp/t5/new/src;  # git archive of the branch head
 R=benchmarks/results/table5
ld() { cut -d' ' -f1-3 /proc/loadavg; }
for W in base new; do
  SRC=$BASE; [ $W = new ] && SRC=$NEW
  echo "bench_scale 1e8 $W $(date -u +%H:%M:%S) load $(ld)"
  PYTHONPATH=$SRC nice -n 10 $PY benchmarks/bench_scale.py --rows 100000000 --engine duckdb --dir /tmp/pw8 > $R/scale_1e8_$W.txt
done
echo "hand writes 1e8 $(date -u +%H:%M:%S) load $(ld)"
nice -n 10 $PY $R/hand_jobs.py /tmp/pw8/data_100000000.parquet /tmp/pw8/mapping.parquet hand6,hand > $R/hand_writes_1e8.txt 2>&1
echo "end $(date -u +%H:%M:%S) load $(ld)"
rm -rf /tmp/pw8
