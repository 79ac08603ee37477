"""The classic disclosure measures of a table, per sensitive attribute, against common thresholds.

One pandas group-by builds the equivalence-class x sensitive-value counts; the kernels of
:mod:`privwatch.measures.classic` do the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._validation import check_nonnegative, short_repr
from ..exceptions import ValidationError
from ..measures import classic as mc

__all__ = ["CLASSIC_THRESHOLDS", "ClassicReport", "classic_counts", "classic_report"]

#: name -> (default threshold, rule, reference). Rules: ">=" the value must reach the threshold;
#: "<=" stay at or below it; "<" stay strictly below it (definitions with a strict inequality).
CLASSIC_THRESHOLDS: dict[str, tuple[float, str, str]] = {
    "k_anonymity": (5, ">=", "Sweeney, IJUFKS 2002"),
    "sample_uniques": (0, "<=", "Hundepool et al., Statistical Disclosure Control 2012"),
    "prosecutor_risk_max": (0.2, "<=", "El Emam & Dankar, JAMIA 2008"),
    "prosecutor_risk_mean": (0.05, "<=", "El Emam & Dankar, JAMIA 2008"),
    "distinct_l_diversity": (2, ">=", "Machanavajjhala et al., TKDD 2007"),
    "entropy_l_diversity": (2, ">=", "Machanavajjhala et al., TKDD 2007 (entropy)"),
    "recursive_cl_diversity": (3, "<", "Machanavajjhala et al., TKDD 2007 (recursive, l = 2)"),
    "t_closeness": (0.2, "<=", "Li, Li & Venkatasubramanian, ICDE 2007"),
    "basic_beta_likeness": (1.0, "<=", "Cao & Karras, VLDB 2012 (basic)"),
    "enhanced_beta_likeness": (1.0, "<=", "Cao & Karras, VLDB 2012 (enhanced)"),
    "delta_disclosure": (1.0, "<", "Brickell & Shmatikov, KDD 2008"),
}
_TABLE_MEASURES = ("k_anonymity", "sample_uniques", "prosecutor_risk_max", "prosecutor_risk_mean")
_INTEGER = {"k_anonymity", "sample_uniques", "distinct_l_diversity"}
#: ``l`` of the recursive (c, l)-diversity the report computes.
RECURSIVE_L = 2


def _passes(value: float, threshold: float, rule: str) -> bool:
    if rule == ">=":
        return bool(value >= threshold)
    if rule == "<=":
        return bool(value <= threshold)
    return bool(value < threshold)


@dataclass(frozen=True)
class ClassicReport:
    """Classic measures of one table on the equivalence classes of its quasi-identifiers.

    ``table`` holds the measures that depend on the classes only (k-anonymity, sample uniques,
    prosecutor risk); ``sensitive`` maps each sensitive attribute to its measures (l-diversity,
    t-closeness, beta-likeness, delta-disclosure); ``ordered`` says which sensitive attributes
    were treated as ordered (ordered-distance EMD for t-closeness); ``thresholds`` the
    threshold each measure was judged against.
    """

    n_records: int
    n_classes: int
    quasi_identifiers: tuple[str, ...]
    table: dict[str, float]
    sensitive: dict[str, dict[str, float]]
    ordered: dict[str, bool]
    n_values: dict[str, int]
    thresholds: dict[str, float] = field(default_factory=dict)

    def passes(self, measure: str, attribute: str | None = None) -> bool:
        """Whether ``measure`` (of ``attribute`` for per-attribute measures) meets its threshold."""
        values = self.table if attribute is None else self.sensitive[attribute]
        return _passes(values[measure], self.thresholds[measure], CLASSIC_THRESHOLDS[measure][1])

    def _entry(self, name: str, value: float) -> dict[str, Any]:
        _, rule, reference = CLASSIC_THRESHOLDS[name]
        threshold = self.thresholds[name]
        number: float | int = int(value) if name in _INTEGER else float(value)
        limit: float | int = int(threshold) if name in _INTEGER else threshold
        return {
            "value": number,
            "threshold": limit,
            "rule": rule,
            "passes": _passes(value, threshold, rule),
            "reference": reference,
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain Python types (floats may be ``inf``): every measure with its threshold, rule,
        pass/fail and reference."""
        return {
            "n_records": self.n_records,
            "n_classes": self.n_classes,
            "quasi_identifiers": list(self.quasi_identifiers),
            "table": {name: self._entry(name, v) for name, v in self.table.items()},
            "sensitive": {
                attr: {
                    "n_values": self.n_values[attr],
                    "t_closeness_distance": "ordered" if self.ordered[attr] else "equal",
                    "recursive_l": RECURSIVE_L,
                    "measures": {name: self._entry(name, v) for name, v in values.items()},
                }
                for attr, values in self.sensitive.items()
            },
        }


