"""Shared machinery of the neural log-lift estimators: split, preprocessing, save / load.

Training runs through privwatch's one trainer (:mod:`privwatch._trainer`): the ensemble
members side by side as one stacked program (:mod:`._stacking`, :mod:`._stacked_lift`), or one
after another (:mod:`._neural_training`); saving and loading are in :mod:`._neural_saved`.
torch is imported only when a model is fitted or loaded.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._base import check_is_fitted
from .._device import resolve_device
from .._rng import RNGLike
from .._validation import (
    check_nonnegative,
    check_open_fraction,
    check_positive,
    check_positive_int,
    check_probability,
)
from ..engines import write_parquet_frames
from ..exceptions import ValidationError
from ._base import LiftEstimator
from ._lift import FloatArray, normalize_log_lift
from ._neural_saved import SavedNetworks
from ._preprocess import TabularPreprocessor, as_frame
from ._stream_fit import scan_source, score_batches

if TYPE_CHECKING:
    from ._stream_training import StreamedMembers


__all__ = ["NeuralLift"]


class NeuralLift(SavedNetworks, LiftEstimator):
    """Base of the torch estimators: subclasses define ``_n_outputs``, ``_loss`` and
    ``_log_lift_from_outputs``."""

    #: One cv split for the record-level watchdog: 6 networks' fits (times the ensemble) in
    #: place of 16, about half the CPU-seconds of ``--estimator classifier`` on COMPAS.
    cross_fit_splits = 1

    def __init__(
        self,
        *,
        hidden: Sequence[int] = (64, 64),
        activation: str = "relu",
        dropout: float = 0.0,
        epochs: int = 200,
        batch_size: int = 256,
        lr: float = 1e-3,
        weight_decay: float = 1e-3,
        validation_fraction: float = 0.2,
        patience: int = 30,
        n_ensemble: int = 5,
        optimizer: str = "adam",
        progress: bool = False,
        device: str = "cpu",
        rng: RNGLike = None,
    ) -> None:
        self.hidden = hidden
        self.activation = activation
        self.dropout = dropout
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.weight_decay = weight_decay
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.n_ensemble = n_ensemble
        self.optimizer = optimizer
        self.progress = progress
        self.device = device
        self.rng = rng

    # ------------------------------------------------------------------ hooks
    def _loss(self, model: Any, x: Any, s: Any, *, generator: Any, evaluation: bool = False) -> Any:
        raise NotImplementedError

    def _member_log_lift(self, k: int, out: FloatArray) -> FloatArray:
        """Log-lift estimate of ensemble member ``k`` from its network outputs."""
        raise NotImplementedError

    def _after_fit(self, k: int, x_val: Any, s_val: Any) -> None:
        """Post-training step of member ``k`` on its validation split (calibration, diagnostics)."""

    # ------------------------------------------------------------------ fit / predict
    def _check(self) -> None:
        check_positive_int(self.epochs, "epochs")
        check_positive_int(self.batch_size, "batch_size")
        check_positive(self.lr, "lr")
        check_open_fraction(self.validation_fraction, "validation_fraction")
        from .._torch import ACTIVATIONS  # the names privwatch._torch.mlp builds (one owner)

        if self.activation not in ACTIVATIONS:
            raise ValidationError(
                f"`activation` must be one of {ACTIVATIONS}; got {self.activation!r}."
            )
        if self.optimizer not in ("adam", "adagrad"):
            raise ValidationError(
                f"`optimizer` must be 'adam' or 'adagrad'; got {self.optimizer!r}."
            )
        check_positive_int(self.n_ensemble, "n_ensemble")
        check_positive_int(self.patience, "patience")
        check_nonnegative(self.weight_decay, "weight_decay")
        if check_probability(self.dropout, "dropout") >= 1:  # NaN fails check_probability
            raise ValidationError(f"`dropout` must be in [0, 1); got {self.dropout!r}.")
        if not all(isinstance(h, numbers.Integral) and h >= 1 for h in self.hidden):
            raise ValidationError(f"`hidden` must be positive layer widths; got {self.hidden!r}.")

    def fit(self, X: pd.DataFrame | ArrayLike, s: ArrayLike) -> NeuralLift:
        """Train on ``X`` (records) and ``s`` (their sensitive labels) with a validation split.

        Every draw comes from ``rng``: the splits from NumPy, the batches and the product
        shuffles from a local ``torch.Generator``; the initial weights and dropout masks, which
        torch draws from its global generator, inside :func:`privwatch._torch.seeded_global_rng`
        (the caller's torch state is restored). Same ``rng``, same estimator. The ensemble
        members train side by side as one stacked program
        (:mod:`privwatch.estimators._stacked_lift`); each is the network its own fit would
        give, up to float rounding.
        """
        from ._stacking import LiftStack, stacking

        if stacking():
            LiftStack().add(self, X, s).fit()
            return self
        from ._neural_training import fit_members  # one network after another

        x_all, s_all, draw, dev = self._prepare_memory(X, s)

        def tensors(g: np.random.Generator) -> tuple[Any, tuple[Any, Any]]:
            rows, validation = draw(g)
            return (x_all[rows], s_all[rows]), validation

        fit_members(self, int(x_all.shape[1]), tensors, dev)
        return self

    def _prepare_memory(
        self, X: pd.DataFrame | ArrayLike, s: ArrayLike
    ) -> tuple[Any, Any, Callable[[np.random.Generator], tuple[Any, tuple[Any, Any]]], Any]:
        """Check the settings, fit the labels, prior and preprocessing; return the features
        and codes of all records (tensors on the device), the members' draw (a permutation
        from the generator: the training rows and the validation pair) and the device."""
        from .._torch import torch  # torch only when a model is fitted

        self._check()
        dev = resolve_device(self.device)
        frame = as_frame(X)
        codes = self._fit_sensitive(s, len(frame))
        self.preprocessor_ = TabularPreprocessor().fit(frame)
        x_all = torch.as_tensor(self.preprocessor_.transform(frame), device=dev)
        s_all = torch.as_tensor(codes, device=dev)
        n_val = max(1, round(self.validation_fraction * len(frame)))

        def draw(g: np.random.Generator) -> tuple[Any, tuple[Any, Any]]:
            order = torch.as_tensor(g.permutation(len(frame)), device=dev)
            val, tr = order[:n_val], order[n_val:]
            return tr, (x_all[val], s_all[val])

        return x_all, s_all, draw, dev

    def _stackable(self) -> bool:
        """True: the members train in a stack (:mod:`privwatch.estimators._stacking`)."""
        return True

    def _stacked_loss(self) -> tuple[str, str | None]:
        """The loss of a stacked fit: ``("ce", None)``, ``("dv", product)`` or
        ``("nwj", product)`` (:meth:`StackedLiftTrainer.member_losses`)."""
        raise NotImplementedError

    def _start_members(self, dev: Any) -> None:
        """Empty the per-member results before training (and put the log-prior on ``dev``)."""
        from .._torch import torch

        self._log_prior = torch.as_tensor(np.log(self.prior_), dtype=torch.float32, device=dev)
        self.models_: list[Any] = []
        self.histories_: list[Any] = []
        self.best_epochs_: list[int] = []
        self.validation_sizes_: list[int] = []
        self._init_members()

    def _init_members(self) -> None:
        """Reset per-member state before training."""

    def _check_streamable(self) -> None:
        """Raise when this configuration cannot train from streamed batches."""

    # ------------------------------------------------------------------ streamed sources
    def fit_source(
        self,
        source: Any,
        sensitive: str,
        observed: Sequence[str],
        *,
        read_rows: int = 65_536,
        shuffle_rows: int = 262_144,
        max_validation_rows: int = 100_000,
        leave_out_fold: tuple[int, int, int] | None = None,
    ) -> NeuralLift:
        r"""Train on the records of ``source`` streamed in batches, never loading the table.

        ``source`` is a Parquet file or glob (files in name order, as
        :func:`privwatch.engines.iter_batches` reads them) or a pandas DataFrame; ``sensitive``
        names the sensitive column and ``observed`` the observed columns (numeric, boolean or
        text; no missing values). The estimate is the one :meth:`fit` makes (Hsu, Asoodeh,
        Calmon, "Information-theoretic privacy watchdogs", §IV): the log-lift

        .. math:: i(s, x) = \log \frac{P_{S|X}(s|x)}{P_S(s)}

        from a classifier's posterior or as the maximiser of the Donsker-Varadhan bound
        :math:`\mathbb{E}_{P_{SX}}[g] - \log \mathbb{E}_{P_S P_X}[e^{g}]` (eq. 12-13); only
        the way the records reach the network differs:

        - one pass computes the prior :math:`\hat P_S` and the preprocessing (numeric means and
          standard deviations, merged slice by slice; the text columns' values);
        - each ensemble member's validation records are those whose row position hashes
          (SplitMix64 with a seed drawn from ``rng``) below
          ``min(validation_fraction, max_validation_rows / n)``: the split depends on the row
          positions only, not on the order of reading; they are held in memory (about
          ``max_validation_rows`` at most) for early stopping and the member's calibration
          (``validation_sizes_`` counts them);
        - every epoch re-reads the source, its pieces (Parquet row groups; ``read_rows`` rows
          of a DataFrame) in a random order, through a shuffle buffer of ``shuffle_rows``
          records permuted and cut into ``batch_size`` mini-batches. A file sorted by the
          sensitive value with few row groups is shuffled only within the buffer: write it in
          row groups smaller than ``shuffle_rows`` (or shuffled).

        The members train side by side (one stacked program, each reading its own stream).
        Memory, per member: its network, one slice of ``read_rows`` records, its buffer and
        validation records; none grows with the table. Same ``rng`` and pieces, same
        estimator, bit for bit (a Parquet file or the DataFrame of its rows cut at the same
        row-group boundaries).

        ``leave_out_fold=(folds, seed, k)`` leaves the records of fold ``k`` out of the
        statistics, the training and the validation (the fold of a record is
        :func:`privwatch.engines.fold_of` of its row position, as in the engines' counts):
        the estimator of one fold of a cross-fit
        (:func:`~privwatch.estimators.cross_fit_source`).

        Examples
        --------
        >>> import os, tempfile
        >>> import numpy as np, pandas as pd
        >>> from privwatch.estimators import ClassifierLift
        >>> g = np.random.default_rng(0)
        >>> s = g.integers(0, 2, 2000)
        >>> x, c = s + g.normal(0, 1, 2000), g.choice(["a", "b"], 2000)
        >>> df = pd.DataFrame({"s": s, "x": x, "c": c})
        >>> path = os.path.join(tempfile.mkdtemp(), "records.parquet")
        >>> df.to_parquet(path, row_group_size=500)
        >>> est = ClassifierLift(epochs=5, n_ensemble=1, rng=0).fit_source(path, "s", ["x", "c"])
        >>> est.log_lift(df[["x", "c"]]).shape
        (2000, 2)
        """
        from ._stacking import LiftStack, stacking

        settings = (read_rows, shuffle_rows, max_validation_rows, leave_out_fold)
        members = self._streamed_members(source, sensitive, observed, *settings)
        if stacking():
            LiftStack().add_streamed(self, members).fit()
            return self
        from ._neural_training import fit_members  # one network after another
        from ._stream_training import StreamLiftTrainer

        n_in, dev = self.preprocessor_.n_features_, members.device
        fit_members(self, n_in, members, dev, " (streamed)", StreamLiftTrainer)
        return self

    def _streamed_members(
        self,
        source: Any,
        sensitive: str,
        observed: Sequence[str],
        read_rows: int,
        shuffle_rows: int,
        max_validation_rows: int,
        leave_out_fold: tuple[int, int, int] | None,
    ) -> StreamedMembers:
        """Check the settings, make the statistics pass (the prior, labels and preprocessing
        are fitted from it) and return the members' data
        (:class:`~privwatch.estimators._stream_training.StreamedMembers`)."""
        from ._stream_training import StreamedMembers  # torch, on demand

        self._check()
        self._check_streamable()
        check_positive_int(shuffle_rows, "shuffle_rows")
        check_positive_int(max_validation_rows, "max_validation_rows")
        dev = resolve_device(self.device)
        progress = bool(self.progress)
        scan = scan_source(source, sensitive, observed, read_rows, progress, leave_out_fold)
        self.sensitive_labels_, self.prior_ = scan.labels, scan.prior
        self.preprocessor_ = scan.preprocessor
        threshold = min(float(self.validation_fraction), max_validation_rows / scan.n_records)
        return StreamedMembers(scan, threshold, self.batch_size, shuffle_rows, dev)

    def score_batches(
        self, source: Any, *, keep: Sequence[str] = (), read_rows: int = 65_536
    ) -> Iterator[pd.DataFrame]:
        r"""Score the records of ``source`` (a Parquet file or glob, or a DataFrame) batch by
        batch: one frame per batch with ``privwatch_row`` (0-based position in the source, as
        in the engines' labelled records: :data:`privwatch.engines.ROW_COLUMN`), the
        ``keep`` columns, ``risk`` (:math:`\max_s |\hat i(s, x)|`) and ``log_lift[<s>]`` per
        sensitive value, in source order; one batch is in memory at a time."""
        check_is_fitted(self, "models_")
        columns, labels = list(self.preprocessor_.columns_), list(self.sensitive_labels_)
        yield from score_batches(self.log_lift, columns, labels, source, keep, read_rows)

    def score_source(
        self,
        source: Any,
        out: str | Path,
        *,
        keep: Sequence[str] = (),
        read_rows: int = 65_536,
    ) -> Path:
        """Write :meth:`score_batches`'s frames to the Parquet file ``out`` as they come
        (through ``out.partial``, renamed when complete); returns ``out``."""
        return write_parquet_frames(self.score_batches(source, keep=keep, read_rows=read_rows), out)

    def _n_outputs(self) -> int:
        return len(self.sensitive_labels_)

    def _outputs(self, X: pd.DataFrame | ArrayLike) -> list[FloatArray]:
        """Network outputs of every ensemble member."""
        check_is_fitted(self, "models_")
        from .._torch import torch

        dev = next(self.models_[0].parameters()).device
        feats = torch.as_tensor(self.preprocessor_.transform(X), device=dev)
        with torch.no_grad():
            return [
                np.asarray(m(feats).double().cpu().numpy(), dtype=np.float64) for m in self.models_
            ]

    def log_lift(self, X: pd.DataFrame | ArrayLike) -> FloatArray:
        """Estimated log-lift ``i(s, x)`` of each record (rows) and sensitive value (columns).

        With an ensemble, the members' estimates are averaged and renormalized so that
        ``sum_s P(s) exp(i(s, x)) = 1``.
        """
        outs = self._outputs(X)
        ll = np.mean([self._member_log_lift(k, o) for k, o in enumerate(outs)], axis=0)
        return normalize_log_lift(ll, self.prior_)
