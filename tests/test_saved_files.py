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
import warnings
from collections.abc import Iterator
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


def test_mutation_fuzz_over_a_real_saved_file(fitted, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    est, X, data = fitted
    path = tmp_path / "m.json"
    mutations = list(_byte_mutations(data, N_BYTE_MUTATIONS)) + list(_field_mutations(data))
    assert len(mutations) >= 1000
    failures, counts = [], {"error": 0, "same": 0}
    for label, blob in mutations:
        path.write_bytes(blob)
        outcome = _outcome(path, est, X)
        if outcome in counts:
            counts[outcome] += 1
        else:
            failures.append(f"{label}: {outcome}")
    assert not failures, f"{len(failures)} of {len(mutations)} mutations: {failures[:10]}"
    assert counts["error"] > 0.9 * len(mutations)


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

    with pytest.raises(TamperedFileError, match="generator sizes"):
        Obfuscator.load(_obfuscator_file(tmp_path, generator_hidden=[10**9]))


def test_obfuscator_huge_anchor_grid_is_a_budget_error(tmp_path: Path) -> None:
    from privwatch.adversarial import Obfuscator

    with pytest.raises(MemoryBudgetError, match="`anchor_grid` asks for"):
        Obfuscator.load(_obfuscator_file(tmp_path, anchor_grid=10**5))
