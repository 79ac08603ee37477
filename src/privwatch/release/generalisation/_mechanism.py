"""The fitted generalisation as a mechanism: fit once, save, apply to new batches.

A :class:`Generalisation` is the table of every observed value tuple seen at fit time (after
binning) with its released tuple, as :func:`~privwatch.release.find_release` chose it, together
with the binning of numeric columns (explicit cut points) and the guarantee the audit verified.
Global and local recoding both release a function of the input tuple, so the table is the whole
mechanism. It is saved as JSON in the checked privwatch model format (schema and SHA-256
verified on load; :mod:`._file_format`); loading it runs no code.

**Rule for values never seen at fit time**: a record whose tuple of (binned) observed values is
not in the table, or that has a missing observed value, is released as the suppressed cell,
``*`` in every observed column, and counted in :attr:`AppliedRelease.n_unseen`. The guarantee
is exact for the fitted records only; for a new batch, the audit's held-out check is the
estimate of what it is worth, and auditing the batch again measures it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ..._memory import check_allocation
from ..._rng import RNGLike, check_rng
from ..._serialization import read_model, reconstructing, write_model
from ..._validation import check_nonnegative, short_repr
from ...exceptions import ValidationError
from ...mechanisms import FiniteMechanism, Privacy, check_codes
from ...preprocessing import BinSpec, bin_columns
from ..cells import DISCLOSURES
from ..hierarchies import SUPPRESSED, as_text
from ..search import ReleaseResult
from ._applied_release import AppliedRelease
from ._file_format import (
    MECHANISM_FORMAT,
    MECHANISM_KIND,
    MECHANISM_VERSION,
    STATUSES,
    UNSEEN_RULE,
    check_bins,
    check_input,
    check_observed,
    check_rows,
    check_state_envelope,
)

__all__ = [
    "MECHANISM_FORMAT",
    "AppliedRelease",
    "Generalisation",
    "apply_mechanism",
    "load_mechanism",
]

_SEP = "\x1f"


def _keys(frame: pd.DataFrame, observed: Sequence[str]) -> pd.Series:
    """One text key per row: the observed values as a hierarchy file writes them, joined."""
    text = [as_text(frame[c].reset_index(drop=True)) for c in observed]
    out = text[0]
    for t in text[1:]:
        out = out + _SEP + t
    return out


def _installed_version() -> str:
    try:
        return metadata.version("privwatch")
    except metadata.PackageNotFoundError:  # pragma: no cover - always installed in practice
        return "0+unknown"


class Generalisation(FiniteMechanism):
    """A fitted generalisation: each observed tuple seen at fit time and its released tuple.

    Built by :meth:`from_release` from a searched release, or read by :meth:`load`. As a
    :class:`~privwatch.mechanisms.FiniteMechanism` it is deterministic; its alphabets are:

    * inputs (rows of :meth:`channel`, codes of :meth:`release`): ``0 .. n - 1`` are the fitted
      tuples in the order of ``tuples``; code ``n`` (:attr:`unseen_code`) stands for every
      tuple not seen at fit time (or with a missing value);
    * outputs (columns of :meth:`channel`): :attr:`output_tuples`, the distinct released tuples
      in order of first appearance in ``released``, then the suppressed cell (``*`` in every
      column) if no fitted tuple is released as it.

    :meth:`encode`, :meth:`decode` and :meth:`apply` go between these codes and data frames.

    Parameters
    ----------
    observed : sequence of str
        The observed columns.
    tuples : sequence of sequences
        The fitted observed tuples (after binning), one value per observed column; distinct.
    released : sequence of sequences
        ``released[i]``: the released tuple of ``tuples[i]``.
    sensitive : str
        The sensitive column the guarantee is about.
    epsilon : float
        The lift-privacy level the fitted release meets on the fitted records (nats).
    disclosure : {"both", "positive"}
        Two-sided (|log-lift|) or one-sided (log-lift) lift privacy.
    method : str
        How the release was found (``ReleaseResult.method``, e.g. ``"global"`` or ``"local"``).
    status : {"met", "not_met"}
        Whether the audit found the release to meet its guarantee (held-out check included).
    bins : mapping, optional
        Cut points (or quantile bin counts) of numeric observed columns, as taken by
        :func:`privwatch.preprocessing.bin_columns`; applied before the table is looked up.
    input_name, input_sha256 : str, optional
        The fitted input file's name and SHA-256.
    privwatch_version : str, optional
        The privwatch version that fitted it (default: the installed one).

    Examples
    --------
    >>> g = Generalisation(["age"], [["30"], ["40"]], [["30-40"], ["30-40"]],
    ...                    sensitive="s", epsilon=0.5, method="global", status="met")
    >>> g.channel().tolist()
    [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
    >>> g.output_tuples
    [('30-40',), ('*',)]
    >>> out = g.apply(pd.DataFrame({"age": [30, 40, 50]}))
    >>> out.released["age"].tolist(), out.n_unseen
    (['30-40', '30-40', '*'], 1)
    """

    #: What happens to a tuple not seen at fit time (saved with the generalisation).
    unseen_rule = UNSEEN_RULE

    def __init__(
        self,
        observed: Sequence[str],
        tuples: Sequence[Sequence[Any]],
        released: Sequence[Sequence[Any]],
        *,
        sensitive: str,
        epsilon: float,
        disclosure: str = "both",
        method: str,
        status: str,
        bins: Mapping[str, BinSpec] | None = None,
        input_name: str | None = None,
        input_sha256: str | None = None,
        privwatch_version: str | None = None,
    ) -> None:
        self.observed = check_observed(observed)
        width = len(self.observed)
        self.tuples = check_rows(tuples, width, "tuples")
        self.released = check_rows(released, width, "released")
        if len(self.released) != len(self.tuples):
            raise ValidationError(
                f"`released` must have one row per row of `tuples` ({len(self.tuples)}); got "
                f"{len(self.released)}."
            )
        for value, name in ((sensitive, "sensitive"), (method, "method")):
            if not isinstance(value, str) or not value:
                raise ValidationError(f"`{name}` must be non-empty text; got {short_repr(value)}.")
        self.sensitive, self.method = sensitive, method
        self.epsilon = check_nonnegative(epsilon, "epsilon")
        if disclosure not in DISCLOSURES:
            raise ValidationError(f"`disclosure` must be one of {DISCLOSURES}; got {disclosure!r}.")
        if status not in STATUSES:
            raise ValidationError(f"`status` must be one of {STATUSES}; got {status!r}.")
        self.disclosure, self.status = disclosure, status
        self.bins = check_bins(bins, self.observed)
        self.input_name, self.input_sha256 = check_input(input_name, input_sha256)
        if privwatch_version is not None and not isinstance(privwatch_version, str):
            raise ValidationError(
                f"`privwatch_version` must be text or None; got {short_repr(privwatch_version)}."
            )
        self.privwatch_version = (
            _installed_version() if privwatch_version is None else privwatch_version
        )
        self._build_codes()

    def _build_codes(self) -> None:
        table = pd.DataFrame(self.tuples, columns=list(self.observed), dtype=object).astype(str)
        self._index = pd.Index(_keys(table, self.observed))
        if not self._index.is_unique:
            dup = self._index[self._index.duplicated()][0].split(_SEP)
            raise ValidationError(f"`tuples` must be distinct; got {dup!r} more than once.")
        outputs: dict[tuple[Any, ...], int] = {}
        codes = [outputs.setdefault(self._typed(r), len(outputs)) for r in self.released]
        suppressed = (SUPPRESSED,) * len(self.observed)
        self._suppressed_code = outputs.setdefault(self._typed(suppressed), len(outputs))
        self._output_of = np.array([*codes, self._suppressed_code], dtype=np.int64)
        self.output_tuples = [tuple(v for _, v in key) for key in outputs]

    @staticmethod
    def _typed(row: Sequence[Any]) -> tuple[Any, ...]:
        return tuple((type(v).__name__, v) for v in row)

    @property
    def unseen_code(self) -> int:
        """The input code of every tuple not seen at fit time (``len(tuples)``)."""
        return len(self.tuples)

    def channel(self) -> NDArray[np.float64]:
        """The deterministic channel ``k[x, y]``: 1 where input ``x`` is released as ``y``.

        Rows: the fitted tuples in the order of ``tuples``, then :attr:`unseen_code`; columns:
        :attr:`output_tuples`. Every row holds one 1.
        """
        shape = (len(self._output_of), len(self.output_tuples))
        check_allocation("Generalisation.channel()", shape)
        k = np.zeros(shape)
        k[np.arange(shape[0]), self._output_of] = 1.0
        return k

    def release(self, observed: ArrayLike, rng: RNGLike = None) -> NDArray[np.int64]:
        """The output code of each input code (deterministic: ``rng`` is checked, not used)."""
        check_rng(rng)
        return np.asarray(self._output_of[check_codes(observed, len(self._output_of))])

    @property
    def privacy(self) -> Privacy:
        """The lift privacy the audit verified, exact for the fitted records.

        ``lift_epsilon`` (two-sided disclosure) or ``positive_lift_epsilon`` (one-sided);
        guaranteed on the fitted distribution, an estimate for new records (see ``status``).
        """
        measure = "lift_epsilon" if self.disclosure == "both" else "positive_lift_epsilon"
        return Privacy(measure, self.epsilon, True)

    def encode(self, df: pd.DataFrame) -> NDArray[np.int64]:
        """The input code of each record of ``df`` (:attr:`unseen_code` for a tuple not seen at
        fit time or with a missing observed value), after binning its numeric columns."""
        if not isinstance(df, pd.DataFrame):
            raise ValidationError(f"`df` must be a pandas DataFrame; got {type(df).__name__}.")
        obs = list(self.observed)
        absent = [c for c in obs if c not in df.columns]
        if absent:
            raise ValidationError(
                f"the new data must have the observed columns of the mechanism; missing {absent}."
            )
        frame = df[obs].reset_index(drop=True)
        missing = frame.isna().any(axis=1).to_numpy()
        if self.bins:
            frame = bin_columns(frame.fillna({c: np.nan for c in self.bins}), self.bins)
        return self.encode_binned(frame, missing)

    def encode_binned(self, frame: pd.DataFrame, missing: Any = None) -> NDArray[np.int64]:
        """:meth:`encode` of rows whose numeric columns are binned already (their bins' labels,
        as an engine's distinct tuples hold them); a row with a missing value (or flagged in
        ``missing``) is unseen: its key is never used, and the others' text does not depend
        on it."""
        frame = frame[list(self.observed)].reset_index(drop=True).astype(object)
        gap = frame.isna().any(axis=1).to_numpy() if missing is None else np.asarray(missing)
        pos = self._index.get_indexer(pd.Index(_keys(frame, self.observed)))
        return np.where((pos < 0) | gap, self.unseen_code, pos).astype(np.int64)

    def decode(self, released: ArrayLike) -> pd.DataFrame:
        """The released tuples of output codes, one column per observed column."""
        codes = check_codes(released, len(self.output_tuples))
        out = pd.DataFrame(index=range(len(codes)))
        for j, c in enumerate(self.observed):
            column = np.empty(len(self.output_tuples), dtype=object)
            column[:] = [t[j] for t in self.output_tuples]
            out[c] = column[codes]
        return out

    def apply(self, df: pd.DataFrame) -> AppliedRelease:
        """Release the records of ``df`` (see the module docstring for unseen values)."""
        codes = self.encode(df)
        return AppliedRelease(
            self.decode(self.release(codes)),
            codes == self.unseen_code,
            np.arange(len(df), dtype=np.int64),
        )

    @classmethod
    def from_release(
        cls,
        found: ReleaseResult,
        *,
        sensitive: str,
        observed: Sequence[str],
        bins: Mapping[str, BinSpec] | None = None,
        status: str | None = None,
        table: pd.DataFrame | None = None,
        input_name: str | None = None,
        input_sha256: str | None = None,
    ) -> Generalisation:
        """The generalisation of a searched release (:func:`~privwatch.release.find_release`).

        ``table`` holds one row per fitted tuple: the ``observed`` columns (as text) and
        ``released:<column>`` for each; by default it is built from ``found.mapping``. ``bins``
        of columns outside ``observed`` are dropped; ``status`` defaults to ``found``'s.
        """
        obs = list(check_observed(observed))
        if table is None:
            table = pd.DataFrame({c: as_text(found.mapping[c]) for c in obs}).join(
                found.mapping[[f"release_{c}" for c in obs]].astype(str)
            )
            table.columns = [*obs, *(f"released:{c}" for c in obs)]
        return cls(
            obs,
            table[obs].to_numpy(dtype=object).tolist(),
            table[[f"released:{c}" for c in obs]].to_numpy(dtype=object).tolist(),
            sensitive=sensitive,
            epsilon=found.epsilon,
            disclosure=found.disclosure,
            method=found.method,
            status=status if status is not None else ("met" if found.satisfied else "not_met"),
            bins={k: v for k, v in (bins or {}).items() if k in obs},
            input_name=input_name,
            input_sha256=input_sha256,
        )

    def to_state(self) -> dict[str, Any]:
        """The JSON-ready state saved by :meth:`save` (format ``privwatch-generalisation`` 1)."""
        return {
            "format": MECHANISM_FORMAT,
            "version": MECHANISM_VERSION,
            "privwatch_version": self.privwatch_version,
            "sensitive": self.sensitive,
            "observed": list(self.observed),
            "bins": {k: v if isinstance(v, int) else list(v) for k, v in self.bins.items()},
            "epsilon": self.epsilon,
            "disclosure": self.disclosure,
            "method": self.method,
            "status": self.status,
            "unseen_rule": self.unseen_rule,
            "input": {"sha256": self.input_sha256, "name": self.input_name},
            "tuples": [list(r) for r in self.tuples],
            "released": [list(r) for r in self.released],
        }

    def save(self, path: str | Path) -> Path:
        """Write a checked privwatch model file (kind ``Generalisation``) to ``path``, atomically
        (a temporary file beside it, then renamed)."""
        p = Path(path)
        write_model(p, MECHANISM_KIND, self.to_state(), {})
        return p

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> Generalisation:
        """The generalisation of a state written by :meth:`to_state` (every field checked)."""
        if not isinstance(state, Mapping):
            raise ValidationError(f"`state` must be a mapping; got {type(state).__name__}.")
        check_state_envelope(state)
        return cls(
            state["observed"],
            state["tuples"],
            state["released"],
            sensitive=state["sensitive"],
            epsilon=state["epsilon"],
            disclosure=state["disclosure"],
            method=state["method"],
            status=state["status"],
            bins=state["bins"],
            input_name=state["input"]["name"],
            input_sha256=state["input"]["sha256"],
            privwatch_version=state["privwatch_version"],
        )

    @classmethod
    def load(cls, path: str | Path) -> Generalisation:
        """Read a file written by :meth:`save` (or by privwatch's earlier ``save_mechanism``).

        The checksum and schema are verified before anything is built; a tampered, truncated or
        foreign file raises :class:`~privwatch.exceptions.TamperedFileError`.
        """
        state, _ = read_model(path, MECHANISM_KIND)
        with reconstructing(path):
            return cls.from_state(state)

    def __repr__(self) -> str:
        return (
            f"Generalisation(observed={list(self.observed)!r}, {len(self.tuples)} tuples -> "
            f"{len(self.output_tuples)} releases, epsilon={self.epsilon!r}, "
            f"disclosure={self.disclosure!r}, status={self.status!r})"
        )


def load_mechanism(path: str | Path) -> Generalisation:
    """:meth:`Generalisation.load` as a function (the name of earlier privwatch versions)."""
    return Generalisation.load(path)


def apply_mechanism(mechanism: Generalisation, df: pd.DataFrame) -> AppliedRelease:
    """``mechanism.apply(df)`` (:meth:`Generalisation.apply`) as a function."""
    if not isinstance(mechanism, Generalisation):
        raise ValidationError(
            "`mechanism` must be a Generalisation (Generalisation.load(path)); got "
            f"{type(mechanism).__name__}."
        )
    return mechanism.apply(df)
