"""Saved neural lift estimators are untrusted input (issue #19): the mutation fuzzer of
tests/test_saved_files.py over real ClassifierLift / DVLift files. Every mutation raises the one
named error (or the memory-budget error) or loads to a model that scores identically."""

from __future__ import annotations

import hashlib
import json
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from privwatch.estimators import ClassifierLift, DVLift
from privwatch.exceptions import MemoryBudgetError, TamperedFileError
from tests.test_saved_files import _byte_mutations, _field_mutations

CLASSES = [ClassifierLift, DVLift]


def _data() -> tuple[Any, np.ndarray]:
    import pandas as pd

    g = np.random.default_rng(0)
    X = pd.DataFrame({"num": g.standard_normal(200), "cat": g.choice(["a", "b", "c"], 200)})
    s = np.where(X["num"] + g.standard_normal(200) > 0, "u", "v")
    return X, s


@pytest.fixture(scope="module", params=CLASSES, ids=lambda c: c.__name__)
def saved(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    cls = request.param
    X, s = _data()
    est = cls(hidden=(4,), epochs=2, n_ensemble=2, rng=0).fit(X, s)
    path = tmp_path_factory.mktemp("neural") / "model.json"
    est.save(path)
    return cls, est, X, path.read_bytes()


def _outcome(cls: Any, path: Path, est: Any, X: Any) -> str:
    try:
        loaded = cls.load(path)
    except (TamperedFileError, MemoryBudgetError):
        return "error"
    except Exception as exc:
        return f"raw {type(exc).__name__}: {exc}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = loaded.log_lift(X), est.log_lift(X)
    if np.isnan(got).any() or not np.array_equal(got, want):
        return "loaded a silently different model"
    return "same"


def test_roundtrip_is_exact(saved: Any, tmp_path: Path) -> None:
    cls, est, X, data = saved
    path = tmp_path / "m.json"
    path.write_bytes(data)
    assert _outcome(cls, path, est, X) == "same"
    assert not (tmp_path / "m.json.safetensors").exists()  # one checksummed file


@pytest.mark.slow  # > 10 s on the shared 2-core machine
def test_mutation_fuzz_over_a_real_saved_file(saved: Any, tmp_path: Path) -> None:
    cls, est, X, data = saved
    path = tmp_path / "m.json"
    mutations = list(_byte_mutations(data, 300)) + list(_field_mutations(data))
    failures, counts = [], {"error": 0, "same": 0}
    for label, blob in mutations:
        path.write_bytes(blob)
        outcome = _outcome(cls, path, est, X)
        if outcome in counts:
            counts[outcome] += 1
        else:
            failures.append(f"{label}: {outcome}")
    assert not failures, f"{len(failures)} of {len(mutations)} mutations: {failures[:10]}"
    assert counts["error"] > 0.9 * len(mutations)


def _rewritten(data: bytes, tmp_path: Path, edit: Any) -> Path:
    """The file with its state edited and its digest recomputed (a deliberate rewrite)."""
    doc = json.loads(data)
    edit(doc["state"])
    text = json.dumps(doc["state"], sort_keys=True, separators=(",", ":"))
    doc["state_sha256"] = hashlib.sha256(text.encode()).hexdigest()
    path = tmp_path / "rewritten.json"
    path.write_text(json.dumps(doc))
    return path


def test_recomputed_digest_still_meets_the_checks(saved: Any, tmp_path: Path) -> None:
    """Even with the digest recomputed, a state that does not match the stored weights is
    refused before any network is built (hidden=[1e9] fails fast, not by allocating)."""
    cls, _, _, data = saved
    edits = {
        "hidden": lambda st: st["params"].update(hidden=[10**9]),
        "n_ensemble": lambda st: st["params"].update(n_ensemble=10**6),
        "dropout": lambda st: st["params"].update(dropout=0.5),
        "labels": lambda st: st.update(sensitive_labels=["u", "v", "w"]),
        "scale": lambda st: st["preprocessor"]["numeric"]["num"].__setitem__(1, 0.0),
        "columns": lambda st: st["preprocessor"].update(columns=["num"]),
    }
    for name, edit in edits.items():
        start = time.perf_counter()
        with pytest.raises(TamperedFileError):
            cls.load(_rewritten(data, tmp_path, edit))
        assert time.perf_counter() - start < 2.0, name
