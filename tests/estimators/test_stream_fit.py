"""Neural lift estimators trained from records streamed from real Parquet files (issue #18 item 5).

What is tested: the statistics pass equals the in-memory preprocessing; the streamed fit is
bit-identical whatever the reader's slicing, for a Parquet file, the glob of its parts and the
DataFrame of its rows cut at the same row-group boundaries; the row-position validation split;
streamed scoring; accuracy next to the in-memory fit (slow); every bad input's message.
The memory claim is a benchmark, not a test: ``benchmarks/bench_neural_stream.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.special import logsumexp

from privwatch import ValidationError
from privwatch.estimators import ClassifierLift, DVLift, TabularPreprocessor

FAST: dict[str, Any] = {"epochs": 3, "n_ensemble": 2, "patience": 10, "batch_size": 128}
PRIOR = np.array([0.5, 0.3, 0.2])
MU = np.array([-1.0, 0.0, 1.0])
PC = np.array([[0.6, 0.3, 0.1], [0.3, 0.4, 0.3], [0.1, 0.3, 0.6]])


def records(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """S on 3 values (prior 0.5/0.3/0.2), x | s ~ N(mu_s, 1), c | s categorical, an unused
    integer column ``k``: the true log-lift i(s, x, c) in closed form."""
    g = np.random.default_rng(seed)
    s = g.choice(3, n, p=PRIOR)
    x = MU[s] + g.normal(0, 1, n)
    u = g.random(n)
    c = (u[:, None] > np.cumsum(PC[s], axis=1)).sum(axis=1)
    frame = pd.DataFrame(
        {"s": np.array(["lo", "mid", "hi"])[s], "x": x, "c": np.array(list("abc"))[c]}
    )
    frame["k"] = g.integers(0, 1000, n)
    log_joint = np.log(PRIOR)[None] - 0.5 * (x[:, None] - MU[None]) ** 2 + np.log(PC[:, c].T)
    post = log_joint - logsumexp(log_joint, axis=1, keepdims=True)
    truth = post - np.log(PRIOR)[None]
    # columns of the log-lift follow the sorted sensitive labels: hi, lo, mid
    return frame, truth[:, [2, 0, 1]]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, Path]:
    frame, _ = records(3000, 0)
    folder = tmp_path_factory.mktemp("stream")
    frame.to_parquet(folder / "all.parquet", row_group_size=500)
    for i, lo in enumerate(range(0, 3000, 1000)):  # the same rows in 3 files, 500-row groups
        frame.iloc[lo : lo + 1000].to_parquet(folder / f"part-{i}.parquet", row_group_size=500)
    return frame, folder


def test_statistics_pass_equals_the_in_memory_preprocessing(table: Any) -> None:
    frame, folder = table
    est = ClassifierLift(epochs=1, n_ensemble=1, rng=0)
    est.fit_source(folder / "all.parquet", "s", ["x", "c", "k"], read_rows=300)
    mem = TabularPreprocessor().fit(frame[["x", "c", "k"]])
    assert est.preprocessor_.columns_ == ["x", "c", "k"]
    assert est.preprocessor_.categories_ == mem.categories_ == {"c": ["a", "b", "c"]}
    for col in ("x", "k"):  # merged slice moments: equal to rounding
        np.testing.assert_allclose(est.preprocessor_.numeric_[col], mem.numeric_[col], rtol=1e-12)
    assert est.sensitive_labels_ == ["hi", "lo", "mid"]
    counts = frame["s"].value_counts()
    np.testing.assert_array_equal(est.prior_, counts[["hi", "lo", "mid"]].to_numpy() / 3000)


@pytest.mark.parametrize("make", [ClassifierLift, DVLift], ids=["classifier", "dv"])
def test_same_pieces_same_network_bit_for_bit(table: Any, make: Any) -> None:
    """A file, the glob of its 3 parts, other reader slices, and the DataFrame cut in the same
    500-row pieces hold the same record sequence per piece: identical log-lifts, not close."""
    frame, folder = table
    cols = ["x", "c"]
    ref = make(rng=3, **FAST).fit_source(folder / "all.parquet", "s", cols, shuffle_rows=700)
    ll = ref.log_lift(frame[cols])
    for source, read_rows in [
        (str(folder / "part-*.parquet"), 65_536),
        (folder / "all.parquet", 128),  # slices that do not divide the row groups
        (frame, 500),  # a DataFrame is cut in pieces of read_rows records
    ]:
        est = make(rng=3, **FAST).fit_source(
            source, "s", cols, read_rows=read_rows, shuffle_rows=700
        )
        assert np.array_equal(est.log_lift(frame[cols]), ll), (source, read_rows)
        assert est.histories_ == ref.histories_
    other = make(rng=4, **FAST).fit_source(folder / "all.parquet", "s", cols, shuffle_rows=700)
    assert not np.array_equal(other.log_lift(frame[cols]), ll)


def test_validation_split_follows_row_positions(table: Any) -> None:
    from privwatch.estimators._stream_training import RowSplit

    split = RowSplit(seed=11, threshold=0.2)
    whole = split.validation(0, 100_000)
    assert np.array_equal(np.concatenate([split.validation(0, 300), split.validation(300, 700)]),
                          whole[:1000])  # fmt: skip
    # Binomial(100000, 0.2): sd 126; 6 sd
    assert abs(int(whole.sum()) - 20_000) < 760
    assert not np.array_equal(RowSplit(12, 0.2).validation(0, 1000), whole[:1000])
    _, folder = table
    est = ClassifierLift(epochs=1, n_ensemble=2, calibrate=False, rng=0)
    est.fit_source(folder / "all.parquet", "s", ["x"], max_validation_rows=150)
    # 150 / 3000 = 5 % of the records validate (not validation_fraction's 20 %): Binomial(3000,
    # 0.05) per member, sd 11.9, within 4 sd of 150; each member has its own split
    assert all(abs(n - 150) < 48 for n in est.validation_sizes_), est.validation_sizes_
    est.fit_source(folder / "all.parquet", "s", ["x"])
    assert all(abs(n - 600) < 88 for n in est.validation_sizes_), est.validation_sizes_  # 4 sd
    assert est.validation_sizes_[0] != est.validation_sizes_[1]


def test_an_epoch_yields_every_training_record_once(tmp_path: Path) -> None:
    """A file sorted by the sensitive value in 40 row groups: each epoch yields each training
    record exactly once, in full mini-batches but the last, row groups in a new order, and
    mini-batches that mix the sensitive values."""
    from privwatch.estimators._stream_source import SourceReader
    from privwatch.estimators._stream_training import RowSplit, TrainingStream

    n = 4000
    frame = pd.DataFrame({"row": np.arange(n), "s": np.repeat([0, 1], n // 2)})
    frame.to_parquet(tmp_path / "sorted.parquet", row_group_size=100)
    reader = SourceReader(tmp_path / "sorted.parquet", ["row", "s"], read_rows=64)
    split = RowSplit(5, 0.2)

    def encode(f: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        return f[["row"]].to_numpy(np.float32), f["s"].to_numpy(np.int64)

    stream = TrainingStream(reader, encode, split, batch_size=128, shuffle_rows=1000,
                            order_rng=np.random.default_rng(0), device="cpu")  # fmt: skip
    train = np.flatnonzero(~split.validation(0, n))
    gen = torch.Generator().manual_seed(0)
    firsts = []
    for _ in range(2):
        batches = list(stream.epoch(gen))
        rows = np.concatenate([x[:, 0].numpy() for x, _ in batches]).astype(np.int64)
        np.testing.assert_array_equal(np.sort(rows), train)
        assert all(len(s) == 128 for _, s in batches[:-1]) and 0 < len(batches[-1][1]) <= 128
        mixed = [0 < float(s.float().mean()) < 1 for _, s in batches[:-1]]
        assert np.mean(mixed) > 0.9, np.mean(mixed)
        firsts.append(rows[:128])
    assert not np.array_equal(firsts[0], firsts[1])


def test_score_source_streams_the_log_lift(table: Any, tmp_path: Path) -> None:
    frame, folder = table
    est = DVLift(rng=0, **FAST).fit_source(str(folder / "part-*.parquet"), "s", ["x", "c"])
    out = est.score_source(str(folder / "part-*.parquet"), tmp_path / "scores.parquet",
                           keep=["k"], read_rows=700)  # fmt: skip
    scores = pd.read_parquet(out)
    assert not (tmp_path / "scores.parquet.partial").exists()
    assert list(scores.columns) == ["privwatch_row", "k", "risk", "log_lift[hi]", "log_lift[lo]",
                                    "log_lift[mid]"]  # fmt: skip
    np.testing.assert_array_equal(scores["privwatch_row"], np.arange(3000))
    np.testing.assert_array_equal(scores["k"], frame["k"])
    ll = est.log_lift(frame[["x", "c"]])
    # batches of 700 rows through the same network: float32 matrix products of another
    # height may round differently, hence 1e-5 and not equality
    got = scores[["log_lift[hi]", "log_lift[lo]", "log_lift[mid]"]].to_numpy()
    np.testing.assert_allclose(got, ll, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(scores["risk"], np.abs(ll).max(axis=1), rtol=1e-5, atol=1e-5)
    sizes = [len(b) for b in est.score_batches(frame, read_rows=1000)]
    assert sizes == [1000, 1000, 1000]


def test_streamed_fit_saves_loads_and_leaves_torch_state_alone(table: Any, tmp_path: Path) -> None:
    frame, folder = table
    before = torch.random.get_rng_state()
    est = ClassifierLift(rng=0, dropout=0.1, progress=True, **FAST)
    est.fit_source(folder / "all.parquet", "s", ["x"])  # with the progress bars
    assert torch.equal(torch.random.get_rng_state(), before)
    est.save(tmp_path / "m.pwm")
    back = ClassifierLift.load(tmp_path / "m.pwm")
    assert np.array_equal(back.log_lift(frame[["x"]]), est.log_lift(frame[["x"]]))


def test_streamed_fit_errors(table: Any, tmp_path: Path) -> None:
    frame, folder = table
    src = folder / "all.parquet"
    est = ClassifierLift(rng=0, **FAST)
    with pytest.raises(ValidationError, match=r"missing \['nope'\]"):
        est.fit_source(src, "s", ["x", "nope"])
    with pytest.raises(ValidationError, match="`sensitive` must be one column name"):
        est.fit_source(src, ["s"], ["x"])
    with pytest.raises(ValidationError, match="`observed` must not contain the sensitive"):
        est.fit_source(src, "s", ["x", "s"])
    with pytest.raises(ValidationError, match="`observed` must be a non-empty list"):
        est.fit_source(src, "s", "x")
    with pytest.raises(ValidationError, match="`source` must name existing Parquet files"):
        est.fit_source(str(tmp_path / "none-*.parquet"), "s", ["x"])
    with pytest.raises(ValidationError, match="`source` must be a Parquet file or glob"):
        est.fit_source(frame.to_numpy(), "s", ["x"])
    with pytest.raises(ValidationError, match="`read_rows` must be"):
        est.fit_source(src, "s", ["x"], read_rows=0)
    with pytest.raises(ValidationError, match="`classifier` must be None"):
        from sklearn.linear_model import LogisticRegression

        ClassifierLift(classifier=LogisticRegression()).fit_source(src, "s", ["x"])
    odd = frame.assign(t=pd.Timestamp("2020-01-01"), x2=frame["x"].where(frame.index % 7 > 0))
    odd.to_parquet(tmp_path / "odd.parquet")
    with pytest.raises(ValidationError, match=r"numeric, boolean or text; got \{'t': 'timestamp"):
        est.fit_source(tmp_path / "odd.parquet", "s", ["x", "t"])
    with pytest.raises(ValidationError, match=r"no missing values; got \{'x2': 429\}"):
        est.fit_source(tmp_path / "odd.parquet", "s", ["x2"])
    frame.assign(s="one").to_parquet(tmp_path / "one.parquet")
    with pytest.raises(ValidationError, match="`sensitive` must take at least two values"):
        est.fit_source(tmp_path / "one.parquet", "s", ["x"])
    frame.iloc[:10].assign(x=frame["c"].iloc[:10]).to_parquet(tmp_path / "mix-1.parquet")
    frame.iloc[:10].to_parquet(tmp_path / "mix-0.parquet")
    with pytest.raises(ValidationError, match="column 'x' must have one type in every file"):
        est.fit_source(str(tmp_path / "mix-*.parquet"), "s", ["x"])
    with pytest.raises(ValidationError, match="both to train on and to validate on"):
        est.fit_source(frame.iloc[:2], "s", ["x"])
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(ValidationError, match="`source` must be Parquet files"):
        est.fit_source(tmp_path / "bad.parquet", "s", ["x"])
    fitted = ClassifierLift(rng=0, epochs=1, n_ensemble=1).fit_source(src, "s", ["x"])
    with pytest.raises(ValidationError, match="`out` must be a path ending in .parquet"):
        fitted.score_source(src, tmp_path / "scores.csv")
    with pytest.raises(ValidationError, match="`keep` must be a list of column names"):
        next(fitted.score_batches(src, keep="k"))
    with pytest.raises(ValidationError, match="`keep` must name distinct columns other than"):
        next(fitted.score_batches(frame.rename(columns={"k": "risk"}), keep=["risk"]))
    with pytest.raises(ValidationError, match=r"missing \['x'\]"):
        next(fitted.score_batches(frame[["s", "c"]]))


@pytest.mark.slow  # 4 neural fits of 20,000 records x 30 epochs: ~60 s on the shared machine
@pytest.mark.parametrize("make", [ClassifierLift, DVLift], ids=["classifier", "dv"])
def test_streamed_fit_is_as_accurate_as_the_in_memory_fit(tmp_path: Path, make: Any) -> None:
    """The streamed and the in-memory fit are the same estimator with another validation
    split and another mini-batch order, so they cannot agree better than two in-memory fits
    with different seeds do. Tolerance: on 5,000 held-out records, the streamed fit's RMS
    distance to the in-memory fit of the same seed is at most 1.5x the RMS distance between
    two in-memory seeds, and its RMS error to the closed-form log-lift at most 1.5x the
    in-memory fits' (each averaged over the 2 seeds; single fits of this size differ in that
    error by up to 30 % between seeds: 0.20 and 0.26 measured). Measured here (2026-11-23):
    classifier 0.92x and 1.17x, DV 0.87x and 0.98x (classifier with seeds 2, 3: 0.69x and
    0.86x: the streamed fit is not worse, the spread is seed noise)."""
    frame, _ = records(20_000, 0)
    test, truth = records(5000, 1)
    frame.to_parquet(tmp_path / "t.parquet", row_group_size=2000)
    cols = ["x", "c"]
    kw = {"epochs": 30, "n_ensemble": 1, "patience": 10}
    mem = [make(rng=r, **kw).fit(frame[cols], frame["s"]).log_lift(test[cols]) for r in (0, 1)]
    streamed = [
        make(rng=r, **kw).fit_source(tmp_path / "t.parquet", "s", cols).log_lift(test[cols])
        for r in (0, 1)
    ]

    def rms(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.sqrt(np.mean((a - b) ** 2)))

    seed_to_seed = rms(mem[0], mem[1])
    cross = (rms(mem[0], streamed[0]) + rms(mem[1], streamed[1])) / 2
    assert cross <= 1.5 * seed_to_seed, (cross, seed_to_seed)
    err_mem = (rms(mem[0], truth) + rms(mem[1], truth)) / 2
    err_streamed = (rms(streamed[0], truth) + rms(streamed[1], truth)) / 2
    assert err_streamed <= 1.5 * err_mem, (err_streamed, err_mem)
