"""The MI-trained location obfuscator (Romanelli et al.) and its batch mutual information."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats

from privwatch import ValidationError
from privwatch import measures as m
from privwatch.adversarial import Obfuscator, batch_mutual_information
from privwatch.adversarial._exact import exact_leakage
from privwatch.adversarial._generators import make_generator
from privwatch.estimators import bayes_error_grid
from privwatch.mechanisms import PlanarLaplace


def test_batch_mutual_information_is_the_mi_of_the_batch_joint() -> None:
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 3, (200,), generator=g)
    t = torch.nn.functional.one_hot(labels, 3).float()
    q = torch.softmax(torch.randn(200, 3, generator=g, dtype=torch.float64) + 2 * t, dim=1)
    q.requires_grad_(True)
    mi = batch_mutual_information(t.double(), q)
    joint = (t.double().T @ q / 200).detach().numpy()
    assert float(mi.detach()) == pytest.approx(m.mutual_information(joint), abs=1e-5)
    mi.backward()
    assert q.grad is not None and torch.isfinite(q.grad).all()


def test_g0_is_exactly_the_planar_laplace() -> None:
    eps = math.log(2) / 100
    pts = torch.zeros(5, 2)
    gen = make_generator(
        "laplace", (16, 16), noise_dim=3, anchor_grid=1, centre=[0, 0], epsilon=eps, points=pts
    )
    w = torch.zeros(20_000, 2)
    u = torch.rand(20_000, 3, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        z = gen(w, u).double().numpy()
    r = np.linalg.norm(z, axis=1)
    assert stats.kstest(r, stats.gamma(a=2, scale=1 / eps).cdf).pvalue > 1e-3
    angles = np.arctan2(z[:, 1], z[:, 0])
    assert stats.kstest(angles, stats.uniform(-math.pi, 2 * math.pi).cdf).pvalue > 1e-3


def _two_users(n: int, rng: int) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(rng)
    users = np.repeat([0, 1], n)
    centres = np.array([[-50.0, 0.0], [50.0, 0.0]])
    return centres[users] + g.normal(0, 5, (2 * n, 2)), users


def _fit_and_release(**params: object) -> tuple[Obfuscator, np.ndarray, np.ndarray, np.ndarray]:
    """Two users 100 m apart, budget 60 m: meeting half-way (50 m each) mixes them completely.
    Returns the fitted obfuscator, held-out points (20 hits each), their users and releases."""
    train, users = _two_users(300, 0)
    test, test_sensitive = _two_users(200, 1)
    settings: dict[str, object] = {
        "max_iter": 25,
        "patience": 25,
        "hits": 4,
        "classifier_epochs": 15,
        "generator_epochs": 40,
        "generator_batch_size": 256,
        "generator_lr": 1e-3,
        "generator_hidden": (32, 32),
        "classifier_hidden": (32, 32),
        "rng": 0,
    }
    ob = Obfuscator(60.0, **{**settings, **params}).fit(train, users)  # type: ignore[arg-type]
    src = np.repeat(test, 20, axis=0)
    return ob, src, np.repeat(test_sensitive, 20), ob.release(src, rng=2)


@pytest.mark.slow  # > 10 s on the shared 2-core machine
def test_learned_mechanism_beats_laplace_within_budget_on_held_out_points() -> None:
    ob, src, lab, z = _fit_and_release()
    bounds = (-400, 400, -400, 400)
    learned = bayes_error_grid(z, lab, bounds=bounds, cells=40)
    lap = PlanarLaplace.epsilon_for_distortion(60.0).release(src, rng=3)
    laplace = bayes_error_grid(lap, lab, bounds=bounds, cells=40)
    assert np.linalg.norm(z - src, axis=1).mean() <= 60.0 * 1.02
    assert learned > laplace + 0.1
    assert ob.val_accuracy_ < 0.75 and len(ob.history_) == ob.n_iter_ > ob.best_epoch_ >= 0


def test_save_load_round_trip_and_callback(tmp_path: Path) -> None:
    train, users = _two_users(60, 0)
    seen = []
    ob = Obfuscator(
        60.0,
        max_iter=2,
        hits=2,
        classifier_epochs=1,
        generator_epochs=1,
        generator_hidden=(8,),
        classifier_hidden=(8,),
        rng=0,
        callbacks=[lambda rec, est: seen.append((rec["epoch"], est.release(train[:3], rng=0)))],
    ).fit(train, np.where(users == 0, "alice", "bob"))
    assert [i for i, _ in seen] == [0, 1] and seen[0][1].shape == (3, 2)
    ob.save(tmp_path / "ob.json")
    back = Obfuscator.load(tmp_path / "ob.json")
    assert np.array_equal(back.release(train, rng=5), ob.release(train, rng=5))
    assert back.users_.tolist() == ["alice", "bob"] and back.history_ == ob.history_


def test_cross_entropy_option_trains_another_generator_and_bad_inputs() -> None:
    train, users = _two_users(40, 0)
    trained: dict[str, dict[str, torch.Tensor]] = {}

    def fit(loss: str) -> Obfuscator:
        def snapshot(record: dict[str, float], est: Obfuscator) -> None:
            if record["epoch"] == 1:  # G_1: the generator trained against C_1 with this loss
                trained[loss] = {k: v.clone() for k, v in est.generator_.state_dict().items()}

        return Obfuscator(
            60.0,
            loss=loss,
            max_iter=2,
            patience=5,
            hits=1,
            classifier_epochs=1,
            generator_epochs=1,
            callbacks=[snapshot],
            rng=0,
        ).fit(train, users)

    for loss in ("cross_entropy", "mutual_information"):
        ob = fit(loss)
        assert len(ob.history_) == 2 and ob.best_epoch_ in (-1, 0, 1)
    ce, mi = trained["cross_entropy"], trained["mutual_information"]
    # same seed, same G0 and C_1: only the generator's loss differs, and so do the weights
    assert not all(torch.equal(ce[k], mi[k]) for k in ce)
    with pytest.raises(ValidationError, match="`loss` must be one of"):
        Obfuscator(60.0, loss="hinge").fit(train, users)
    with pytest.raises(ValidationError, match="`generator` must be one of"):
        Obfuscator(60.0, generator="gan").fit(train, users)
    with pytest.raises(ValidationError, match="`anchor_grid` must be a positive"):
        Obfuscator(60.0, generator="anchors", anchor_grid=0).fit(train, users)
    with pytest.raises(ValidationError, match="`budget` must be a positive"):
        Obfuscator(-1.0).fit(train, users)
    with pytest.raises(ValidationError, match="`noise_dim` must be an int >= 3"):
        Obfuscator(60.0, noise_dim=2).fit(train, users)
    with pytest.raises(ValidationError, match=r"`observed` must be a finite, non-empty \(n, 2\)"):
        Obfuscator(60.0).fit(train[:, :1], users)
    with pytest.raises(ValidationError, match="`sensitive` must have one label per point"):
        Obfuscator(60.0).fit(train, users[:3])
    with pytest.raises(ValidationError, match="`sensitive` must hold at least 2 users"):
        Obfuscator(60.0).fit(train, np.zeros(len(train)))


@pytest.mark.slow  # > 10 s on the shared 2-core machine
def test_anchor_generator_releases_only_anchors_mixes_users_and_round_trips(
    tmp_path: Path,
) -> None:
    ob, src, lab, z = _fit_and_release(generator="anchors", anchor_grid=5, generator_lr=3e-3)
    anchors = ob.generator_.anchors.detach().double().numpy()
    # every release is one of the 25 anchors (finite support) ...
    assert np.abs(z[:, None] - anchors[None]).sum(axis=-1).min(axis=1).max() < 1e-3
    # ... within the budget on held-out points, and the two users are mixed where G0 was not
    assert np.linalg.norm(z - src, axis=1).mean() <= 60.0 * 1.02
    bounds = (-400, 400, -400, 400)
    assert bayes_error_grid(z, lab, bounds=bounds, cells=40) > 0.3
    assert ob.history_[0]["val_accuracy"] > 0.9 > 0.75 > ob.val_accuracy_
    ob.save(tmp_path / "anchors.json")
    back = Obfuscator.load(tmp_path / "anchors.json")
    assert np.array_equal(back.release(src, rng=5), ob.release(src, rng=5))


def test_anchor_generator_loss_terms_are_exact_expectations() -> None:
    g = torch.Generator().manual_seed(0)
    pts = torch.randn(50, 2, generator=g) * 100
    gen = make_generator(
        "anchors", (8,), noise_dim=3, anchor_grid=3, centre=[0, 0], budget=100.0, points=pts
    )
    w = pts[:10]
    x = torch.tensor([0, 1] * 5)
    lin = torch.nn.Linear(2, 2)

    def clf(z: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = lin(z / 100)
        return out

    with torch.no_grad():
        pred, dist, ce = gen.loss_terms(w, torch.rand(10, 3, generator=g), x, clf)
        p, d = gen.probs(w)
        log_q = torch.log_softmax(clf(gen.anchors), dim=1)
        # Monte Carlo over the sampled releases agrees with the exact expectations
        u = torch.rand(20_000, 3, generator=g)
        z = gen(w[:1].repeat(20_000, 1), u)
    assert torch.allclose(p.sum(dim=1), torch.ones(10), atol=1e-5)
    assert torch.allclose(pred, p @ log_q.exp(), atol=1e-6)
    assert torch.allclose(dist, (p * d).sum(dim=1), atol=1e-4)
    assert torch.allclose(ce, -(p * log_q[:, x].T).sum(dim=1), atol=1e-5)
    mc = (z - w[:1]).norm(dim=1).mean()
    assert float(mc) == pytest.approx(float(dist[0]), rel=0.03)


def test_exact_leakage_is_the_mi_and_bayes_error_of_the_joint() -> None:
    g = np.random.default_rng(3)
    probs = g.dirichlet(np.ones(5), size=40)  # 40 points, 5 outputs
    users = g.integers(0, 3, 40)
    joint = np.stack([probs[users == u].sum(axis=0) for u in range(3)]) / 40
    mi, be = exact_leakage(
        torch.as_tensor(probs), torch.nn.functional.one_hot(torch.as_tensor(users), 3)
    )
    assert float(mi) == pytest.approx(m.mutual_information(joint), abs=1e-10)
    assert float(be) == pytest.approx(m.bayes_error(joint), abs=1e-12)


@pytest.mark.slow  # > 10 s on the shared 2-core machine
def test_bayes_attacker_mixes_users_within_budget_on_held_out_points(tmp_path: Path) -> None:
    ob, src, lab, z = _fit_and_release(
        generator="anchors",
        attacker="bayes",
        anchor_grid=5,
        generator_lr=3e-3,
        generator_epochs=10,
        max_iter=60,
        patience=60,
    )
    anchors = ob.generator_.anchors.detach().double().numpy()
    assert np.abs(z[:, None] - anchors[None]).sum(axis=-1).min(axis=1).max() < 1e-3
    assert np.linalg.norm(z - src, axis=1).mean() <= 60.0
    # G0 (anchors near each point) separates the two users; the kept generator mixes them
    assert ob.history_[0]["val_accuracy"] > 0.95
    assert bayes_error_grid(z, lab, bounds=(-400, 400, -400, 400), cells=40) > 0.4
    best = ob.history_[ob.best_epoch_]
    assert ob.val_accuracy_ == best["val_accuracy"] < 0.6 and best["val_distortion"] <= 60.0
    ob.save(tmp_path / "bayes.json")
    back = Obfuscator.load(tmp_path / "bayes.json")
    assert back.attacker == "bayes"
    assert np.array_equal(back.release(src, rng=5), ob.release(src, rng=5))


def test_bayes_attacker_needs_the_anchors_generator_and_the_mi_loss() -> None:
    train, users = _two_users(20, 0)
    with pytest.raises(ValidationError, match="`attacker` must be one of"):
        Obfuscator(60.0, attacker="oracle").fit(train, users)
    with pytest.raises(ValidationError, match="needs a release with finite support"):
        Obfuscator(60.0, attacker="bayes").fit(train, users)
    with pytest.raises(ValidationError, match="needs a release with finite support"):
        Obfuscator(60.0, attacker="bayes", generator="anchors", loss="cross_entropy").fit(
            train, users
        )


def test_no_generator_within_the_budget_keeps_g0_with_its_measured_accuracy(
    tmp_path: Path,
) -> None:
    train, users = _two_users(40, 0)
    # G0 spreads releases over kilometres (epsilon 1e-3 per metre): never within 60 m
    ob = Obfuscator(
        60.0, init_epsilon=1e-3, max_iter=1, hits=2, classifier_epochs=1, generator_epochs=1, rng=0
    ).fit(train, users)
    assert ob.history_[0]["val_distortion"] > 60.0 and ob.best_epoch_ == -1
    assert ob.val_accuracy_ == ob.history_[0]["val_accuracy"]  # finite: G0's own check
    assert ob.privacy.value == ob.val_accuracy_ and not ob.privacy.guaranteed
    ob.save(tmp_path / "g0.json")  # a finite accuracy: the file is valid JSON
    assert Obfuscator.load(tmp_path / "g0.json").val_accuracy_ == ob.val_accuracy_


def test_table2_schedule_fits_the_papers_g0_and_generator_schedule() -> None:
    from privwatch.gallery import config
    from privwatch.gallery.romanelli2020_schedule import init_epsilon, jobs

    todo = jobs(config("romanelli2020_table2")["settings"])
    keys = [k for _, k, _ in todo]
    assert keys[:3] == ["epochs=3000", "epochs=40", "epochs=20"]  # the longest fit first
    assert {"L=270/paper", "L=270/ours", "L=173/case", "L=173/ours"} <= set(keys)
    inits = {(job["L"], job["init"]) for _, _, job in todo if "init" in job}
    assert {(173, "ln2/100"), (173, "ln2/60"), (173, "20/L"), (270, "ln2/100")} <= inits
    for _, key, job in todo:
        if job["L"] == 173 and "init" in job:  # Alg. 1 from a Laplace G0 (not ours): Sec. IV-B
            p = job["params"]
            # every schedule, the paper's 3,000 epochs included, runs the paper's 24 iterations
            assert (p["generator_epochs"], p["generator_batch_size"], p["max_iter"]) == (
                30,
                512,
                24,
            )
            assert p["generator_lr"] == 1e-4 and p["classifier_batch_size"] == 512, key
    assert init_epsilon("ln2/100", 173.0) == pytest.approx(math.log(2) / 100)
    assert init_epsilon("20/L", 200.0) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="`init` must look like"):
        init_epsilon("2e-3", 173.0)


def test_default_obfuscator_takes_its_budget_from_the_points(tmp_path: Path) -> None:
    """``Obfuscator()`` (every argument has a default): the budget is half the RMS distance of
    the points from their centre, kept as ``budget_`` and in the saved file; a file without
    it (written before the default) loads with the budget of its parameters."""
    import json

    from sklearn.base import clone

    from privwatch._serialization import read_model, write_model

    assert clone(Obfuscator()).get_params()["budget"] is None
    points, users = _two_users(40, 0)
    small = {"max_iter": 2, "patience": 2, "hits": 1, "classifier_epochs": 1}
    small |= {"generator_epochs": 1, "generator_hidden": (8,), "classifier_hidden": (8,)}
    ob = Obfuscator(rng=0, **small).fit(points, users)  # type: ignore[arg-type]
    rms = float(np.sqrt(((points - points.mean(axis=0)) ** 2).sum(axis=1).mean()))
    assert ob.budget is None and ob.budget_ == pytest.approx(0.5 * rms)
    # the same fit as the budget given explicitly
    given = Obfuscator(ob.budget_, rng=0, **small).fit(points, users)  # type: ignore[arg-type]
    np.testing.assert_array_equal(given.release(points, rng=1), ob.release(points, rng=1))
    assert given.budget_ == ob.budget_
    ob.save(tmp_path / "ob.json")
    loaded = Obfuscator.load(tmp_path / "ob.json")
    assert loaded.budget is None and loaded.budget_ == ob.budget_
    np.testing.assert_array_equal(loaded.release(points, rng=1), ob.release(points, rng=1))
    given.save(tmp_path / "given.json")
    state, arrays = read_model(tmp_path / "given.json", "Obfuscator")
    del state["budget"]  # the state an earlier privwatch wrote
    write_model(tmp_path / "old.json", "Obfuscator", state, arrays)
    assert "budget" not in json.loads((tmp_path / "old.json").read_text())["state"]
    assert Obfuscator.load(tmp_path / "old.json").budget_ == given.budget_