def _names(value: Any, name: str, frame: pd.DataFrame) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else tuple(value) if value is not None else ()
    if not names:
        raise ValidationError(f"`{name}` must name at least one column; got {short_repr(value)}.")
    missing = [n for n in names if n not in frame.columns]
    if missing:
        raise ValidationError(
            f"`{name}` must name columns of `frame`; got {missing[0]!r} (columns: "
            f"{short_repr(list(frame.columns))})."
        )
    return names


def _is_ordered(column: pd.Series) -> bool:
    if isinstance(column.dtype, pd.CategoricalDtype):
        return bool(column.dtype.ordered)
    return bool(pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column))


def _sensitive_codes(column: pd.Series, ordered: bool) -> tuple[NDArray[np.intp], int]:
    """Codes ``0..m-1`` of a sensitive column, in increasing order of value when ``ordered``."""
    if ordered and isinstance(column.dtype, pd.CategoricalDtype):
        cats = column.cat.remove_unused_categories()
        return np.asarray(cats.cat.codes, dtype=np.intp), len(cats.cat.categories)
    if ordered and not pd.api.types.is_numeric_dtype(column):
        raise ValidationError(
            f"`numeric_sensitive` must name numeric or ordered categorical columns; got "
            f"{column.name!r} of dtype {column.dtype}."
        )
    codes, uniques = pd.factorize(column, sort=ordered)
    return np.asarray(codes, dtype=np.intp), len(uniques)


def classic_counts(
    frame: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str, *, ordered: bool = False
) -> NDArray[np.int64]:
    """The equivalence-class x sensitive-value counts ``counts[c, s]`` of ``frame``.

    Classes are the distinct tuples of ``quasi_identifiers`` (missing values form their own
    class); columns are the sensitive values (in increasing order when ``ordered``).

    Examples
    --------
    >>> df = pd.DataFrame({"age": [1, 1, 2], "zip": ["a", "a", "b"], "dis": ["x", "y", "x"]})
    >>> classic_counts(df, ["age", "zip"], "dis")
    array([[1, 1],
           [1, 0]])
    """
    classes = frame.groupby(list(quasi_identifiers), sort=False, dropna=False, observed=True)
    cls = np.asarray(classes.ngroup(), dtype=np.int64)
    n_classes = int(cls.max()) + 1
    codes, m = _sensitive_codes(frame[sensitive], ordered)
    flat = np.bincount(cls * m + codes, minlength=n_classes * m)
    return flat.reshape(n_classes, m)


def _checked_columns(
    frame: pd.DataFrame,
    quasi_identifiers: str | Sequence[str],
    sensitive: str | Sequence[str],
    numeric_sensitive: Iterable[str] | None,
) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, bool]]:
    """The quasi-identifiers, the sensitive columns, and which of those are ordered."""
    if not isinstance(frame, pd.DataFrame):
        raise ValidationError(f"`frame` must be a pandas DataFrame; got {type(frame).__name__}.")
    if len(frame) == 0:
        raise ValidationError("`frame` must have at least one row; got an empty frame.")
    qis = _names(quasi_identifiers, "quasi_identifiers", frame)
    sens = _names(sensitive, "sensitive", frame)
    overlap = set(qis) & set(sens)
    if overlap:
        raise ValidationError(
            f"`sensitive` must not repeat a quasi-identifier; got {sorted(overlap)[0]!r} in both."
        )
    if numeric_sensitive is None:
        return qis, sens, {s: _is_ordered(frame[s]) for s in sens}
    listed = [numeric_sensitive] if isinstance(numeric_sensitive, str) else list(numeric_sensitive)
    chosen = set(_names(listed, "numeric_sensitive", frame)) if listed else set()
    if not chosen <= set(sens):
        raise ValidationError(
            f"`numeric_sensitive` must be a subset of `sensitive`; got "
            f"{sorted(chosen - set(sens))[0]!r}."
        )
    return qis, sens, {s: s in chosen for s in sens}


