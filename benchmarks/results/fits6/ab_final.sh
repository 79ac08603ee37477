#!/bin/bash
# Final A/B, base = git archive of main ca7d26a in /tmp/fits_base, new = /work/wt6-fits; one process each.
PY=/work/main/.venv/bin/python
src() { if [ $1 = base ]; then echo /tmp/fits_base; else echo /work/wt6-fits; fi; }
cd /tmp/fits
echo "## fits alone (harness.py: value() one by one + 20 draws, 1 BLAS thread)"
for w in fixed census; do for t in base new; do
  echo "-- $w $t load $(cut -d' ' -f1-3 /proc/loadavg)"; OPENBLAS_NUM_THREADS=1 PYTHONPATH=$(src $t)/src nice -n 10 $PY harness.py $w /tmp/fits/h_${w}_$t.pkl 2 | tail -3
done; done
echo "## fits, values of a table together (harness2.py: new fits them in 2 threads)"
for w in fixed census; do for t in base new; do
  echo "-- $w $t"; OPENBLAS_NUM_THREADS=1 PYTHONPATH=$(src $t)/src nice -n 10 $PY harness2.py $w x 2 | tail -3
done; done
echo "## fixed part 10^8, epsilon 0.5, --profile 40"
for t in base new; do
  echo "-- $t load $(cut -d' ' -f1-3 /proc/loadavg)"; PYTHONPATH=$(src $t)/src nice -n 10 $PY $(src $t)/benchmarks/bench_fixed_part.py --rows 100000000 --epsilon 0.5 --profile 40 > /tmp/fits/final_fixed_prof_$t.txt 2>&1
  grep -E '^\{|_fit_value|\(values\)|_scores|fit_candidate|_fit_alpha|main_effects|_likelihood' /tmp/fits/final_fixed_prof_$t.txt | head -12
done
echo "## fixed part 10^8, epsilon 0.5, no profile, --repeat 2"
for t in base new; do
  echo "-- $t load $(cut -d' ' -f1-3 /proc/loadavg)"; PYTHONPATH=$(src $t)/src nice -n 10 $PY $(src $t)/benchmarks/bench_fixed_part.py --rows 100000000 --epsilon 0.5 --repeat 2 2>&1 | grep '^{'
done
echo "## census leakage A/B (/tmp/ab_leak.py: CPU of audit.run at epsilon 1 and 0.3)"
for t in base new; do
  echo "-- $t load $(cut -d' ' -f1-3 /proc/loadavg)"; PYTHONPATH=$(src $t)/src nice -n 10 $PY /tmp/ab_leak.py /tmp/fits/final_leak_$t 2>&1 | grep privwatch/__init__
done
for e in 1.0 0.3; do cmp /tmp/fits/final_leak_base_$e.json /tmp/fits/final_leak_new_$e.json && echo "leakage.json epsilon $e: cmp-identical"; done
echo "## census cProfile"
for t in base new; do
  echo "-- $t"; PYTHONPATH=$(src $t)/src nice -n 10 $PY census_prof.py 2>&1 | grep '^{'
done
echo "end load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u)"
