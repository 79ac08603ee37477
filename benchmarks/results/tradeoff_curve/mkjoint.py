"""The joints of the pickled folded tables of #42 item 2's fourth pass (/tmp/fx/tables, made by
../fixed_part/pass4/mktable.py), saved as .npy for exact.py and profile_curve.py."""
import pickle, sys, numpy as np
from privwatch.audit._route_engine import _codes, _joint
OBS = [f"x{i}" for i in range(1, 7)]
for name in ("s1e8", "d5e6"):
    t = pickle.load(open(f"/tmp/fx/tables/{name}.pkl", "rb"))
    j = _joint(t, _codes(t, ["s"]), _codes(t, OBS))
    np.save(f"/tmp/cv/{name}_joint.npy", j)
    print(name, j.shape, j.sum())
