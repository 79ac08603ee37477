#!/bin/bash
# bench_scale at 5,000,000 rows, DuckDB: base (/tmp/codes_base, main ca7d26a) then new (this worktree),
# then the audit alone in-process (audit_cpu.py), base and new alternating twice. Run from the worktree root.
R=$PWD/benchmarks/results/codes6
PY=/work/main/.venv/bin/python
for w in /tmp/codes_base $PWD; do
  tag=$([ $w = /tmp/codes_base ] && echo base || echo new)
  echo "== $tag $(date -u +%T) $(uptime)"
  (cd $w && PYTHONPATH=$w/src nice -n 10 $PY benchmarks/bench_scale.py --rows 5000000 --engine duckdb --dir /tmp/pw5m > $R/scale_5m_$tag.txt 2>&1)
done
for i in 1 2; do for w in /tmp/codes_base $PWD; do
  (cd /tmp && PYTHONPATH=$w/src nice -n 10 $PY $R/audit_cpu.py /tmp/codes_work/alt_out >/dev/null)
done; done
echo "== end $(date -u +%T) $(uptime)"
