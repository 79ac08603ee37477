"""Saved models are untrusted input (issue #19): a mutation fuzzer over real saved files.

Every mutation of a real file (byte flips, truncations, each JSON field replaced by a catalogue of
wrong values, array headers and data changed) must either raise the one named error,
:class:`~privwatch.exceptions.TamperedFileError` (or the memory-budget error for sizes that would
not fit), or load to a model whose outputs are finite and equal to the original's; never a raw
exception, never a silently different model.
"""

from __future__ import annotations

import json
import random
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from privwatch._serialization import read_model
from privwatch.estimators import PluginLift
from privwatch.exceptions import MemoryBudgetError, TamperedFileError

N_BYTE_MUTATIONS = 700
FIELD_VALUES: list[Any] = [
    None,
    0,
    -1,
    1e308,
    float("inf"),
    "x",
    "",
    [],
    {},
    [1e9],
    True,
    [[0]],
    "PluginLift",
    10**18,
]


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> tuple[PluginLift, pd.DataFrame, bytes]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.integers(0, 4, 300), "b": rng.choice(["x", "y", "*"], 300)})
    s = (X["a"] + rng.integers(0, 2, 300)) % 2
    est = PluginLift().fit(X, s)
    path = tmp_path_factory.mktemp("saved") / "plugin.json"
    est.save(path)
    return est, X, path.read_bytes()


def _outcome(path: Path, est: PluginLift, X: pd.DataFrame) -> str:
    """'error' (the named error), 'same' (loads and scores identically), or a failure reason."""
    try:
        loaded = PluginLift.load(path)
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


def _loads_cleanly(path: Path, X: pd.DataFrame) -> str:
    """'ok' when the file raises the named error or loads to a model that scores ``X`` without
    a raw exception (NaN only where a value is unseen, the documented convention)."""
    try:
        loaded = PluginLift.load(path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = loaded.log_lift(X)
    except (TamperedFileError, MemoryBudgetError):
        return "ok"
    except Exception as exc:
        return f"raw {type(exc).__name__}: {exc}"
    known = loaded.encoder_.transform(X) >= 0
    if np.isnan(got[known]).any():
        return "NaN log-lift for a known value"
    return "ok"


def _byte_mutations(data: bytes, n: int) -> Iterator[tuple[str, bytes]]:
    rnd = random.Random(19)
    for i in range(n):
        kind = i % 4
        buf = bytearray(data)
        if kind == 0:  # flip one bit
            j = rnd.randrange(len(buf))
            buf[j] ^= 1 << rnd.randrange(8)
            yield f"flip@{j}", bytes(buf)
        elif kind == 1:  # truncate
            j = rnd.randrange(len(buf))
            yield f"truncate@{j}", bytes(buf[:j])
        elif kind == 2:  # overwrite a byte with a random one
            j = rnd.randrange(len(buf))
            buf[j] = rnd.randrange(256)
            yield f"byte@{j}", bytes(buf)
        else:  # delete a span
            j = rnd.randrange(len(buf))
            yield f"delete@{j}", bytes(buf[:j] + buf[j + rnd.randrange(1, 20) :])


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list) and doc:
        yield from _paths(doc[0], (*prefix, 0))


def _field_mutations(data: bytes) -> Iterator[tuple[str, bytes]]:
    doc = json.loads(data)
    for path in _paths(doc):
        if not path:
            continue
        for value in FIELD_VALUES:
            mutated = json.loads(data)
            node = mutated
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
            yield f"{'/'.join(map(str, path))}={value!r}"[:80], json.dumps(mutated).encode()
        mutated = json.loads(data)
        node = mutated
        for key in path[:-1]:
            node = node[key]
        if isinstance(node, dict):
            del node[path[-1]]
            yield f"del {'/'.join(map(str, path))}", json.dumps(mutated).encode()


