"""``engine="auto"`` for files (issue #42 item 5): a Parquet file with more records than
``AUTO_THRESHOLD_ROWS`` goes to DuckDB however small it is on disk (pandas took 90 s and
3.25 GiB on 5,000,000 rows in 51 MiB, DuckDB 19 s); an option only the in-memory route
honours keeps such a file in pandas."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privwatch.audit import AuditSpec, plan, run
from privwatch.engines import AUTO_THRESHOLD_ROWS, choose_engine
from privwatch.exceptions import ValidationError


@pytest.fixture(scope="module")
def many_rows(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small file (a few hundred KiB) with one record more than the row threshold."""
    n = AUTO_THRESHOLD_ROWS + 1
    codes = np.arange(n, dtype=np.int8) % 3
    path = tmp_path_factory.mktemp("auto") / "many.parquet"
    pd.DataFrame({"s": codes, "x": codes[::-1].copy()}).to_parquet(path)
    assert path.stat().st_size < 8 * 2**20
    return path


def test_auto_reads_many_parquet_rows_with_duckdb(many_rows: Path, tmp_path: Path) -> None:
    engine, reason = choose_engine(str(many_rows))
    assert engine == "duckdb" and f"{AUTO_THRESHOLD_ROWS + 1:,} Parquet rows" in reason
    small = tmp_path / "small.parquet"
    pd.read_parquet(many_rows).iloc[:AUTO_THRESHOLD_ROWS].to_parquet(small)
    assert choose_engine(str(small))[0] == "pandas"  # at the threshold: pandas
    route = plan(AuditSpec.from_options({"sensitive": "s", "observed": "x"}), str(many_rows))
    assert (route.name, route.engine) == ("engine", "duckdb")


@pytest.mark.parametrize(
    ("options", "why"),
    [({"delta": 0.1}, "`delta`"), ({"method": "watchdog"}, "`method`='watchdog'"),
     ({"estimator": "classifier"}, "`estimator`='classifier'")],
)  # fmt: skip
def test_memory_only_options_keep_pandas(
    many_rows: Path, options: dict[str, object], why: str
) -> None:
    spec = AuditSpec.from_options({"sensitive": "s", "observed": "x", **options})
    route = plan(spec, str(many_rows))
    assert (route.name, route.engine) == ("memory", "pandas")
    assert f"{why} needs the records in memory" in route.reason
    # asked for by name, the engine still refuses what it cannot honour
    if "delta" in options:
        with pytest.raises(ValidationError, match="needs the records in memory"):
            plan(spec.replace(engine="duckdb"), str(many_rows))


def test_the_audit_says_why_it_counted_in_duckdb(many_rows: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = run(source=str(many_rows), sensitive="s", observed=["x"], epsilon=1.0, checks=False)
    assert (res.route, res.engine) == ("engine", "duckdb")
    assert "Parquet rows > 1,000,000 row threshold" in res.route_reason
    assert res.summary["n_records"] == AUTO_THRESHOLD_ROWS + 1
