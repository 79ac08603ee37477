"""Do the tolerances of issue #45 still catch a broken trainer? (companion of hardware_spread.py)

The record tests of ``tests/test_gallery_records.py`` compare the chaotic obfuscator fits in
distribution, within the spread that ``benchmarks/hardware_spread.py`` measured; the streamed
golden audit (``tests/audit/test_golden.py``) compares its float32 values within 1e-6. This
script breaks the code on purpose and runs the same test functions:

- ``no_training``: the generator's descent step does nothing (the generator keeps its start);
- ``wrong_sign``: the generator climbs the privacy term (maximises the mutual information, or
  minimises the cross entropy) instead of descending it;
- the same two for PPAN's mechanism step, on the ``record`` test of two PPAN points;
- ``golden_seed_1``: the streamed golden audit run with ``--seed 1`` instead of the default 0
  (another fold split and initialisation: a change of the route's results, not of the kernels).

Each should fail; the output says which assertion failed. Run (about 6 minutes)::

    .venv/bin/python benchmarks/hardware_spread_power.py [--out benchmarks/results/...json]
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


@contextmanager
def broken(mode: str) -> Iterator[None]:
    """The obfuscator's generator step replaced for the duration."""
    from privwatch.adversarial import _obfuscator_trainer as t

    original = t.GeneratorEpochs.train_step

    def no_training(self: Any, batch: Any) -> dict[str, Any]:
        return {}

    def wrong_sign(self: Any, batch: Any) -> dict[str, Any]:
        game, obf = self.game, self.model
        observed, sensitive = game.train[0][batch], game.train[1][batch]
        noise = t.torch.rand(
            (len(observed), obf.noise_dim), generator=self.generator, device=observed.device
        )
        guess, dist, ce = game.gen.loss_terms(observed, noise, sensitive, game.classify)
        utility = t.F.softplus(dist.mean() - game.target)
        if obf.loss == "mutual_information":
            onehot = t.F.one_hot(sensitive, game.n_users).float()
            privacy = t.batch_mutual_information(onehot, guess)
        else:
            privacy = -ce.mean()
        loss = obf.alpha * utility - obf.beta * privacy  # the sign of the privacy term flipped
        game.g_opt.zero_grad()
        loss.backward()
        game.g_opt.step()
        return {}

    t.GeneratorEpochs.train_step = {"no_training": no_training, "wrong_sign": wrong_sign}[mode]
    try:
        yield
    finally:
        t.GeneratorEpochs.train_step = original


@contextmanager
def broken_ppan(mode: str) -> Iterator[None]:
    """PPAN's mechanism step replaced for the duration: no descent (``no_training``), or a
    descent that helps the adversary (``wrong_sign``: the privacy term's sign flipped)."""
    from privwatch.adversarial._ppan import PPAN, over_components

    original = PPAN.mechanism_step
    sign = 0.0 if mode == "no_training" else -1.0

    def step(self: Any, observed: Any, sensitive: Any, useful: Any) -> dict[str, Any]:
        release = self.training_release(observed)
        privacy = self.log_likelihood(sensitive, release)
        dist = over_components(self.distortion_, useful, release)
        loss = sign * privacy.mean() + self.penalty_term(dist) + self._realism(release)
        self._mech_opt.zero_grad()
        loss.backward()
        if mode != "no_training":
            self._mech_opt.step()
        return {"log_likelihood": privacy.mean().detach(), "distortion": dist.mean().detach()}

    PPAN.mechanism_step = step  # type: ignore[method-assign]
    try:
        yield
    finally:
        PPAN.mechanism_step = original  # type: ignore[method-assign]


def _outcome(test: Callable[[], None]) -> dict[str, Any]:
    t0 = time.perf_counter()
    try:
        test()
    except AssertionError as e:
        line = traceback.extract_tb(e.__traceback__)[-1].line
        return {"failed": True, "assert": line, "message": str(e)[:400],
                "seconds": round(time.perf_counter() - t0, 1)}  # fmt: skip
    return {"failed": False, "seconds": round(time.perf_counter() - t0, 1)}


def _golden_seed_1() -> dict[str, Any]:
    from dataclasses import replace

    from tests.audit import _golden as g

    case = g.CASES["stream_neural"]
    moved = replace(case, args=lambda inputs: [*case.args(inputs), "--seed", "1"])
    _, golden = g.read_golden(case)

    found: dict[str, bytes] = {}

    def test() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            g.run_case(moved, Path(tmp) / "out")
            found.update(g.normalised(Path(tmp) / "out", case.files))
        problems = [d for f in sorted(golden)
                    if (d := g.first_difference(f, found[f], golden[f], case.float32))]  # fmt: skip
        assert not problems, "\n".join(problems)

    outcome = _outcome(test)
    # how far the float32 values themselves moved: the size of a real change, against 1e-6
    new, old = json.loads(found["leakage.json"]), json.loads(golden["leakage.json"])
    outcome["effective_epsilon_moved"] = abs(
        new["guarantee"]["effective_epsilon"] - old["guarantee"]["effective_epsilon"]
    )
    a = pd.read_csv(io.BytesIO(found["scores.parquet.csv.gz"]))
    b = pd.read_csv(io.BytesIO(golden["scores.parquet.csv.gz"]))
    moved_by = (a["risk"] - b["risk"]).abs()
    outcome["risk_moved"] = {"max": float(moved_by.max()), "median": float(moved_by.median())}
    return outcome


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = ROOT / "benchmarks" / "results" / "hardware_spread_power.json"
    ap.add_argument("--out", default=str(default))
    args = ap.parse_args(argv)
    import torch
    from tests import test_gallery_records as records

    import privwatch

    out: dict[str, Any] = {
        "command": "python benchmarks/hardware_spread_power.py " + " ".join(argv),
        "date": time.strftime("%Y-%m-%d"),
        "privwatch": str(Path(privwatch.__file__).parent),
        "capability": torch.backends.cpu.get_cpu_capability(),
    }
    for mode in ("no_training", "wrong_sign"):
        with broken(mode):
            with tempfile.TemporaryDirectory() as tmp:
                out[f"{mode}/cross_entropy"] = _outcome(
                    lambda: records.test_cross_entropy_quick_run_is_the_records_first_iterations(
                        Path(tmp)
                    )
                )
            for name in (
                "romanelli2020_obfuscation_synthetic",
                "romanelli2020_obfuscation_gowalla",
            ):
                out[f"{mode}/{name}"] = _outcome(
                    lambda n=name: records.test_first_iterations_of_each_generator_agree(n)
                )
        print(json.dumps({k: v for k, v in out.items() if k.startswith(mode)}, indent=1))
    for mode in ("no_training", "wrong_sign"):  # the record-marked PPAN point test, 2 points
        with broken_ppan(mode):
            for name in ("tripathy2019_gaussian_paper", "tripathy2019_gaussian_vector"):
                out[f"{mode}/{name}"] = _outcome(
                    lambda n=name: records.test_one_point_of_a_ppan_curve_agrees_with_a_fresh_fit(
                        n, "useful"
                    )
                )
                print(f"{mode}/{name}", json.dumps(out[f"{mode}/{name}"]), flush=True)
    out["golden_seed_1/stream_neural"] = _golden_seed_1()
    print(json.dumps(out["golden_seed_1/stream_neural"], indent=1))
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"written to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
