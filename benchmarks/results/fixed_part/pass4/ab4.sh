#!/bin/bash
# base = /tmp/fx/base/src (git archive of 5328b1d), new = /tmp/fx/new2/src (git archive of the branch head)
cd /work/wt-fixed
ab() { T=$1; E=$2; TAG=$3
  for which in base new2; do
    echo "$TAG $which start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    PYTHONPATH=/tmp/fx/$which/src nice -n 10 /work/main/.venv/bin/python benchmarks/results/fixed_part/pass4/ab_one.py $T $E /tmp/fx/final2_${TAG}_$which.json
  done
  /work/main/.venv/bin/python benchmarks/results/fixed_part/pass4/cmp.py /tmp/fx/final2_${TAG}_base.json /tmp/fx/final2_${TAG}_new2.json
}
ab /tmp/fx/tables/s1e8.pkl 0.5 s1e8
ab /tmp/fx/tables/d5e6.pkl 0.5 d5e6
echo "bench_scale start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
PYTHONPATH=/tmp/fx/new2/src nice -n 10 /work/main/.venv/bin/python /tmp/fx/new2/benchmarks/bench_scale.py --rows 5000000 --engine duckdb --dir /tmp/fx/pwengine > /tmp/fx/final2_scale.txt 2> /tmp/fx/final2_scale.err
echo "bench_scale end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
