"""release.generalisation.apply_saved_mechanism: a saved generalisation applied to a new file,
into a folder (the library function behind ``privwatch apply``), on real files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privwatch.audit import file_sha256, run
from privwatch.exceptions import TamperedFileError, ValidationError
from privwatch.release.generalisation import APPLY_FILES, apply_saved_mechanism


def _table(n: int = 400, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    return pd.DataFrame(
        {
            "s": np.where(s == 1, "yes", "no"),
            "a": np.where(rng.random(n) < 0.3 + 0.4 * s, "high", "low"),
            "b": rng.integers(0, 3, n).astype(str),
        }
    )


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame, pd.DataFrame]:
    """(mechanism file, fit table, the audit's release of it)."""
    d = tmp_path_factory.mktemp("fit")
    df = _table()
    result = run(source=df, sensitive="s", observed=["a", "b"], epsilon=0.3, folds=0, checks=False)
    return result.generalisation().save(d / "m.json"), df, result.release


def test_writes_release_and_summary_of_a_new_batch(
    fitted: tuple[Path, pd.DataFrame, pd.DataFrame], tmp_path: Path
) -> None:
    mech, df, release = fitted
    new = df.head(6).copy()
    new.loc[new.index[2], "a"] = "unknown"  # never seen at fit time
    data = tmp_path / "new.csv"
    new.to_csv(data, index=False)
    out = tmp_path / "out"
    batch = apply_saved_mechanism(mech, data, out)
    assert batch.files == [out / name for name in APPLY_FILES] and batch.out == out
    assert sorted(p.name for p in out.iterdir()) == sorted(APPLY_FILES)  # no staging left
    written = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)
    assert written["record"].tolist() == [str(i) for i in range(6)]
    assert written["unseen"].tolist() == ["False", "False", "True", "False", "False", "False"]
    assert (written.loc[2, ["a", "b"]] == "*").all()
    seen = [0, 1, 3, 4, 5]
    expected = release.loc[seen, ["a", "b"]].astype(str).to_numpy()
    assert (written.loc[seen, ["a", "b"]].to_numpy() == expected).all()
    summary = json.loads((out / "apply.json").read_text())
    assert summary == batch.summary
    assert summary["n_records"] == 6 and summary["n_unseen"] == 1 == batch.applied.n_unseen
    assert summary["mechanism_sha256"] == file_sha256(mech)
    assert summary["input_sha256"] == file_sha256(data) and summary["input_name"] == "new.csv"
    assert summary["epsilon"] == pytest.approx(0.3)


def test_reads_other_formats_with_the_library_reader(
    fitted: tuple[Path, pd.DataFrame, pd.DataFrame], tmp_path: Path
) -> None:
    mech, df, _ = fitted
    df.to_parquet(tmp_path / "d.parquet")
    df.to_csv(tmp_path / "d.csv.gz", sep=";", index=False, encoding="latin-1")
    a = apply_saved_mechanism(mech, tmp_path / "d.parquet", tmp_path / "o1")
    b = apply_saved_mechanism(mech, tmp_path / "d.csv.gz", tmp_path / "o2", encoding="latin-1")
    assert a.summary["n_records"] == b.summary["n_records"] == len(df)
    pd.testing.assert_frame_equal(a.applied.released, b.applied.released)


def test_refuses_a_full_folder_unless_overwrite(
    fitted: tuple[Path, pd.DataFrame, pd.DataFrame], tmp_path: Path
) -> None:
    mech, df, _ = fitted
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    out = tmp_path / "out"
    out.mkdir()
    (out / "release.csv").write_text("old")
    with pytest.raises(ValidationError, match="`out` must be an empty or new folder"):
        apply_saved_mechanism(mech, data, out)
    assert (out / "release.csv").read_text() == "old"
    apply_saved_mechanism(mech, data, out, overwrite=True)
    assert (out / "release.csv").read_text() != "old"


def test_bad_arguments_leave_nothing_written(
    fitted: tuple[Path, pd.DataFrame, pd.DataFrame], tmp_path: Path
) -> None:
    mech, df, _ = fitted
    data = tmp_path / "d.csv"
    df.drop(columns="b").to_csv(data, index=False)
    out = tmp_path / "out"
    with pytest.raises(
        ValidationError, match=r"observed columns of the mechanism; missing \['b'\]"
    ):
        apply_saved_mechanism(mech, data, out)
    with pytest.raises(ValidationError, match="`overwrite` must be True or False"):
        apply_saved_mechanism(mech, data, out, overwrite="yes")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="must be file paths"):
        apply_saved_mechanism(mech, df, out)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="not found"):
        apply_saved_mechanism(mech, tmp_path / "none.csv", out)
    with pytest.raises(TamperedFileError, match="intact privwatch model file"):
        apply_saved_mechanism(data, data, out)  # a CSV is not a mechanism
    tampered = tmp_path / "t.json"
    tampered.write_text(mech.read_text().replace('"both"', '"positive"'))
    with pytest.raises(TamperedFileError):
        apply_saved_mechanism(tampered, data, out)
    assert not out.exists() or not any(out.iterdir())
