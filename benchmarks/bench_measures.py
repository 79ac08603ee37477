"""Speed of privwatch's measure kernels against libqif (C++) and dit, in the same run.

Run: python benchmarks/bench_measures.py [--skip-slow]
(--skip-slow leaves out qif's d-privacy epsilon on the 3,000 x 3,000 channel, which takes minutes.)
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
from _timing import best_of, write

from privwatch import measures as m


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-slow", action="store_true")
    args = ap.parse_args()
    import dit
    import qif
    from dit.other.sibson_mutual_information import sibson_mutual_information

    rng = np.random.default_rng(0)
    results: dict[str, object] = {}

    # --- |S| = 10, |X| = 1,000,000 -------------------------------------------------------
    p = rng.random((10, 1_000_000))
    p /= p.sum()
    prior = p.sum(axis=1)
    channel = p / prior[:, None]
    big: dict[str, float] = {}
    for name, func in [
        ("mutual_information", lambda: m.mutual_information(p)),
        ("log_lift", lambda: m.log_lift(p)),
        ("lift_epsilon", lambda: m.lift_epsilon(p)),
        ("sibson_mi_alpha2", lambda: m.sibson_mi(p, 2.0)),
        ("maximal_leakage", lambda: m.maximal_leakage(p)),
        ("guessing_probability", lambda: m.guessing_probability(p)),
        ("qif_shannon_add_leakage", lambda: qif.measure.shannon.add_leakage(prior, channel)),
        ("qif_bayes_vuln_posterior", lambda: qif.measure.bayes_vuln.posterior(prior, channel)),
        ("qif_bayes_vuln_mult_capacity", lambda: qif.measure.bayes_vuln.mult_capacity(channel)),
    ]:
        big[name] = best_of(func, 5)
    # same quantities agree
    assert (
        abs(m.mutual_information(p, base=2) - qif.measure.shannon.add_leakage(prior, channel))
        < 1e-9
    )
    assert abs(m.guessing_probability(p) - qif.measure.bayes_vuln.posterior(prior, channel)) < 1e-9
    assert abs(np.exp(m.maximal_leakage(p)) - qif.measure.bayes_vuln.mult_capacity(channel)) < 1e-9
    ratios = {
        "mutual_information / qif add_leakage": big["mutual_information"]
        / big["qif_shannon_add_leakage"],
        "guessing_probability / qif posterior": big["guessing_probability"]
        / big["qif_bayes_vuln_posterior"],
        "maximal_leakage / qif mult_capacity": big["maximal_leakage"]
        / big["qif_bayes_vuln_mult_capacity"],
    }
    results["S10_X1e6_seconds"] = big
    results["S10_X1e6_ratio_privwatch_over_qif"] = ratios

    # --- Sibson at |S| = 2, |X| = 10,000 vs dit ----------------------------------------
    q = rng.random((2, 10_000))
    q /= q.sum()
    outcomes = [(s, x) for s in range(2) for x in range(10_000)]
    dist = dit.Distribution(outcomes, [q[o] for o in outcomes])
    t_dit = best_of(lambda: sibson_mutual_information(dist, [0], [1], 2.0), 1)
    t_pw = best_of(lambda: m.sibson_mi(q, 2.0), 20)
    assert abs(m.sibson_mi(q, 2.0, base=2) - sibson_mutual_information(dist, [0], [1], 2.0)) < 1e-9
    results["sibson_S2_X1e4"] = {"privwatch_s": t_pw, "dit_s": t_dit, "speedup": t_dit / t_pw}

    # --- ldp_epsilon of a 3,000 x 3,000 channel vs qif d-privacy --------------------------
    k = rng.random((3000, 3000)) + 0.01
    k /= k.sum(axis=1, keepdims=True)
    t_ldp = best_of(lambda: m.ldp_epsilon(k), 5)
    entry: dict[str, float | None] = {"privwatch_s": t_ldp, "qif_s": None, "speedup": None}
    if not args.skip_slow:
        t0 = time.perf_counter()
        ref = qif.measure.d_privacy.smallest_epsilon(k, lambda a, b: 0.0 if a == b else 1.0)
        entry["qif_s"] = time.perf_counter() - t0
        entry["speedup"] = entry["qif_s"] / t_ldp
        assert abs(ref - m.ldp_epsilon(k)) < 1e-9
    results["ldp_epsilon_3000x3000"] = entry

    out = write("measures", results)
    print(__import__("json").dumps(results, indent=2))
    print(f"written to {out}")


if __name__ == "__main__":
    main()
