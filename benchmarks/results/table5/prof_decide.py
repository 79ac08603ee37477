# cProfile (CPU clock) of bench_fixed_part.decide_once on a pickled table: TABLE EPSILON OUT.pstats
import cProfile, pickle, sys, time, pstats
sys.path.insert(0, "benchmarks")
import bench_fixed_part as b
counts = pickle.load(open(sys.argv[1], "rb"))
p = cProfile.Profile(time.process_time); p.enable()
r = b.decide_once(counts, float(sys.argv[2]), 0)
p.disable(); p.dump_stats(sys.argv[3]); print(r["cpu_s"], r["information_nats"])
