#!/bin/bash
# The census-like audit, base then new, one process each (issue #42 item 3, fourth pass).
# usage (from the repository root): NEW=$PWD benchmarks/results/notmet4/census_ab.sh N EPS...
# base: mkdir -p /tmp/nm/base && git archive 5328b1d src benchmarks | tar -x -C /tmp/nm/base
# writes /tmp/nm/ab/<base|new>_<N>_<EPS>.json (leakage.json, compared with cmp) and prints CPU,
# wall, load and the hashes of the release, scores and tradeoff frames
N=$1; shift
mkdir -p /tmp/nm/ab
for e in "$@"; do
  for tag in base new; do
    if [ $tag = base ]; then R=/tmp/nm/base; else R=$NEW; fi
    echo "$(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) $tag eps $e"
    SRCROOT=$R PYTHONPATH=$R/src nice -n 10 python "$NEW/benchmarks/results/notmet4/census_ab.py" \
      "$N" "$e" "/tmp/nm/ab/${tag}_${N}_${e}.json" 2>/dev/null
  done
done
echo "$(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) done"
