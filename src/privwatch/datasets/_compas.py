"""ProPublica's COMPAS two-year recidivism data, as used by Hsu, Asoodeh and Calmon (§IV-B).

Bundled file: ``data/compas-two-years.csv.gz`` — the columns privwatch needs of ProPublica's
``compas-scores-two-years.csv`` (7,214 rows; names and case numbers dropped). Source:
https://github.com/propublica/compas-analysis (Angwin, Larson, Mattu, Kirchner, "Machine Bias",
ProPublica, 2016).
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

__all__ = ["COMPAS_BINS", "COMPAS_OBSERVED", "load_compas"]

#: Hsu et al.'s observed attributes: sex, age, priors count, length of stay, decile score.
COMPAS_OBSERVED = ["sex", "age", "priors_count", "length_of_stay", "decile_score"]

#: The binning privwatch uses for plug-in lift on COMPAS (cut points; see ``bin_columns``):
#: age at ProPublica's category boundaries (25, 45) and 35; priors 0 / 1-3 / 4-9 / 10+;
#: length of stay (days) 0 or less / 1-7 / 8+; decile score at COMPAS's own low (1-4),
#: medium (5-7) and high (8-10) bands. At most 2 x 4 x 4 x 3 x 3 = 288 observed symbols.
COMPAS_BINS: dict[str, list[float]] = {
    "age": [25, 35, 45],
    "priors_count": [1, 4, 10],
    "length_of_stay": [1, 8],
    "decile_score": [5, 8],
}


def load_compas(*, filtered: bool = True) -> pd.DataFrame:
    """Load the bundled COMPAS data.

    With ``filtered=True`` (default) apply ProPublica's screening rules
    (``-30 <= days_b_screening_arrest <= 30``, ``is_recid != -1``, ``c_charge_degree != "O"``,
    ``score_text != "N/A"``; 6,172 rows) and keep African-American (``race_code`` 0) and
    Caucasian (1) defendants, as Hsu et al. do: 5,278 rows. ``length_of_stay`` is
    ``c_jail_out - c_jail_in`` in whole days.

    Examples
    --------
    >>> df = load_compas()
    >>> len(df), sorted(df["race"].unique())
    (5278, ['African-American', 'Caucasian'])
    """
    path = resources.files("privwatch.datasets").joinpath("data/compas-two-years.csv.gz")
    with path.open("rb") as fh:
        df = pd.read_csv(fh, compression="gzip")
    jail_in = pd.to_datetime(df["c_jail_in"])
    jail_out = pd.to_datetime(df["c_jail_out"])
    df["length_of_stay"] = (jail_out - jail_in).dt.days
    if not filtered:
        return df
    keep = (
        df["days_b_screening_arrest"].between(-30, 30)
        & (df["is_recid"] != -1)
        & (df["c_charge_degree"] != "O")
        & (df["score_text"] != "N/A")
        & df["score_text"].notna()
    )
    df = df[keep]
    df = df[df["race"].isin(["African-American", "Caucasian"])].copy()
    df["race_code"] = (df["race"] == "Caucasian").astype(int)
    df["length_of_stay"] = df["length_of_stay"].astype(int)
    return df.reset_index(drop=True)
