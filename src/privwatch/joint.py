"""The :class:`Joint` container: a joint pmf ``p[s, x]`` with the labels of both alphabets."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from . import measures
from ._encoder import factorize_sorted, joint_counts
from ._validation import DEFAULT_ATOL, check_channel, check_nonnegative, check_pmf
from .exceptions import PrivacyWarning, ValidationError
from .preprocessing import DEFAULT_MAX_LEVELS, ObservedEncoder, check_discrete

__all__ = ["Joint"]

FloatArray = NDArray[np.float64]

#: Cells with fewer samples than this make a plug-in lift estimate unreliable.
FEW_SAMPLES = 5


class Joint:
    """A joint pmf ``p[s, x]`` (rows: sensitive values, columns: observed values) with labels.

    Parameters
    ----------
    p : array_like, shape (n_sensitive, n_observed)
        Joint probability mass function; validated (finite, non-negative, sums to 1).
    sensitive_labels, observed_labels : sequence, optional
        Labels of the rows and columns (default ``0 .. n - 1``).
    sensitive_name, observed_name : str
        Names of the two variables, used in reports.
    counts : array_like of int, optional
        The sample counts behind a plug-in estimate (set by :meth:`from_samples`).
    atol : float
        Tolerance on the normalisation of ``p``.

    Examples
    --------
    >>> j = Joint([[0.4, 0.1], [0.1, 0.4]], sensitive_labels=["a", "b"])
    >>> j.p_sensitive
    array([0.5, 0.5])
    >>> round(j.mutual_information(base=2), 4)
    0.2781
    """

    def __init__(
        self,
        p: ArrayLike,
        sensitive_labels: Sequence[Any] | None = None,
        observed_labels: Sequence[Any] | None = None,
        *,
        sensitive_name: str = "sensitive",
        observed_name: str = "observed",
        counts: ArrayLike | None = None,
        atol: float = DEFAULT_ATOL,
    ) -> None:
        self.p = check_pmf(p, atol=atol)
        n_s, n_x = self.p.shape
        self.sensitive_labels = self._labels(sensitive_labels, n_s, "sensitive_labels")
        self.observed_labels = self._labels(observed_labels, n_x, "observed_labels")
        self.sensitive_name = sensitive_name
        self.observed_name = observed_name
        self.counts = None if counts is None else np.asarray(counts, dtype=np.int64)
        if self.counts is not None and self.counts.shape != self.p.shape:
            raise ValidationError(
                f"`counts` must have the shape of p {self.p.shape}; got {self.counts.shape}."
            )

    @staticmethod
    def _labels(labels: Sequence[Any] | None, n: int, name: str) -> list[Any]:
        if labels is None:
            return list(range(n))
        out = list(labels)
        if len(out) != n:
            raise ValidationError(f"`{name}` must have {n} entries; got {len(out)}.")
        return out

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_samples(
        cls,
        observed: ArrayLike,
        sensitive: ArrayLike,
        *,
        smoothing: float = 0.0,
        sensitive_name: str = "sensitive",
        observed_name: str = "observed",
    ) -> Joint:
        """Plug-in estimate from two label arrays of equal length, observed first (the
        library-wide order of samples: ``LiftEstimator.fit(X, s)``, ``Watchdog.fit(X, sensitive)``).

        .. math:: \\hat p(s, x) = \\frac{n(s, x) + a}{n + a |S| |X|}

        with additive smoothing ``a`` (0: the empirical pmf). Only symbols seen in the samples
        form the alphabets. A :class:`PrivacyWarning` is issued when most observed symbols have
        fewer than 5 samples (the lift estimates are then unreliable).

        Examples
        --------
        >>> j = Joint.from_samples([0, 1] * 5 + [1] * 10, ["a"] * 10 + ["b"] * 10)
        >>> j.p
        array([[0.25, 0.25],
               [0.  , 0.5 ]])
        """
        x = np.asarray(observed)
        s = np.asarray(sensitive)
        if x.ndim != 1 or s.ndim != 1:
            raise ValidationError(
                f"`observed` and `sensitive` must be 1-dimensional; got shapes {x.shape}, "
                f"{s.shape}."
            )
        if len(s) != len(x):
            raise ValidationError(
                f"`sensitive` must have as many samples as `observed` ({len(x)}); got {len(s)}."
            )
        frame = pd.DataFrame({"__s": s, "__x": x})
        j = cls.from_frame(frame, "__s", ["__x"], smoothing=smoothing, max_levels=None)
        j.sensitive_name, j.observed_name = sensitive_name, observed_name
        j.observed_labels = [t[0] for t in j.observed_labels]
        return j

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        sensitive: str,
        observed: Sequence[str] | None = None,
        *,
        smoothing: float = 0.0,
        max_levels: int | None = DEFAULT_MAX_LEVELS,
    ) -> Joint:
        """Plug-in estimate from a DataFrame: a sensitive column and observed columns.

        The value tuples of the observed columns become the observed symbols (labels are
        tuples). Numeric columns with more than ``max_levels`` distinct values are refused with a
        message naming them: bin them first with :func:`privwatch.bin_columns`.
        """
        if not isinstance(df, pd.DataFrame):
            raise ValidationError(f"`df` must be a pandas DataFrame; got {type(df).__name__}.")
        if sensitive not in df.columns:
            raise ValidationError(f"`sensitive` must name a column of the data; got {sensitive!r}.")
        cols = [c for c in df.columns if c != sensitive] if observed is None else list(observed)
        if sensitive in cols:
            raise ValidationError(
                f"`observed` must not contain the sensitive column; got {sensitive!r} in it."
            )
        check_nonnegative(smoothing, "smoothing")
        if len(df) == 0:
            raise ValidationError("`df` must have at least one row; got 0.")
        check_discrete(df, cols, max_levels)
        s_codes, s_labels = encode_sensitive(df[sensitive], sensitive)
        encoder, counts, p = plugin_estimate(
            df, cols, s_codes, len(s_labels), smoothing=smoothing, max_levels=max_levels
        )
        warn_sparse(counts)
        return cls(
            p,
            s_labels,
            encoder.labels(),
            sensitive_name=str(sensitive),
            observed_name=",".join(map(str, cols)),
            counts=counts,
        )

    # ------------------------------------------------------------------ marginals, conditionals
    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.p.shape[0]), int(self.p.shape[1]))

    @property
    def p_sensitive(self) -> FloatArray:
        """Marginal pmf of the sensitive variable, ``P_S``."""
        return np.asarray(self.p.sum(axis=1), dtype=np.float64)

    @property
    def p_observed(self) -> FloatArray:
        """Marginal pmf of the observed variable, ``P_X``."""
        return np.asarray(self.p.sum(axis=0), dtype=np.float64)

    def observed_given_sensitive(self) -> FloatArray:
        """``P_{X|S}`` as a channel ``k[s, x]``; rows of zero-probability s are uniform."""
        return _conditional(self.p)

    def sensitive_given_observed(self) -> FloatArray:
        """``P_{S|X}`` as a channel ``k[x, s]``; rows of zero-probability x are uniform."""
        return _conditional(self.p.T)

    def through(self, k: ArrayLike, release_labels: Sequence[Any] | None = None) -> Joint:
        """Joint of sensitive and release when the observed value goes through ``k[x, y]``.

        .. math:: p(s, y) = \\sum_x p(s, x)\\, k(y|x)

        (Markov chain S - X - Y.)

        Examples
        --------
        >>> Joint([[0.4, 0.1], [0.1, 0.4]]).through([[0.5, 0.5], [0.5, 0.5]]).p
        array([[0.25, 0.25],
               [0.25, 0.25]])
        """
        kk = check_channel(k, n_inputs=self.shape[1])
        q = self.p @ kk
        return Joint(
            q / q.sum(),
            self.sensitive_labels,
            release_labels,
            sensitive_name=self.sensitive_name,
            observed_name="release",
        )

    # ------------------------------------------------------------------ measures
    def mutual_information(self, *, base: float | None = None) -> float:
        """I(S; X); see :func:`privwatch.measures.mutual_information`."""
        return measures.mutual_information(self.p, base=base)

    def log_lift(self, *, base: float | None = None) -> FloatArray:
        """``i(s, x)`` for every cell; see :func:`privwatch.measures.log_lift`."""
        return measures.log_lift(self.p, base=base)

    def lift_epsilon(self, *, base: float | None = None) -> float:
        """max |i(s, x)|; see :func:`privwatch.measures.lift_epsilon`."""
        return measures.lift_epsilon(self.p, base=base)

    def leakage(self, *, alpha: float = 2.0, base: float | None = None) -> measures.LeakageReport:
        """Every leakage measure; see :func:`privwatch.measures.leakage_report`."""
        return measures.leakage_report(self.p, alpha=alpha, base=base)

    def to_frame(self) -> pd.DataFrame:
        """The pmf as a DataFrame indexed by sensitive labels, one column per observed label."""
        return pd.DataFrame(
            self.p,
            index=pd.Index(self.sensitive_labels, name=self.sensitive_name),
            columns=[str(c) for c in self.observed_labels],
        )

    def __repr__(self) -> str:
        n_s, n_x = self.shape
        return f"Joint({self.sensitive_name!r} x {self.observed_name!r}: {n_s} x {n_x})"


def encode_sensitive(
    series: pd.Series, column: str, argument: str = "sensitive"
) -> tuple[NDArray[np.int64], list[Any]]:
    """Codes (sorted order of the values) and labels of a sensitive column: no missing values,
    at least two distinct values. ``column`` and ``argument`` name it in the error messages."""
    if series.isna().any():
        raise ValidationError(
            f"`{column}` must have no missing values; got {int(series.isna().sum())} missing."
        )
    codes, uniques, _ = factorize_sorted(series)
    if len(uniques) < 2:
        raise ValidationError(
            f"`{argument}` must take at least two values; got {list(uniques)!r} in {column!r}."
        )
    return np.asarray(codes, dtype=np.int64), uniques.tolist()


def plugin_estimate(
    frame: pd.DataFrame,
    columns: Sequence[str],
    s_codes: NDArray[np.int64],
    n_sensitive: int,
    *,
    smoothing: float,
    max_levels: int | None,
) -> tuple[ObservedEncoder, NDArray[np.int64], FloatArray]:
    """The plug-in estimate shared by :class:`Joint`, the watchdog and ``PluginLift``.

    Refuses numeric columns needing bins, encodes the observed tuples, and returns the encoder,
    the counts ``n(s, x)`` and the smoothed pmf ``(n(s, x) + a) / (n + a |S| |X|)``.
    """
    a = check_nonnegative(smoothing, "smoothing")
    check_discrete(frame, columns, max_levels)
    encoder = ObservedEncoder(columns)
    x_codes = encoder.fit_transform(frame)
    counts = joint_counts(s_codes, x_codes, n_sensitive, encoder.n_symbols)
    p = (counts + a) / (counts.sum() + a * counts.size)
    return encoder, counts, p / p.sum()


def _conditional(p: FloatArray) -> FloatArray:
    rows = p.sum(axis=1, keepdims=True)
    out = np.full_like(p, 1.0 / p.shape[1])
    np.divide(p, rows, out=out, where=rows > 0)
    return out


def warn_sparse(counts: NDArray[np.int64]) -> None:
    """Issue a :class:`PrivacyWarning` when most observed symbols (columns of ``counts[s, x]``)
    have fewer than :data:`FEW_SAMPLES` samples: plug-in lift estimates on them are unreliable.
    Shared by :class:`Joint` and the plug-in watchdog."""
    per_symbol = counts.sum(axis=0)
    thin = float(np.mean(per_symbol < FEW_SAMPLES))
    if thin > 0.5:
        warnings.warn(
            f"{thin:.0%} of observed symbols have fewer than {FEW_SAMPLES} samples: plug-in "
            "lift estimates on them are unreliable (bin or coarsen the observed columns).",
            PrivacyWarning,
            stacklevel=3,
        )