def test_roundtrip_is_exact(fitted, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    est, X, data = fitted
    path = tmp_path / "m.json"
    path.write_bytes(data)
    assert _outcome(path, est, X) == "same"


# --- every saved kind: one mutation fuzz ---------------------------------------------------


@dataclass
class SavedKind:
    """A real saved file of one kind, and how to judge a (mutated) copy of it: ``outputs``
    loads a file and returns the model's outputs on fixed inputs (deterministic)."""

    name: str
    data: bytes
    outputs: Callable[[Path], np.ndarray]
    want: np.ndarray


def _plugin_kind(tmp: Path) -> SavedKind:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.integers(0, 4, 300), "b": rng.choice(["x", "y", "*"], 300)})
    s = (X["a"] + rng.integers(0, 2, 300)) % 2
    PluginLift().fit(X, s).save(tmp / "plugin.json")
    return _kind("PluginLift", tmp / "plugin.json", lambda p: PluginLift.load(p).log_lift(X))


def _neural_kind(cls: Any, tmp: Path) -> SavedKind:
    g = np.random.default_rng(0)
    X = pd.DataFrame({"num": g.standard_normal(200), "cat": g.choice(["a", "b", "c"], 200)})
    s = np.where(X["num"] + g.standard_normal(200) > 0, "u", "v")
    cls(hidden=(4,), epochs=2, n_ensemble=2, rng=0).fit(X, s).save(tmp / "neural.json")
    return _kind(cls.__name__, tmp / "neural.json", lambda p: cls.load(p).log_lift(X))


def _posterior_kind(cls: Any, tmp: Path) -> SavedKind:
    g = np.random.default_rng(1)
    X = pd.DataFrame({"num": g.standard_normal(300), "cat": g.choice(["a", "b"], 300)})
    s = np.where(X["num"] + 0.5 * g.standard_normal(300) > 0, "u", "v")
    cls(rng=0).fit(X, s).save(tmp / "posterior.json")
    return _kind(cls.__name__, tmp / "posterior.json", lambda p: cls.load(p).log_lift(X))


def _obfuscator_kind(tmp: Path) -> SavedKind:
    from privwatch.adversarial import Obfuscator

    g = np.random.default_rng(2)
    points = g.normal(0.0, 300.0, (120, 2)) + np.repeat([[0.0, 0.0], [400.0, 0.0]], 60, axis=0)
    users = np.repeat([0, 1], 60)
    est = Obfuscator(
        budget=300.0, generator_hidden=(8,), classifier_hidden=(8,), max_iter=2, patience=2,
        classifier_epochs=1, generator_epochs=1, anchor_grid=4, rng=0,
    ).fit(points, users)  # fmt: skip
    est.save(tmp / "obfuscator.json")
    return _kind(
        "Obfuscator", tmp / "obfuscator.json", lambda p: Obfuscator.load(p).release(points, rng=0)
    )


