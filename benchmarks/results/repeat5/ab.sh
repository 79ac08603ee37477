#!/bin/bash
# Base then new, one process each, CPU and wall seconds with the load (issue #42 item 3, fifth pass).
# usage (repository root): BASE=/tmp/rp/base NEW=$PWD benchmarks/results/repeat5/ab.sh CASE...
#   CASE: census:EPS (census-like 30,000 x 10, privwatch.audit.run), fixed:ROWS:EPS
#   (bench_fixed_part.py's synthesised folded table, EngineRoute.decide) or duck:ROWS:EPS
#   (bench_fixed_part.py --source duckdb: the real folded table of bench_engines' data)
# base: mkdir -p /tmp/rp/base && git archive <commit> src benchmarks | tar -x -C /tmp/rp/base
# writes /tmp/rp/ab/<tag>_<case>.json; leakage.json (census) and held_out/frontier (fixed) are
# compared base vs new with cmp
mkdir -p /tmp/rp/ab
PY=/work/main/.venv/bin/python
for c in "$@"; do
  IFS=: read kind a b <<< "$c"
  for tag in base new; do
    if [ $tag = base ]; then R=$BASE; else R=$NEW; fi
    out=/tmp/rp/ab/${tag}_${c//:/_}.json
    echo "$(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) $tag $c"
    if [ $kind = census ]; then
      SRCROOT=$R PYTHONPATH=$R/src OMP_NUM_THREADS=1 nice -n 10 $PY \
        "$NEW/benchmarks/results/notmet4/census_ab.py" 30000 "$a" "$out" 2>/dev/null
    else
      if [ $kind = duck ]; then src="--source duckdb --dir /tmp/rp/duck"; else src=""; fi
      PYTHONPATH=$R/src:$R/benchmarks OMP_NUM_THREADS=1 nice -n 10 $PY \
        "$R/benchmarks/bench_fixed_part.py" --rows "$a" --epsilon "$b" $src --out "$out.full" 2>/dev/null | tail -1
      $PY -c "import json,sys; d=json.load(open(sys.argv[1]))['runs'][0]; json.dump({k: d[k] for k in ('status','information_nats','held_out','frontier','n_alternatives')}, open(sys.argv[2],'w'), sort_keys=True, indent=1)" "$out.full" "$out"
    fi
  done
  cmp /tmp/rp/ab/base_${c//:/_}.json /tmp/rp/ab/new_${c//:/_}.json && echo "same answers: $c"
done
echo "$(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) done"
