#!/bin/bash
# usage: ab.sh ROWS PAIRS EPS...  ; alternates base/new, one process each
ROWS=$1; PAIRS=$2; shift 2
for i in $(seq 1 $PAIRS); do
  for side in base new; do
    if [ $side = base ]; then T=/tmp/fixed_base; else T=/work/wt7-fixed; fi
    L=$(cut -d' ' -f1-3 /proc/loadavg)
    R=$(cd $T && PYTHONPATH=$T/src nice -n 10 /work/main/.venv/bin/python benchmarks/bench_fixed_part.py --rows $ROWS --epsilon "$@" --out /tmp/fx7/ab${TAG}_${side}_${ROWS}_$i.json | grep '^{' | python3 -c "import sys,json; [print(json.loads(l)['epsilon'], json.loads(l)['wall_s'], json.loads(l)['cpu_s'], end=' | ') for l in sys.stdin]")
    echo "$side run $i load-before $L : eps wall cpu = $R"
  done
done
