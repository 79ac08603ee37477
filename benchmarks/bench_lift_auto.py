"""Issue #16: AutoLift against its baselines, cross-fitting, and interval coverage.

Cases (truth in closed form, evaluated on held-out records; nothing tuned on them):

- ``binary``: the 8-dimensional Gaussian mixture of ``bench_lift_accuracy.py`` (the earlier
  issue's generator, same draws: S in {0, 1}, P(S=1) = 0.4, X | S an equal mixture of
  N(mu_{s,c}, I_8), mu ~ N(0, 0.3^2 I)), 5,000 training, 3,000 test records.
- ``ternary``: S in {0, 1, 2}, P(S) = (0.5, 0.3, 0.2); X | S = s an equal mixture of
  N(mu_{s,c}, I_10), c = 1, 2, mu ~ N(0, 0.35^2 I_10); 5,000 training, 3,000 test records.
- ``binary_warped``: the binary case's records passed through x -> sinh(x) coordinatewise: the
  log-lift is unchanged (an invertible map cancels in p(x|s) / p(x)), but no candidate family is
  well specified any more (the Gaussian mixture family is, on the two cases above).

Per seed: the baselines (``PosteriorLift`` quadratic logistic / gradient boosting, their
regularisation by cross-validated log-loss) fitted on the training records; ``AutoLift``
through ``fit_score(cv=5)`` (default: stacked families, ``n_repeats=3``, grouped-jackknife +
between-family intervals): test RMSE of the log-lift over every (record, s), eps = 0.5 flag
agreement, 90 % interval coverage on test records (and with the jackknife part alone) and on the
cross-fitted training records, the RMSE on the training records cross-fitted (3 splits averaged,
and the first split alone) vs in-sample, and each stacked member's own test RMSE; with
``--previous``, also ``AutoLift`` without the ``gaussian_mixture`` candidate, fit only.

Run: python benchmarks/bench_lift_auto.py [n_seeds | start:stop] [binary] [ternary] [binary_warped]
     [--previous] [--rule stack|lowest|one_standard_error]
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import logsumexp
from scipy.stats import t as student_t

sys.path.insert(0, str(Path(__file__).parent))
from _timing import write

from privwatch.estimators import AutoLift, PosteriorLift

EPS = 0.5
LEVEL = 0.9
Truth = Callable[[np.ndarray], np.ndarray]


def mixture_case(
    seed: int, prior: np.ndarray, dim: int, scale: float, warp: bool = False
) -> tuple[Any, ...]:
    """Draw a Gaussian-mixture case; returns train / test records and the closed-form truth."""
    rng = np.random.default_rng(seed)
    k = len(prior)
    mus = rng.normal(0.0, scale, size=(k, 2, dim))

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        # binary: the draws of bench_lift_accuracy.mixture_data (the earlier issue's records)
        s = (rng.random(n) < prior[1]).astype(int) if k == 2 else rng.choice(k, size=n, p=prior)
        c = rng.integers(0, 2, n)
        return mus[s, c] + rng.standard_normal((n, dim)), s

    def truth(x: np.ndarray) -> np.ndarray:
        logp = np.stack(
            [
                logsumexp([-0.5 * ((x - mus[s, c]) ** 2).sum(1) for c in range(2)], axis=0)
                for s in range(k)
            ],
            axis=1,
        )
        return np.asarray(logp - logsumexp(logp + np.log(prior), axis=1)[:, None])

    x_tr, s_tr = draw(5000)
    x_te, s_te = draw(3000)
    if not warp:
        return x_tr, s_tr, x_te, s_te, truth
    return np.sinh(x_tr), s_tr, np.sinh(x_te), s_te, lambda x: truth(np.arcsinh(x))


CASES = {
    "binary": lambda seed: mixture_case(seed, np.array([0.6, 0.4]), 8, 0.3),
    "ternary": lambda seed: mixture_case(100 + seed, np.array([0.5, 0.3, 0.2]), 10, 0.35),
    "binary_warped": lambda seed: mixture_case(seed, np.array([0.6, 0.4]), 8, 0.3, warp=True),
}
PREVIOUS = ("quadratic_logistic", "gradient_boosting", "mlp", "dv")


def accuracy(ll: np.ndarray, truth: np.ndarray) -> dict[str, Any]:
    flags = np.abs(ll).max(axis=1) > EPS
    true_flags = np.abs(truth).max(axis=1) > EPS
    return {
        "rmse": float(np.sqrt(np.mean((ll - truth) ** 2))),
        "flag_agreement": float(np.mean(flags == true_flags)),
    }


def run_seed(case: str, seed: int, rule: str = "stack", previous: bool = False) -> dict[str, Any]:
    x_tr, s_tr, x_te, _, truth_fn = CASES[case](seed)
    truth_te, truth_tr = truth_fn(x_te), truth_fn(x_tr)
    out: dict[str, Any] = {}
    for family in ("quadratic_logistic", "gradient_boosting"):
        t0 = time.perf_counter()
        base = PosteriorLift(family=family, rng=seed).fit(x_tr, s_tr)
        res = accuracy(base.log_lift(x_te), truth_te)
        res["fit_seconds"] = time.perf_counter() - t0
        out[f"baseline {family}"] = res
    t0 = time.perf_counter()
    auto = AutoLift(rng=seed, selection_rule=rule)
    scores = auto.fit_score(x_tr, s_tr, cv=5, level=LEVEL)
    seconds = time.perf_counter() - t0
    lo, hi = auto.log_lift_interval(x_te, LEVEL)
    ll_te = auto.log_lift(x_te)
    # the same interval without the between-family variance (half-width^2 = z^2 (v_jack + v_b),
    # z the Student-t quantile on cv - 1 = 4 df of the grouped jackknife)
    z = float(student_t.ppf(0.5 + LEVEL / 2, 4))
    half = np.sqrt(np.clip(((hi - lo) / 2) ** 2 - z**2 * auto.model_variance(x_te), 0, None))
    members = getattr(auto.best_, "members_", [auto.best_])
    names = getattr(auto.best_, "names", (auto.best_name_,))

    # the first split alone (n_repeats=1): record i scored by the fold model that left it out
    first = auto.resamples_[:5]
    one_split = np.empty_like(scores.log_lift)
    for k, member in enumerate(first):
        rows = scores.fold == k
        one_split[rows] = member.log_lift(x_tr[rows])
    res = accuracy(ll_te, truth_te)
    res |= {
        "fit_score_seconds": seconds,
        "chosen": auto.best_name_,
        "coverage_test": float(np.mean((lo <= truth_te) & (truth_te <= hi))),
        "coverage_test_jackknife_only": float(np.mean(np.abs(ll_te - truth_te) <= half)),
        "member_rmse": {
            n: accuracy(m.log_lift(x_te), truth_te)["rmse"]
            for n, m in zip(names, members, strict=True)
        },
        "coverage_train_crossfit": float(
            np.mean((scores.lower <= truth_tr) & (truth_tr <= scores.upper))
        ),
        "mean_interval_width": float(np.mean(hi - lo)),
        "rmse_train_crossfit": accuracy(scores.log_lift, truth_tr)["rmse"],
        "rmse_train_crossfit_one_split": accuracy(one_split, truth_tr)["rmse"],
        "rmse_train_in_sample": accuracy(auto.log_lift(x_tr), truth_tr)["rmse"],
        "selection": auto.selection_.drop(columns=["reason"]).to_dict(orient="records"),
    }
    if previous:
        t0 = time.perf_counter()
        prev = AutoLift(candidates=PREVIOUS, rng=seed, selection_rule=rule).fit(x_tr, s_tr)
        out["auto without gaussian_mixture"] = accuracy(prev.log_lift(x_te), truth_te) | {
            "chosen": prev.best_name_,
            "fit_seconds": time.perf_counter() - t0,
        }
    out["auto"] = res
    return out


def main() -> None:
    argv = sys.argv[1:]
    previous = "--previous" in argv
    rule = argv[argv.index("--rule") + 1] if "--rule" in argv else "stack"
    argv = [a for a in argv if a not in ("--previous", "--rule", rule)]
    arg = argv[0] if argv else "5"
    seeds = range(*map(int, arg.split(":"))) if ":" in arg else range(int(arg))
    cases = argv[1:] or list(CASES)
    warnings.simplefilter("ignore", FutureWarning)
    results: dict[str, object] = {}
    for case in cases:
        per_seed = []
        for seed in seeds:
            r = run_seed(case, seed, rule, previous)
            per_seed.append(r)
            a = r["auto"]
            best = min(v["rmse"] for k, v in r.items() if k.startswith("baseline"))
            print(
                f"{case} seed {seed}: auto ({a['chosen']}) rmse {a['rmse']:.4f} "
                f"agree {a['flag_agreement']:.4f} best baseline {best:.4f} "
                f"cov {a['coverage_test']:.3f}/{a['coverage_train_crossfit']:.3f} "
                f"(jackknife only {a['coverage_test_jackknife_only']:.3f}) "
                f"train cf {a['rmse_train_crossfit']:.4f} "
                f"(1 split {a['rmse_train_crossfit_one_split']:.4f}) in-sample "
                f"{a['rmse_train_in_sample']:.4f} ({a['fit_score_seconds']:.0f}s) "
                f"members {a['member_rmse']}",
                flush=True,
            )
        results[case] = per_seed
    name = "lift_auto_" + "_".join(cases) + ("" if ":" not in arg else "_" + arg.replace(":", "-"))
    name += "" if rule == "stack" else f"_{rule}"
    print(f"written to {write(name, results)}")
    print(json.dumps(results, indent=1, default=str)[:2000])


if __name__ == "__main__":
    main()
