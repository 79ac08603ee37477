#!/bin/bash
# identity of TREE ($1) against base: 10^7 decide JSON and census leakage.json
T=$1; tag=$2
cd $T && PYTHONPATH=$T/src nice -n 10 /work/main/.venv/bin/python benchmarks/bench_fixed_part.py --rows 10000000 --epsilon 0.5 0.003 --out /tmp/nm7/id_$tag.json 2>&1 | grep -v Warn | grep epsilon | cut -c1-200
python3 /tmp/nm7/cmp_fixed.py /work/main/benchmarks/results/lead6/fixed_1e7.json /tmp/nm7/id_$tag.json
cd $T && PYTHONPATH=$T/src nice -n 10 /work/main/.venv/bin/python /tmp/ab_leak.py /tmp/nm7/leak_$tag 2>&1 | tail -1
for e in 1.0 0.3; do cmp /tmp/nm7/leak_base_$e.json /tmp/nm7/leak_${tag}_$e.json && echo "census $e identical"; done
