"""The Watchdog inside scikit-learn: Pipeline, GridSearchCV, set_output, and the sensitive
attribute given once (a column name in the constructor, or ``y``) — on COMPAS."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import KBinsDiscretizer

from privwatch import PrivacyWarning, ValidationError, Watchdog
from privwatch.datasets import COMPAS_OBSERVED, load_compas

pytestmark = pytest.mark.filterwarnings(
    "ignore:.*observed symbols have fewer than 5 samples",  # quantile bins x decile: thin cells
    "ignore:Bins whose width are too small:UserWarning",  # length of stay: many ties
)

COLUMNS = [*COMPAS_OBSERVED, "race"]
NUMERIC = ["age", "priors_count", "length_of_stay"]


@pytest.fixture(scope="module")
def compas() -> pd.DataFrame:
    return load_compas()[COLUMNS]


def _encode() -> ColumnTransformer:
    """Quantile bins of the numeric columns; sex, decile score and race pass through."""
    bins = KBinsDiscretizer(n_bins=4, encode="ordinal", strategy="quantile")
    return ColumnTransformer(
        [("bins", bins, NUMERIC)], remainder="passthrough", verbose_feature_names_out=False
    ).set_output(transform="pandas")


def _pipeline(epsilon: float = 0.5) -> Pipeline:
    return Pipeline([("encode", _encode()), ("watchdog", Watchdog(epsilon, sensitive="race"))])


def test_pipeline_fits_and_releases_compas(compas: pd.DataFrame) -> None:
    pipe = _pipeline().fit(compas)
    release = pipe.transform(compas)
    assert isinstance(release, pd.DataFrame) and len(release) == len(compas)
    assert "race" not in release.columns
    assert sorted(release.columns) == sorted(COMPAS_OBSERVED)
    # the same as encoding by hand and fitting the watchdog on the encoded table
    encoded = _encode().fit_transform(compas)
    by_hand = Watchdog(0.5, sensitive="race").fit(encoded)
    np.testing.assert_array_equal(pipe[-1].score_samples(encoded), by_hand.score_samples(encoded))
    assert pipe[-1].guarantee_ == by_hand.guarantee_
    flagged = by_hand.flag(encoded)
    assert 0 < flagged.mean() < 1  # a threshold that flags some records, not all
    assert (release.loc[flagged].astype(str) == "*").all().all()
    kept = release.loc[~flagged, by_hand.observed_].astype(str)
    pd.testing.assert_frame_equal(kept, encoded.loc[~flagged, by_hand.observed_].astype(str))
    assert list(pipe.get_feature_names_out()) == by_hand.observed_


def test_sensitive_as_y_through_a_pipeline(compas: pd.DataFrame) -> None:
    X, y = compas.drop(columns="race"), compas["race"]
    pipe = Pipeline([("encode", _encode()), ("watchdog", Watchdog(0.5))]).fit(X, y)
    named = _pipeline().fit(compas)
    assert pipe[-1].guarantee_ == named[-1].guarantee_
    assert pipe[-1].sensitive_labels_ == ["African-American", "Caucasian"]
    with pytest.raises(ValidationError, match="`y` must be None when `sensitive` names a column"):
        _pipeline().fit(compas, y)
    with pytest.raises(ValidationError, match="`y` must be the sensitive labels .* got None"):
        Pipeline([("encode", _encode()), ("watchdog", Watchdog(0.5))]).fit(X)


def test_y_is_never_silently_a_column_name(compas: pd.DataFrame) -> None:
    encoded = _encode().fit_transform(compas)
    with pytest.raises(ValidationError, match=r"got the string 'race'.*Watchdog\(sensitive="):
        Watchdog(0.5).fit(encoded, "race")
    with pytest.raises(ValidationError, match="`X` must be a DataFrame when `sensitive` names"):
        Watchdog(0.5, sensitive="race").fit(encoded.to_numpy())
    with pytest.raises(ValidationError, match="`sensitive` must be a column name or None"):
        Watchdog(0.5, sensitive=compas["race"]).fit(encoded)  # type: ignore[arg-type]


def test_set_output_and_clone(compas: pd.DataFrame) -> None:
    encoded = _encode().fit_transform(compas)
    wd = Watchdog(0.5, sensitive="race").set_output(transform="pandas")
    out = wd.fit(encoded).transform(encoded)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == wd.observed_
    default = clone(wd).set_output(transform="default").fit(encoded).transform(encoded)
    pd.testing.assert_frame_equal(out, default)
    with pytest.warns(PrivacyWarning, match="very records being released"):
        again = clone(wd).fit_transform(encoded)
    pd.testing.assert_frame_equal(again, out)


def _score(pipe: Pipeline, X: pd.DataFrame, y: object = None) -> float:
    """Held-out utility (nats) minus the held-out breach probability of the threshold (the
    held-out lift-privacy level is often inf: a tuple unseen in a fold rules a value out)."""
    ev = pipe[-1].evaluate(pipe[:-1].transform(X))
    return float(ev.utility.utility_mi - ev.guarantee.breach_probability)


@pytest.mark.filterwarnings("ignore::privwatch.PrivacyWarning")
def test_grid_search_over_epsilon_matches_a_manual_loop(compas: pd.DataFrame) -> None:
    grid = [0.2, 0.5, 1.0]
    folds = KFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(
        _pipeline(), {"watchdog__epsilon": grid}, scoring=_score, cv=folds, error_score="raise"
    ).fit(compas)
    manual = []
    for eps in grid:
        scores = []
        for train, test in folds.split(compas):
            pipe = clone(_pipeline()).set_params(watchdog__epsilon=eps)
            scores.append(_score(pipe.fit(compas.iloc[train]), compas.iloc[test]))
        manual.append(np.mean(scores))
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], manual)
    assert search.best_params_ == {"watchdog__epsilon": grid[int(np.argmax(manual))]}
    assert search.best_estimator_[-1].epsilon == search.best_params_["watchdog__epsilon"]
