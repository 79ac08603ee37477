import sys, contextlib, json
sys.argv = ["bench_fixed_part.py", "--rows", "100000000", "--epsilon", "0.5", "--out", "/tmp/pw42/nolimit_1e8.json"]
import privwatch.release.search._held_out as H
class _Null:
    def limit(self, **kw): return contextlib.nullcontext()
H._blas = lambda: _Null()
import bench_fixed_part
bench_fixed_part.main()
r = json.load(open("/tmp/pw42/nolimit_1e8.json"))["runs"][0]
b = json.load(open("/tmp/pw42/ab_base_100000000.json"))["runs"][0]
print("held_out equal to base:", r["held_out"] == b["held_out"], "frontier equal:", r["frontier"] == b["frontier"])
