"""The options of ``privwatch audit``, declared once (help texts and defaults)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import engines
from ..preprocessing import DEFAULT_MAX_LEVELS

__all__ = ["DEFAULT_MAX_LEVELS", "Data", "Opt"]

Data = Annotated[
    str | None,
    typer.Argument(
        help="CSV, Excel (.xlsx), Parquet or JSON Lines file; a glob of Parquet/CSV files "
        "('lake/*.parquet'); or a database URL (postgresql://..., sqlite:///f.db, "
        "duckdb:///f.db) with --table."
    ),
]


class Opt:
    """``Annotated`` types of the options (``Opt.epsilon`` etc.)."""

    sensitive = Annotated[
        str | None, typer.Option(help="The sensitive column (comma-separated for several).")
    ]
    observed = Annotated[
        str | None, typer.Option(help="Comma-separated observed columns (default: all others).")
    ]
    engine = Annotated[
        str,
        typer.Option(
            help="auto, pandas, polars, duckdb, spark or sql. auto: pandas for files up to "
            f"{engines.AUTO_THRESHOLD_BYTES // 2**20} MiB and "
            f"{engines.AUTO_THRESHOLD_ROWS:,} Parquet rows, DuckDB above; the database for URLs."
        ),
    ]
    table = Annotated[str | None, typer.Option(help="The table of a database URL.")]
    write_table = Annotated[
        str | None,
        typer.Option(
            help="NAME: write the release and the scores into the source database as new tables "
            "NAME_release and NAME_scores (default: OUT/release.parquet, OUT/scores.parquet)."
        ),
    ]
    epsilon = Annotated[
        float | None, typer.Option(help="Threshold on |log-lift|; proposed when omitted.")
    ]
    delta = Annotated[float | None, typer.Option(help="(epsilon, delta) relaxation.")]
    epsilon_max = Annotated[float, typer.Option(help="Cap with --delta.")]
    method = Annotated[
        str | None,
        typer.Option(
            help="search (generalise and suppress), watchdog (merge the flagged tuples or "
            "records into '*'), relaxed (the (epsilon, delta) watchdog: needs --delta), "
            "randomized (the flagged tuples through the LP channel that keeps the most "
            "I(X;Y); plug-in only) or auto (every method that applies, the most informative "
            "MET one kept). Default: relaxed with --delta, watchdog with a learned "
            "--estimator, else search."
        ),
    ]
    estimator = Annotated[
        str,
        typer.Option(
            help="plugin (counts), auto (the family with the lowest cross-validated log-loss), "
            "classifier, dv, quadratic_logistic, gaussian_mixture, gradient_boosting, mlp, nwj."
        ),
    ]
    bins = Annotated[
        list[str] | None,
        typer.Option(help="Bin a numeric column: col=k or col=e1,e2,... (before the checks)."),
    ]
    missing = Annotated[str, typer.Option(help="error, drop or category.")]
    force = Annotated[bool, typer.Option(help="Allow identifier-like observed columns.")]
    max_levels = Annotated[
        int,
        typer.Option(
            help="Numeric columns with more values (no --bins or --hierarchy) are cut into "
            "nested quantile intervals (plug-in)."
        ),
    ]
    dataset = Annotated[str | None, typer.Option(help="A bundled data set: compas.")]
    out = Annotated[Path, typer.Option(help="Output folder (new or empty).")]
    overwrite = Annotated[
        bool, typer.Option(help="Replace the outputs in a folder that already holds files.")
    ]
    seed = Annotated[int, typer.Option(help="Random seed.")]
    hierarchy = Annotated[
        list[str] | None,
        typer.Option(help="COL=FILE: an ARX-style hierarchy (value;coarser;...;*) for COL."),
    ]
    disclosure = Annotated[
        str,
        typer.Option(
            help="both (two-sided lift privacy) or positive (beliefs may only grow by e^epsilon)."
        ),
    ]
    max_suppressed = Annotated[
        float, typer.Option(help="Largest share of records the release may suppress.")
    ]
    folds = Annotated[int, typer.Option(help="Folds of the held-out check (0: none).")]
    useful = Annotated[
        str | None, typer.Option(help="Keep the most information about this column.")
    ]
    local = Annotated[bool, typer.Option(help="Try local recoding beside global recoding.")]
    held_out_tolerance = Annotated[
        float, typer.Option(help="Largest held-out breach probability still called met.")
    ]
    confidence = Annotated[
        float | None,
        typer.Option(
            help="Cells must also pass with the credible bounds of their sensitive "
            "shares at this level (e.g. 0.9): a margin for held-out records."
        ),
    ]
    max_nodes = Annotated[
        int, typer.Option(help="Lattice nodes the global recoding search evaluates at most.")
    ]
    min_class_size = Annotated[
        int,
        typer.Option(help="Every released cell but '*' holds at least K records (1: off)."),
    ]
    suppression = Annotated[
        str,
        typer.Option(
            help="star: the cells the search suppresses become '*'; randomize: they are drawn "
            "through an LP channel instead when that is met and keeps more I(X;Y)."
        ),
    ]
    checks = Annotated[
        bool, typer.Option(help="Compute the classic measures and the inference attack.")
    ]
    sampling_fraction = Annotated[
        float | None,
        typer.Option(help="Re-identification risk: the records are this share of the population."),
    ]
    weights = Annotated[
        str | None,
        typer.Option(help="Re-identification risk: the column of the records' design weights."),
    ]
    population = Annotated[
        Path | None,
        typer.Option(
            help="Re-identification risk: a file of counts of the observed columns' combinations "
            "in the population (the observed columns and 'count')."
        ),
    ]
    cluster_id = Annotated[
        str | None,
        typer.Option(help="Re-identification risk: a household (cluster) id column."),
    ]
    risk_threshold = Annotated[
        float,
        typer.Option(
            help="The highest acceptable re-identification risk of a record (0.09: El Emam 2013, "
            "public release)."
        ),
    ]
    max_reid_risk = Annotated[
        float | None,
        typer.Option(
            help="Release constraint: every released class has an expected population size of "
            "at least 1/R under the chosen model (prosecutor without population information)."
        ),
    ]
    max_population_uniques = Annotated[
        float | None,
        typer.Option(
            help="Release constraint: the release's estimated population uniques (Dankar's rule) "
            "at most U."
        ),
    ]
    report_records = Annotated[
        bool,
        typer.Option(
            help="List the riskiest records' observed values in report.html (the report is then "
            "marked as holding record-level data)."
        ),
    ]
    records = Annotated[
        bool,
        typer.Option(
            help="Write every record labelled (release.parquet, or scores.csv and release.csv); "
            "--no-records: the verdict, mapping, report and mechanism only."
        ),
    ]
    sep = Annotated[str, typer.Option(help="Field separator of a CSV file.")]
    encoding = Annotated[str, typer.Option(help="Text encoding of a CSV or JSONL file.")]
    config = Annotated[
        Path | None,
        typer.Option(help="TOML file with any of these options (the command line wins)."),
    ]
    save_mechanism = Annotated[
        Path | None,
        typer.Option(
            "--save-mechanism",
            help="Save the fitted generalisation (JSON) for `privwatch apply`.",
        ),
    ]
    quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print only errors.")]
    as_json = Annotated[
        bool, typer.Option("--json", help="Print a JSON summary on stdout, nothing else.")
    ]
