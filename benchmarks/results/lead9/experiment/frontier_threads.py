import sys, time, threading
sys.path.insert(0, "/work/main/benchmarks")
import numpy as np
from bench_fixed_part import synth_table, OBS, FOLDS
from privwatch.audit import AuditSpec
from privwatch.audit._route_engine import EngineRoute, _Counted
import privwatch.release.search._frontier as fr

mode = sys.argv[1]
orig = fr.Releases._prefetch
def timed(self, epsilon):
    t0 = time.perf_counter(); c0 = time.process_time()
    if mode == "serial":
        orig(self, epsilon)
    else:
        from privwatch.release.search._one_search import Fitter, kept_information
        from privwatch.release.heldout import NOTHING_KEPT, prefetch_model
        total = self.space.table.total()
        first = Fitter(self.space, self.options.replace(epsilon=epsilon))
        if self.folds >= 2 and kept_information(self.space, first.fit(total).plan) > NOTHING_KEPT:
            prefetch_model(self.space.table, first.box)
        eps = [e for e in self.extra if e != epsilon and (self.ahead or e < epsilon)]
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(int(mode)) as ex:
            list(ex.map(lambda e: Fitter(self.space, self.options.replace(epsilon=e)).fit(total), eps))
    print("prefetch", round(time.perf_counter()-t0,2), "cpu", round(time.process_time()-c0,2), flush=True)
fr.Releases._prefetch = timed
counts = synth_table(100_000_000)
spec = AuditSpec(sensitive=["s"], observed=OBS, epsilon=0.5, folds=FOLDS, records=False)
route = EngineRoute("duckdb", "bench")
holes = counts.iloc[:0][[*OBS, "s"]]
counted = _Counted(counts, "duckdb", "bench", ["s"], list(OBS), spec, {}, holes)
t0 = time.perf_counter(); c0=time.process_time()
d = route.decide(spec, counted, lambda m: None)
import json, hashlib
print(mode, "decide", round(time.perf_counter()-t0,2), "cpu", round(time.process_time()-c0,2), hashlib.sha256(json.dumps(d.leakage, sort_keys=True, default=str).encode()).hexdigest()[:16], flush=True)
