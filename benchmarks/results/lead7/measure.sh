#!/bin/bash
# quiet re-measure of every #42 target on main (lead, seventh session)
cd /work/main
R=benchmarks/results/lead7
P=.venv/bin/python
uptime
for i in 1 2; do
  $P benchmarks/bench_census_audit.py --epsilon 1   --out $R/census_1_$i.json   2>&1 | grep -v Warning | tail -2
  $P benchmarks/bench_census_audit.py --epsilon 0.3 --out $R/census_0.3_$i.json 2>&1 | grep -v Warning | tail -2
  uptime
done
$P benchmarks/bench_fixed_part.py --rows 100000000 --epsilon 0.5 --out $R/fixed_1e8.json 2>&1 | tail -1
uptime
$P benchmarks/bench_fixed_part.py --rows 10000000 --epsilon 0.5 0.003 --out $R/fixed_1e7.json 2>&1 | tail -2
uptime
$P benchmarks/bench_scale.py --rows 5000000 --engine duckdb --dir /tmp/pw5m > $R/scale_5m_duckdb.txt 2>&1
tail -25 $R/scale_5m_duckdb.txt
uptime
