#!/bin/bash
# A/B: base (git archive 5bd1fe0) then branch, the same bench, own --dir each
cd "$1"
echo "== $2 $(date -u +%T) $(uptime)"
PYTHONPATH=$1/src nice -n 10 /work/main/.venv/bin/python benchmarks/bench_scale.py --rows 5000000 --engine duckdb --dir $3 > $4 2>&1
echo "== end $(date -u +%T) $(uptime)"
