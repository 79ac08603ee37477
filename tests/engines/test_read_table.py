"""engines.read_table, the one file reader of the library and the CLI: compressed text, explicit
separators, and a one-line ValidationError for every file it cannot read (real files)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privwatch.engines import iter_batches, parquet_files, read_table
from privwatch.exceptions import ValidationError

FRAME = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "é", "z"]})


@pytest.mark.parametrize("suffix", [".csv.gz", ".csv.bz2", ".csv.xz", ".csv.zip", ".tsv"])
def test_compressed_and_tab_separated_text(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"t{suffix}"
    sep = "," if suffix == ".csv.zip" else ("\t" if suffix == ".tsv" else ";")
    FRAME.to_csv(path, sep=sep, index=False)
    assert read_table(path).equals(FRAME)  # separator sniffed (',' for zip)
    assert read_table(path, sep=sep).equals(FRAME)


def test_explicit_sep_is_used_as_given(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    FRAME.to_csv(path, sep=";", index=False)
    assert read_table(path, sep=",").columns.tolist() == ["a;b"]  # no sniffing when given
    FRAME.to_json(tmp_path / "t.jsonl.gz", orient="records", lines=True)
    assert read_table(tmp_path / "t.jsonl.gz").equals(FRAME)


def test_errors_name_the_cause(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="must be an existing file; .* \\(not found\\)"):
        read_table(tmp_path / "none.csv")
    with pytest.raises(ValidationError, match="must be a file; got the directory"):
        read_table(tmp_path)
    (tmp_path / "t.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValidationError, match="`encoding` must be an encoding Python knows"):
        read_table(tmp_path / "t.csv", encoding="klingon")
    binary = tmp_path / "b.csv"
    binary.write_bytes(b"a,b\n1," + bytes(1) + b"\n")
    with pytest.raises(ValidationError, match="is not text: it holds a NUL byte at offset 6"):
        read_table(binary)
    latin = tmp_path / "l.csv"
    latin.write_bytes("a,b\n1,é\n".encode("latin-1"))
    with pytest.raises(
        ValidationError,
        match="the encoding 'utf-8' cannot decode at offset 6 .*pass the file's `encoding`",
    ):
        read_table(latin, sep=",")
    assert read_table(latin, encoding="latin-1")["b"].tolist() == ["é"]
    deep = tmp_path / "deep.csv.gz"  # the offset counts from the start of the decompressed file
    head = "a,b\n" + "1,x\n" * 300_000
    deep.write_bytes(gzip.compress((head + "1,é\n").encode("latin-1")))
    with pytest.raises(ValidationError, match=f"cannot decode at offset {len(head) + 2} "):
        read_table(deep, sep=",")
    empty = tmp_path / "e.csv"
    empty.write_text("")
    with pytest.raises(ValidationError, match="must be a readable CSV or Parquet file"):
        read_table(empty)
    bad = tmp_path / "p.parquet"
    bad.write_bytes(b"PAR1" + bytes(64))
    with pytest.raises(ValidationError, match="must be a readable CSV or Parquet file"):
        read_table(bad)
    utf16 = tmp_path / "u.csv"
    utf16.write_bytes("a,b\n1,2\n".encode("utf-16"))
    with pytest.raises(ValidationError, match="NUL byte .*pass `encoding` 'utf-16'"):
        read_table(utf16)
    assert read_table(utf16, encoding="utf-16").shape == (1, 2)


def test_iter_batches_holds_one_row_group_not_the_file(tmp_path: Path) -> None:
    """Arrow memory while streaming stays well under the file's size: pyarrow's default
    pre-buffering kept every column chunk of the file (20 MiB held for a 15 MiB file)."""
    pa = pytest.importorskip("pyarrow")

    rng = np.random.default_rng(0)
    n = 2_000_000
    frame = pd.DataFrame({c: rng.integers(0, 1000, n) for c in "abcdef"})
    path = tmp_path / "t.parquet"
    frame.to_parquet(path, row_group_size=100_000)
    del frame
    size = path.stat().st_size
    peak = rows = 0
    for batch in iter_batches(path, batch_size=50_000):
        rows += len(batch)
        peak = max(peak, pa.total_allocated_bytes())
    assert rows == n
    assert peak < 0.6 * size, (peak, size)


def test_parquet_files_in_name_order_and_refuses_nothing_found(tmp_path: Path) -> None:
    for name in ("p2.parquet", "p10.parquet", "p1.parquet"):
        FRAME.to_parquet(tmp_path / name)
    (tmp_path / "dir.parquet").mkdir()  # a folder the glob matches is not a file
    found = [Path(f).name for f in parquet_files(tmp_path / "*.parquet")]
    assert found == ["p1.parquet", "p10.parquet", "p2.parquet"]
    assert parquet_files(tmp_path / "p2.parquet") == [str(tmp_path / "p2.parquet")]
    with pytest.raises(ValidationError, match="`source` must name existing Parquet files"):
        parquet_files(tmp_path / "none*.parquet")
    with pytest.raises(ValidationError, match="`source` must name existing Parquet files"):
        parquet_files(tmp_path / "dir.parquet")
