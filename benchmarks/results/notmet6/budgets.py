import sys, resource
sys.path.insert(0, "benchmarks")
import bench_fixed_part as b
from privwatch.release.search import _memo
from privwatch.release.heldout import _evaluation
_memo.SearchMemo.COUNTS_BYTES = int(float(sys.argv[3]) * 2**20)
_evaluation.MOMENTS_BYTES = int(float(sys.argv[4]) * 2**20)
t = b.synth_table(int(sys.argv[1]))
r0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024
r = b.decide_once(t, float(sys.argv[2]), 0)
print(sys.argv[3:], "cpu", r["cpu_s"], r["information_nats"], "maxrss MiB before/after decide", round(r0), round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024))
