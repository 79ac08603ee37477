"""The saved randomized release: its channel through the checked model file format.

A :class:`RandomizedMechanism` holds the observed tuples seen at fit time (as text), the tuples
released at random (``inputs``) with their channel rows over the output symbols (``outputs``:
tuples, ``-1`` for ``*``), the binning of numeric columns and the guarantee it was fitted at.
:meth:`RandomizedMechanism.apply` releases new records: a record of an input tuple draws its
symbol from the channel row with the caller's seed (the same seed, the same release), a record
of another known tuple is released as it is, and a record of a tuple never seen (or with a
missing value) as ``*``. The file is ``privwatch._serialization``'s: JSON with the channel as a
base64 array and SHA-256 digests; loading checks every field and never runs code.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..._rng import RNGLike, check_rng
from ..._serialization import read_model, write_model
from ...exceptions import TamperedFileError, ValidationError
from ...mechanisms import LiftChannel
from ...preprocessing import bin_columns
from ..hierarchies import SUPPRESSED, as_text
from ._release import RandomizedRelease, draw_symbols, symbols_as_frame

__all__ = ["RANDOMIZED_KIND", "RandomizedMechanism", "load_randomized"]

#: The ``kind`` of a saved randomized release in the checked model format.
RANDOMIZED_KIND = "RandomizedChannel"
_SEP = "\x1f"


class RandomizedMechanism:
    """A fitted randomized release (see the module docstring)."""

    def __init__(
        self,
        observed: list[str],
        tuples: list[list[str]],
        inputs: list[int],
        outputs: list[int],
        channel: np.ndarray,
        *,
        sensitive: str,
        epsilon: float,
        disclosure: str,
        status: str,
        bins: Mapping[str, Any] | None = None,
        input_name: str | None = None,
        input_sha256: str | None = None,
    ) -> None:
        self.observed = [str(c) for c in observed]
        self.tuples = [[str(v) for v in t] for t in tuples]
        self.inputs = np.asarray(inputs, dtype=np.int64)
        self.outputs = np.asarray(outputs, dtype=np.int64)
        self.channel = np.asarray(channel, dtype=np.float64)
        self.sensitive, self.epsilon, self.disclosure = sensitive, float(epsilon), disclosure
        self.status = status
        self.bins = {str(k): v for k, v in (bins or {}).items()}
        self.input_name, self.input_sha256 = input_name, input_sha256
        self._check()
        self._index = pd.Index([_SEP.join(t) for t in self.tuples])

    def _check(self) -> None:
        n, k = len(self.tuples), self.channel
        bad = []
        if any(len(t) != len(self.observed) for t in self.tuples):
            bad.append("a tuple's length differs from the observed columns'")
        if k.ndim != 2 or k.shape != (len(self.inputs), len(self.outputs)):
            bad.append(f"the channel's shape {k.shape} is not inputs x outputs")
        elif len(k) and (not np.isfinite(k).all() or (k < 0).any()
                         or np.abs(k.sum(1) - 1).max() > 1e-9):  # fmt: skip
            bad.append("the channel's rows are not probability vectors")
        if ((self.inputs < 0) | (self.inputs >= n)).any() or len(set(self.inputs)) < len(
            self.inputs
        ):
            bad.append("an input is not a distinct tuple index")
        if ((self.outputs < -1) | (self.outputs >= n)).any():
            bad.append("an output is not a tuple index or -1 ('*')")
        if self.disclosure not in ("both", "positive") or not np.isfinite(self.epsilon):
            bad.append("epsilon or disclosure is invalid")
        if bad:
            raise ValidationError(f"a randomized mechanism must be consistent; got: {bad[0]}.")

    @classmethod
    def from_release(
        cls,
        done: RandomizedRelease,
        *,
        bins: Mapping[str, Any] | None = None,
        input_name: str | None = None,
        input_sha256: str | None = None,
    ) -> RandomizedMechanism:
        """The mechanism of a :func:`~._release.randomize_release` result."""
        ch: LiftChannel = done.channel
        return cls(
            done.observed, done.tuples.astype(str).to_numpy().tolist(), ch.inputs.tolist(),
            ch.outputs.tolist(), ch.channel, sensitive="+".join(done.sensitive),
            epsilon=done.epsilon, disclosure=done.disclosure,
            status="met" if done.satisfied else "not_met",
            bins={k: v for k, v in (bins or {}).items() if k in done.observed},
            input_name=input_name, input_sha256=input_sha256,
        )  # fmt: skip

    def to_state(self) -> dict[str, Any]:
        return {
            "observed": self.observed,
            "sensitive": self.sensitive,
            "epsilon": self.epsilon,
            "disclosure": self.disclosure,
            "status": self.status,
            "bins": {k: v if isinstance(v, int) else list(v) for k, v in self.bins.items()},
            "input": {"name": self.input_name, "sha256": self.input_sha256},
            "tuples": self.tuples,
            "inputs": self.inputs.tolist(),
            "outputs": self.outputs.tolist(),
            "unseen": "released as '*' in every observed column",
        }

    def save(self, path: str | Path) -> Path:
        """Write the checked model file (kind ``RandomizedChannel``) atomically."""
        p = Path(path)
        write_model(p, RANDOMIZED_KIND, self.to_state(), {"channel": self.channel})
        return p

    @classmethod
    def load(cls, path: str | Path) -> RandomizedMechanism:
        """Read a file written by :meth:`save`; a tampered or foreign file raises
        :class:`~privwatch.exceptions.TamperedFileError`."""
        state, arrays = read_model(path, RANDOMIZED_KIND)
        try:
            return cls(
                state["observed"], state["tuples"], state["inputs"], state["outputs"],
                arrays["channel"], sensitive=state["sensitive"], epsilon=state["epsilon"],
                disclosure=state["disclosure"], status=state["status"], bins=state["bins"],
                input_name=state["input"]["name"], input_sha256=state["input"]["sha256"],
            )  # fmt: skip
        except (KeyError, TypeError, ValueError, ValidationError) as exc:
            raise TamperedFileError(
                f"`path` must be an intact privwatch model file; {path}: {exc}"
            ) from None

    def encode(self, df: pd.DataFrame) -> np.ndarray:
        """Each record's tuple index (-1: a tuple never seen, or a missing value)."""
        absent = [c for c in self.observed if c not in df.columns]
        if absent:
            raise ValidationError(
                f"the new data must have the observed columns of the mechanism; missing {absent}."
            )
        frame = df[self.observed].reset_index(drop=True)
        missing = frame.isna().any(axis=1).to_numpy()
        if self.bins:
            frame = bin_columns(frame, self.bins)
        keys = [_SEP.join(r) for r in zip(*(as_text(frame[c]) for c in self.observed), strict=True)]
        pos = self._index.get_indexer(pd.Index(keys)) if keys else np.zeros(0, dtype=np.int64)
        return np.where(missing, -1, pos).astype(np.int64)

    def apply(self, df: pd.DataFrame, rng: RNGLike = None) -> pd.DataFrame:
        """The released observed columns of ``df`` (one row per record, in order), drawn with
        ``rng`` (an int seed gives the same release every time)."""
        codes = self.encode(df)
        known = codes >= 0
        ch = LiftChannel(
            self.epsilon, self.disclosure, self.inputs, self.inputs, self.outputs,
            self.channel, 0.0, 0.0, 0.0, None, False, 0, "saved",
        )  # fmt: skip
        symbols = np.full(len(codes), -1, dtype=np.int64)
        symbols[known] = draw_symbols(ch, codes[known], check_rng(rng))
        tuples = pd.DataFrame(self.tuples, columns=self.observed)
        if not len(tuples):
            return pd.DataFrame(SUPPRESSED, index=range(len(codes)), columns=self.observed)
        return symbols_as_frame(symbols, tuples)


def load_randomized(path: str | Path) -> RandomizedMechanism:
    """:meth:`RandomizedMechanism.load`."""
    return RandomizedMechanism.load(path)
