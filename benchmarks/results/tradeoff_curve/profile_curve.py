"""cProfile (CPU clock) of propose_epsilon on a saved joint: python profile_curve.py JOINT.npy"""
import cProfile, pstats, sys, time
import numpy as np
from privwatch.audit._route_engine import propose_epsilon
j = np.load(sys.argv[1])
pr = cProfile.Profile(time.process_time)
c0 = time.process_time()
pr.enable(); eps, why, curve = propose_epsilon(j); pr.disable()
print("cpu", round(time.process_time() - c0, 3), "proposed", eps, "thresholds", len(curve))
pstats.Stats(pr).sort_stats("tottime").print_stats(15)