def _generalisation_kind(tmp: Path) -> SavedKind:
    from privwatch.audit import run
    from privwatch.release import Generalisation

    g = np.random.default_rng(3)
    s = g.integers(0, 2, 400)
    df = pd.DataFrame(
        {
            "s": s.astype(str),
            "a": np.where(g.random(400) < 0.5, s, g.integers(0, 3, 400)).astype(str),
            "age": g.integers(18, 90, 400),
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run(
            source=df, sensitive="s", observed=["a", "age"], epsilon=0.5, bins={"age": 3},
            seed=0, checks=False,
        )  # fmt: skip
    result.generalisation().save(tmp / "mechanism.json")

    def outputs(p: Path) -> np.ndarray:
        applied = Generalisation.load(p).apply(df)
        return np.asarray(applied.released.astype(str).to_numpy(), dtype=str)

    return _kind("Generalisation", tmp / "mechanism.json", outputs)


def _learned_watchdog_kind(tmp: Path) -> SavedKind:
    """The learned watchdog's saved scorer (issue #41 item 4): a margin rule, so the file holds
    the scorer, its fold models and the recalibration."""
    from privwatch.audit import run
    from privwatch.watchdog import LearnedWatchdogMechanism

    g = np.random.default_rng(4)
    s = (g.random(600) < 0.3).astype(int)
    df = pd.DataFrame(g.standard_normal((600, 2)) + s[:, None] * 0.8, columns=["x0", "x1"])
    df["s"] = s
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run(
            source=df, sensitive="s", epsilon=0.5, estimator="quadratic_logistic", seed=0,
            checks=False,
        )  # fmt: skip
    result.mechanism().save(tmp / "learned.json")

    def outputs(p: Path) -> np.ndarray:
        released = LearnedWatchdogMechanism.load(p).apply(df)
        return np.asarray(released.astype(str).to_numpy(), dtype=str)

    return _kind("LearnedWatchdog", tmp / "learned.json", outputs)


def _kind(name: str, path: Path, outputs: Callable[[Path], np.ndarray]) -> SavedKind:
    return SavedKind(name, path.read_bytes(), outputs, outputs(path))


def _saved_kinds(tmp: Path) -> dict[str, Callable[[], SavedKind]]:
    from privwatch.estimators import ClassifierLift, DVLift, MixtureLift, PosteriorLift

    return {
        "PluginLift": lambda: _plugin_kind(tmp),
        "ClassifierLift": lambda: _neural_kind(ClassifierLift, tmp),
        "DVLift": lambda: _neural_kind(DVLift, tmp),
        "PosteriorLift": lambda: _posterior_kind(PosteriorLift, tmp),
        "MixtureLift": lambda: _posterior_kind(MixtureLift, tmp),
        "Obfuscator": lambda: _obfuscator_kind(tmp),
        "Generalisation": lambda: _generalisation_kind(tmp),
        "LearnedWatchdog": lambda: _learned_watchdog_kind(tmp),
    }


#: Kinds whose save/load is not yet routed through privwatch._serialization (their owner is
#: named; /work/markers/h6-fixes.md): strict xfails, so the fix is noticed.
NOT_CHECKED_YET: dict[str, str] = {}
KINDS = ["PluginLift", "ClassifierLift", "DVLift", "PosteriorLift", "MixtureLift", "Obfuscator",
         "Generalisation", "LearnedWatchdog"]  # fmt: skip


@pytest.fixture(scope="module")
def kinds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Callable[[], SavedKind]]:
    return _saved_kinds(tmp_path_factory.mktemp("kinds"))


def _judge(kind: SavedKind, path: Path, blob: bytes) -> str:
    """'error' (the named error), 'same' (loads, checksum verified, identical finite outputs),
    or a failure reason."""
    path.write_bytes(blob)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = kind.outputs(path)
    except (TamperedFileError, MemoryBudgetError):
        return "error"
    except Exception as exc:
        return f"raw {type(exc).__name__}: {str(exc)[:100]}"
    if got.dtype.kind == "f" and not np.isfinite(got).all():
        return "non-finite outputs"
    if got.shape != kind.want.shape or not np.array_equal(got, kind.want):
        return "loaded a silently different model"
    return "same"


def _mutations(data: bytes, n_bytes: int, n_fields: int | None) -> list[tuple[str, bytes]]:
    fields = list(_field_mutations(data))
    if n_fields is not None and n_fields < len(fields):
        fields = random.Random(19).sample(fields, n_fields)
    return list(_byte_mutations(data, n_bytes)) + fields


def _fuzz(kind: SavedKind, tmp: Path, n_bytes: int, n_fields: int | None) -> dict[str, int]:
    counts = {"error": 0, "same": 0}
    failures = []
    mutations = _mutations(kind.data, n_bytes, n_fields)
    for label, blob in mutations:
        outcome = _judge(kind, tmp / "m.json", blob)
        if outcome in counts:
            counts[outcome] += 1
        else:
            failures.append(f"{label}: {outcome}")
    assert not failures, f"{kind.name}: {len(failures)} of {len(mutations)}: {failures[:8]}"
    assert counts["error"] > 0.9 * len(mutations)
    return counts


def _kind_params() -> list[Any]:
    return [
        pytest.param(
            k,
            id=k,
            marks=[pytest.mark.xfail(reason=NOT_CHECKED_YET[k], strict=True)]
            if k in NOT_CHECKED_YET
            else [],
        )
        for k in KINDS
    ]


@pytest.mark.parametrize("name", _kind_params())
def test_every_saved_kind_quick_mutation_sample(kinds, name: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """CI sample: 40 byte mutations and 40 field mutations of a real file of each kind."""
    kind = kinds[name]()
    assert _judge(kind, tmp_path / "m.json", kind.data) == "same"
    _fuzz(kind, tmp_path, 40, 40)


@pytest.mark.slow
@pytest.mark.parametrize("name", _kind_params())
def test_every_saved_kind_full_mutation_fuzz(kinds, name: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """700 byte flips/truncations/overwrites/deletions and every JSON field x 14 wrong values
    (plus deletions) of a real file of each kind: each raises the named error or loads to the
    identical model (its SHA-256 verified)."""
    counts = _fuzz(kinds[name](), tmp_path, N_BYTE_MUTATIONS, None)
    assert sum(counts.values()) >= 1000


def test_field_mutations_recomputed_digest_still_checked(fitted, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An attacker who recomputes the state digest still meets the schema and range checks: the
    file raises the named error or gives a model that runs cleanly. (It may be a *different*
    valid model, e.g. a renamed category: a keyless digest cannot stop a deliberate rewrite; it
    stops corruption and naive edits, which the test above checks are always caught.)"""
    import hashlib

    _, X, data = fitted
    path = tmp_path / "m.json"
    failures = []
    for label, blob in _field_mutations(data):
        doc = json.loads(blob)
        state = doc.get("state") if isinstance(doc, dict) else None
        if isinstance(state, dict) and "state_sha256" in doc:
            text = json.dumps(state, sort_keys=True, separators=(",", ":"))
            doc["state_sha256"] = hashlib.sha256(text.encode()).hexdigest()
        path.write_text(json.dumps(doc))
        outcome = _loads_cleanly(path, X)
        if outcome != "ok":
            failures.append(f"{label}: {outcome}")
    assert not failures, failures[:10]


def test_huge_declared_array_is_a_budget_error_before_allocation(fitted, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, _, data = fitted
    doc = json.loads(data)
    doc["arrays"]["table"]["shape"] = [10**9, 10**5]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(MemoryBudgetError, match="asks for"):
        read_model(path, "PluginLift")


def test_wrong_kind_is_the_named_error(fitted, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, _, data = fitted
    path = tmp_path / "m.json"
    path.write_bytes(data)
    with pytest.raises(TamperedFileError, match="not a DVLift"):
        read_model(path, "DVLift")


def _obfuscator_file(tmp_path: Path, **changes: Any) -> Path:
    from privwatch._serialization import write_model
    from privwatch.adversarial import Obfuscator

    params = Obfuscator(budget=200.0).get_params()
    params.update(rng=None, callbacks=[], **changes)
    params["generator_hidden"] = list(params["generator_hidden"])
    params["classifier_hidden"] = list(params["classifier_hidden"])
    state = {
        "params": params,
        "users": [0, 1],
        "centre": [0.0, 0.0],
        "scale": 1.0,
        "best_epoch": 0,
        "val_accuracy": 0.5,
        "history": [],
    }
    path = tmp_path / "ob.json"
    write_model(path, "Obfuscator", state, {"w": np.zeros((200, 200), dtype=np.float32)})
    return path


def test_obfuscator_huge_hidden_layer_fails_fast(tmp_path: Path) -> None:
    """A (digest-consistent) file asking for hidden=[1e9] is refused before any layer is built."""
    from privwatch.adversarial import Obfuscator

    path = _obfuscator_file(tmp_path, generator_hidden=[10**9])
    start = time.perf_counter()
    with pytest.raises(TamperedFileError, match="generator sizes"):
        Obfuscator.load(path)
    assert time.perf_counter() - start < 1.0


def test_obfuscator_huge_anchor_grid_is_a_budget_error(tmp_path: Path) -> None:
    from privwatch.adversarial import Obfuscator

    path = _obfuscator_file(tmp_path, anchor_grid=10**5)
    start = time.perf_counter()
    with pytest.raises(MemoryBudgetError, match="`anchor_grid` asks for"):
        Obfuscator.load(path)
    assert time.perf_counter() - start < 1.0
