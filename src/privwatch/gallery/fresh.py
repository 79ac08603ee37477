"""A fresh attacker: trained on a frozen mechanism's releases, scored on held-out releases.

A learned mechanism is trained against its own adversary, and can fool that adversary alone
(Romanelli et al. §II: the generator "swaps" outputs between users and the classifier of the
previous round is lost). The privacy figure that counts is that of an attacker trained *after*
the mechanism is frozen. This is also Romanelli et al.'s Table II protocol: a classifier trained
on the obfuscated data (batch 32, step 1e-3, 100 epochs), accuracy and F1 on train, validation
and test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["attack_fresh_releases", "fresh_attacker", "fresh_attacker_cv"]


def fresh_attacker(
    release_train: ArrayLike,
    sensitive_train: ArrayLike,
    release_test: ArrayLike,
    sensitive_test: ArrayLike,
    *,
    hidden: tuple[int, ...] = (128, 128),
    epochs: int = 100,
    seed: int = 0,
) -> dict[str, Any]:
    """Fit an MLP on ``(release_train, sensitive_train)`` (10 % held out for validation) and
    report accuracy and macro F1 on train, validation and test, with the majority-class rate.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = rng.integers(0, 2, 400)
    >>> z = s[:, None] + 0.1 * rng.standard_normal((400, 2))
    >>> fresh_attacker(z[:300], s[:300], z[300:], s[300:], epochs=50)["test_accuracy"] > 0.9
    True
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.metrics import accuracy_score, f1_score
    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    z_tr, s_tr = np.asarray(release_train, dtype=float), np.asarray(sensitive_train)
    z_te, s_te = np.asarray(release_test, dtype=float), np.asarray(sensitive_test)
    z_fit, z_val, s_fit, s_val = train_test_split(
        z_tr, s_tr, test_size=0.1, random_state=seed, stratify=s_tr
    )
    scale = StandardScaler().fit(z_fit)
    clf = MLPClassifier(
        hidden, batch_size=32, learning_rate_init=1e-3, max_iter=epochs, random_state=seed
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(scale.transform(z_fit), s_fit)
    out: dict[str, Any] = {}
    for part, z, s in (("train", z_fit, s_fit), ("validation", z_val, s_val), ("test", z_te, s_te)):
        pred = clf.predict(scale.transform(z))
        out[f"{part}_accuracy"] = float(accuracy_score(s, pred))
        out[f"{part}_f1"] = float(f1_score(s, pred, average="macro"))
    out["majority_rate_test"] = float(np.max(np.bincount(s_te)) / len(s_te))
    return out


def attack_fresh_releases(
    release: Callable[[np.ndarray, int], np.ndarray],
    train: ArrayLike,
    train_sensitive: ArrayLike,
    test: ArrayLike,
    test_sensitive: ArrayLike,
    *,
    repeat: int,
    seed: int,
) -> dict[str, Any]:
    """:func:`fresh_attacker` on ``repeat`` fresh releases of every training and test record of
    a frozen mechanism (``release(observed, seed)``; seeds ``seed + 4`` and ``seed + 5``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((200, 2))
    >>> s = (x[:, 0] > 0).astype(int)
    >>> noise = lambda obs, sd: obs + np.random.default_rng(sd).normal(0, 0.1, obs.shape)
    >>> attack_fresh_releases(noise, x[:150], s[:150], x[150:], s[150:], repeat=2, seed=0)[
    ...     "test_accuracy"] > 0.9
    True
    """
    train_a, test_a = np.asarray(train), np.asarray(test)
    return fresh_attacker(
        release(np.repeat(train_a, repeat, axis=0), seed + 4),
        np.repeat(np.asarray(train_sensitive), repeat),
        release(np.repeat(test_a, repeat, axis=0), seed + 5),
        np.repeat(np.asarray(test_sensitive), repeat),
        seed=seed,
    )


def fresh_attacker_cv(
    release: ArrayLike, sensitive: ArrayLike, *, folds: int = 5, seed: int = 0
) -> dict[str, Any]:
    """The same attacker, cross-validated on one set of frozen releases (when only the held-out
    releases were kept): trained on ``folds - 1`` folds, scored on the last, accuracy and macro
    F1 averaged over the folds.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = rng.integers(0, 2, 300)
    >>> z = s[:, None] + 0.1 * rng.standard_normal((300, 2))
    >>> fresh_attacker_cv(z, s)["accuracy"] > 0.9
    True
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import StratifiedKFold, cross_validate
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    z, s = np.asarray(release, dtype=float), np.asarray(sensitive)
    clf = make_pipeline(
        StandardScaler(),
        MLPClassifier(
            (128, 128), batch_size=32, learning_rate_init=1e-3, max_iter=100, random_state=seed
        ),
    )
    cv = StratifiedKFold(folds, shuffle=True, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = cross_validate(clf, z, s, cv=cv, scoring=("accuracy", "f1_macro"))
    return {
        "accuracy": float(np.mean(res["test_accuracy"])),
        "f1": float(np.mean(res["test_f1_macro"])),
        "folds": folds,
        "n": len(s),
        "majority_rate": float(np.max(np.bincount(s)) / len(s)),
    }
