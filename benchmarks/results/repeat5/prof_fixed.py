"""CPU-clock cProfile of EngineRoute.decide on bench_fixed_part.py's synthesised folded table:
PYTHONPATH=src:benchmarks python prof_fixed.py ROWS EPS OUT.prof (issue #42 item 3, fifth pass)."""
import cProfile, sys, time
import bench_fixed_part as bfp
rows, eps, out = int(float(sys.argv[1])), float(sys.argv[2]), sys.argv[3]
counts = bfp.synth_table(rows)
pr = cProfile.Profile(time.process_time)
c0 = time.process_time()
pr.enable()
r = bfp.decide_once(counts, eps, 0)
pr.disable()
print("cpu", round(time.process_time() - c0, 1), r["status"], r["information_nats"])
pr.dump_stats(out)
