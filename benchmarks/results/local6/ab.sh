set -x; R=${R:-1}
cd /work/wt6-local
for v in base new; do
  if [ $v = base ]; then S=/tmp/local_base/src; else S=/work/wt6-local/src; fi
  uptime
  PYTHONPATH=$S nice -n 10 /work/main/.venv/bin/python benchmarks/bench_fixed_part.py --rows 10000000 --epsilon 0.003 --out /tmp/local6/fp_${v}_$R.json 2>&1 | grep -v Warning
  uptime
  PYTHONPATH=$S nice -n 10 /work/main/.venv/bin/python /tmp/ab_leak.py /tmp/local6/leak_${v}_$R 2>&1 | grep -v Warning
done
uptime
