"""``suppression="randomize"`` (``--suppression randomize``) through the audit: the search's
suppressed cells drawn through the LP channel, its figures in leakage.json, its channel saved
and applied with a seed (issue 41 item 1)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import privwatch as pw
from privwatch.datasets import COMPAS_BINS, COMPAS_OBSERVED, load_compas
from privwatch.exceptions import ValidationError
from privwatch.release.randomized import RANDOMIZED_KIND, RandomizedMechanism


def _run(**options: Any) -> pw.audit.Audit:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pw.audit.run(
            source=load_compas(), sensitive="race", observed=list(COMPAS_OBSERVED),
            bins=dict(COMPAS_BINS), epsilon=1.0, folds=5, seed=0, checks=False, **options,
        )  # fmt: skip


def test_randomized_suppression_is_released_saved_and_applied(tmp_path: Any) -> None:
    star = _run()
    rand = _run(suppression="randomize")
    assert "suppression" not in star.leakage["release"]
    sup = rand.leakage["release"]["suppression"]
    assert sup["randomized"] is True and sup["verdict"] == "met"
    assert rand.satisfied
    assert sup["information_nats"] > sup["star_information_nats"]
    assert sup["star_information_nats"] == pytest.approx(star.leakage["release"]["entropy_nats"])
    assert rand.leakage["utility"]["information_nats"] == pytest.approx(sup["information_nats"])
    labels = dict(rand.rows())
    assert labels["suppressed cells"].startswith("randomized")
    mech = rand.mechanism()
    assert isinstance(mech, RandomizedMechanism)
    path = mech.save(tmp_path / "m.json")
    assert RANDOMIZED_KIND in path.read_text()
    back = RandomizedMechanism.load(path)
    a = back.apply(load_compas(), rng=5)
    b = back.apply(load_compas(), rng=5)
    assert a.equals(b)
    # records outside the randomized cells get the audit's release exactly
    drawn = sup["randomized_records"]
    same = (a.astype(str).to_numpy() == rand.release.astype(str).to_numpy()).all(axis=1)
    assert (~same).sum() <= drawn


def test_an_unknown_suppression_is_refused() -> None:
    with pytest.raises(ValidationError, match="suppression"):
        pw.audit.AuditSpec(epsilon=1.0, suppression="blur")