def _checked_thresholds(thresholds: Mapping[str, float] | None) -> dict[str, float]:
    """:data:`CLASSIC_THRESHOLDS` with the overrides of ``thresholds``."""
    limits = {name: float(spec[0]) for name, spec in CLASSIC_THRESHOLDS.items()}
    for name, value in (thresholds or {}).items():
        if name not in limits:
            raise ValidationError(
                f"`thresholds` must use the names {sorted(limits)}; got {name!r}."
            )
        limits[name] = check_nonnegative(value, f"thresholds[{name!r}]")
    return limits


def classic_report(
    frame: pd.DataFrame,
    quasi_identifiers: str | Sequence[str],
    sensitive: str | Sequence[str],
    *,
    numeric_sensitive: Iterable[str] | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> ClassicReport:
    """Every classic disclosure measure of ``frame`` on the classes of ``quasi_identifiers``.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table (a release, or the input for contrast), one record per row.
    quasi_identifiers : str or sequence of str
        Columns whose value tuples define the equivalence classes.
    sensitive : str or sequence of str
        Sensitive columns, each measured separately; no missing values.
    numeric_sensitive : iterable of str, optional
        Sensitive columns measured with the ordered-distance EMD for t-closeness. None: the
        numeric (not boolean) and ordered categorical ones.
    thresholds : mapping, optional
        Overrides of :data:`CLASSIC_THRESHOLDS` (name -> threshold).

    Returns
    -------
    ClassicReport

    Examples
    --------
    >>> df = pd.DataFrame({"age": [30, 30, 40, 40], "disease": ["flu", "hiv", "flu", "flu"]})
    >>> r = classic_report(df, "age", "disease")
    >>> r.table["k_anonymity"], r.sensitive["disease"]["distinct_l_diversity"]
    (2, 1)
    >>> r.to_dict()["table"]["k_anonymity"]["passes"]
    False
    """
    qis, sens, ordered = _checked_columns(frame, quasi_identifiers, sensitive, numeric_sensitive)
    limits = _checked_thresholds(thresholds)
    for s in sens:
        if frame[s].isna().any():
            raise ValidationError(
                f"`frame` must have no missing values in sensitive column {s!r}; got "
                f"{int(frame[s].isna().sum())} missing."
            )
    per_attribute: dict[str, dict[str, float]] = {}
    n_values: dict[str, int] = {}
    counts = classic_counts(frame, qis, sens[0], ordered=ordered[sens[0]])
    for s in sens:
        if s != sens[0]:
            counts = classic_counts(frame, qis, s, ordered=ordered[s])
        values = np.arange(counts.shape[1]) if ordered[s] else None
        n_values[s] = counts.shape[1]
        per_attribute[s] = {
            "distinct_l_diversity": mc.distinct_l_diversity(counts),
            "entropy_l_diversity": mc.entropy_l_diversity(counts),
            "recursive_cl_diversity": mc.recursive_cl_diversity(counts, RECURSIVE_L),
            "t_closeness": mc.t_closeness(counts, values=values),
            "basic_beta_likeness": mc.basic_beta_likeness(counts),
            "enhanced_beta_likeness": mc.enhanced_beta_likeness(counts),
            "delta_disclosure": mc.delta_disclosure(counts),
        }
    risk = mc.prosecutor_risk(counts)
    table = {
        "k_anonymity": mc.k_anonymity(counts),
        "sample_uniques": mc.sample_uniques(counts),
        "prosecutor_risk_max": risk.max,
        "prosecutor_risk_mean": risk.mean,
    }
    return ClassicReport(
        n_records=len(frame),
        n_classes=int(counts.shape[0]),
        quasi_identifiers=qis,
        table={k: float(v) if k not in _INTEGER else int(v) for k, v in table.items()},
        sensitive=per_attribute,
        ordered=ordered,
        n_values=n_values,
        thresholds=limits,
    )
