"""Device diagnostic (issue 34): are the CUDA stacked fits apart from the one-after-another fits
by other random draws (apart after one step, the same size as CPU vs CUDA) or by a bug? Prints,
for the small continuous-PPAN, ClassifierLift and obfuscator cases of
tests/adversarial/test_device_stacked.py, each run's largest difference from the CUDA stacked run.
Run on a CUDA machine from the repository root: PYTHONPATH=src python
benchmarks/gpu_stacked_draws.py. Output of 2026-11-26 (H200):
benchmarks/results/gpu-h200-2026-11-26/stacked_draws_diag.log (run with the test
file's first version: 3 obfuscator iterations where it now has 4)."""

import sys
import warnings

import numpy as np
import torch

sys.path.insert(0, "tests/adversarial")
import test_device_stacked as T

from privwatch.adversarial import fit_many
from privwatch.estimators import ClassifierLift
from privwatch.estimators._stacking import one_after_another

warnings.simplefilter("ignore")
det = len(sys.argv) > 1
if det:
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic = True
print("deterministic", det)


def ppans(dev, graph, epochs):
    ms = T._ppans(dev, graph)
    for m in ms:
        m.set_params(epochs=epochs)
    return ms


data = [T._gaussian(s) for s in range(3)]
for ep in (1, 4):
    runs = {
        "cuda_stk": fit_many(ppans("cuda", False, ep), data),
        "cuda_stk2": fit_many(ppans("cuda", False, ep), data),
        "cuda_alone": fit_many(ppans("cuda", False, ep), data, stack=False),
        "cuda_graph": fit_many(ppans("cuda", True, ep), data),
        "cpu_alone": fit_many(ppans("cpu", False, ep), data, stack=False),
        "cpu_stk": fit_many(ppans("cpu", False, ep), data),
    }
    ll = {
        k: np.array([[r["log_likelihood"] for r in m.history_] for m in v]) for k, v in runs.items()
    }
    base = ll["cuda_stk"]
    print(
        "PPAN epochs",
        ep,
        {k: float(np.abs(v - base).max()) for k, v in ll.items()},
        "cpu_stk-cpu_alone",
        float(np.abs(ll["cpu_stk"] - ll["cpu_alone"]).max()),
    )

X, s = T._lift_data()
for ep in (1, 3):
    st = {"rng": 3, "epochs": ep, "n_ensemble": 2, "batch_size": 256, "hidden": (16, 16)}
    r = {
        "cuda_stk": ClassifierLift(device="cuda", **st).fit_score(X, s, cv=3).log_lift,
        "cuda_stk2": ClassifierLift(device="cuda", **st).fit_score(X, s, cv=3).log_lift,
    }
    with one_after_another():
        r["cuda_alone"] = ClassifierLift(device="cuda", **st).fit_score(X, s, cv=3).log_lift
        r["cpu_alone"] = ClassifierLift(device="cpu", **st).fit_score(X, s, cv=3).log_lift
    r["cpu_stk"] = ClassifierLift(device="cpu", **st).fit_score(X, s, cv=3).log_lift
    r["cuda_plain_fit"] = ClassifierLift(device="cuda", **st).fit(X, s).log_lift(X)
    r["cpu_plain_fit"] = ClassifierLift(device="cpu", **st).fit(X, s).log_lift(X)
    print(
        "LIFT epochs",
        ep,
        {k: float(np.abs(v - r["cuda_stk"]).max()) for k, v in r.items() if "plain" not in k},
        "cpu_stk-cpu_alone",
        float(np.abs(r["cpu_stk"] - r["cpu_alone"]).max()),
        "plain fit cuda-cpu",
        float(np.abs(r["cuda_plain_fit"] - r["cpu_plain_fit"]).max()),
    )

pts = data[0][0][:30]


def obs(dev, graph, stack):
    return fit_many(T._obfuscators(dev, graph), [T._points(k) for k in range(3)], stack=stack)


o = {
    "cuda_stk": obs("cuda", False, True),
    "cuda_stk2": obs("cuda", False, True),
    "cuda_alone": obs("cuda", False, False),
    "cuda_graph": obs("cuda", True, True),
    "cpu_alone": obs("cpu", False, False),
    "cpu_stk": obs("cpu", False, True),
}
for k, v in o.items():
    print(
        "OBF",
        k,
        [(m.n_iter_, m.best_epoch_, round(m.val_accuracy_, 5)) for m in v],
        [[round(r.get("val_accuracy", np.nan), 5) for r in m.history_] for m in v][:1],
    )
