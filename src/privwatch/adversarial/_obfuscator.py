"""Location obfuscation learned by a generator against a re-initialised classifier.

Romanelli, Chatzikokolakis, Palamidessi, "Optimal Obfuscation Mechanisms via Machine Learning"
(§III, Algorithm 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator

from .._base import check_is_fitted
from .._device import DeviceLike, resolve_device
from .._rng import RNGLike, check_rng
from .._torch import build_seeded, generator_from, module_device, reinit_linear, torch
from .._trainer import EarlyStopping, History, Trainer
from .._validation import (
    check_planar_points,
)
from ..exceptions import ValidationError
from ..mechanisms import Mechanism, Privacy
from ._clf_rounds import initial_classifier
from ._exact import BayesGame
from ._generators import make_generator
from ._obfuscator_checks import check_obfuscator
from ._obfuscator_io import load_obfuscator, save_obfuscator
from ._obfuscator_trainer import ClassifierGame, obfuscator_callbacks

__all__ = ["Obfuscator"]


class Obfuscator(BaseEstimator, Mechanism):  # type: ignore[misc]
    r"""A learned location-obfuscation mechanism P(release | observed location) hiding the
    user's identity (the sensitive attribute).

    A generator :math:`G(w, u)` (true location w, seed u uniform on [0, 1)^``noise_dim``) fights a
    classifier :math:`C(z)` that guesses the user from the release z (Romanelli et al., Alg. 1).
    Each iteration i: the classifier is reset to its initial weights :math:`C_0` and trained with
    cross entropy on :math:`G_{i-1}`'s releases of the training points; then the generator is
    trained against this :math:`C_i` with

    .. math:: \mathrm{Loss}_G = \alpha\,\mathrm{softplus}(\mathbb{E}[d(W, Z)] - L')
              + \beta\, I(X; Y)

    where :math:`I(X; Y)` is the batch mutual information of the true user and the
    classifier's guess (eq. 18-21, :func:`batch_mutual_information`) and
    :math:`L' = (1 - \text{margin}) L` (eq. 22-23; distances in metres). ``loss="cross_entropy"``
    replaces the MI term by minus the classifier's cross entropy: the generator then learns to
    swap users and the game does not settle (§IV-A1, Fig. 4). :math:`G_0` is exactly the planar
    Laplace of ``init_epsilon`` (the network's correction starts at zero).

    The generator kept is the one whose releases of the held-out validation points the freshly
    trained classifier guessed worst, among those within the budget there; training stops when
    that accuracy has not fallen for ``patience`` iterations (or after ``max_iter``).
    Training runs through the one trainer of privwatch (:mod:`privwatch._trainer`): one epoch
    is one iteration of Algorithm 1 (:mod:`privwatch.adversarial._obfuscator_trainer`).

    Notation (Romanelli et al.): observed = W (true location), sensitive = X (user),
    guess = Y (the classifier's prediction), release = Z; the seed is u.

    Parameters
    ----------
    budget : float or None
        L, the expected displacement allowed (metres). None (the default): half the
        root-mean-square distance of the points given to :meth:`fit` from their centre
        (``budget_``).
    loss : {"mutual_information", "cross_entropy"}
    generator : {"laplace", "anchors"}
        ``"laplace"`` (the paper's): z = w + gain * Laplace(u) + scale * h(w, u), G0 the planar
        Laplace of ``init_epsilon``. ``"anchors"``: a release with finite support, z = a_k with
        probability softmax_k(h(w)_k - |w - a_k| / tau) over ``anchor_grid**2`` learned anchor
        points (G0: anchors on a grid over the training points' bounding box, tau = L / 5); the
        generator loss then takes the exact expectation over k. The exact optimum uses few
        outputs, and concentrated releases are what the grid estimator can measure (see
        :mod:`privwatch.adversarial._generators`).
    anchor_grid : int
        Side of the initial anchor grid (``generator="anchors"``).
    attacker : {"classifier", "bayes"}
        ``"classifier"`` is Algorithm 1. ``"bayes"`` (``generator="anchors"`` only; not in the
        paper): the generator descends the *exact* I(X; Z) of its own release probabilities over
        all training points — the Bayes posterior replaces the classifier's prediction in
        eq. 18-21, so no classifier is trained — in rounds of ``generator_epochs`` full-batch
        steps; each round is checked, as in Algorithm 1, by the Bayes attacker's accuracy and
        the displacement on the validation points (see :mod:`privwatch.adversarial._exact`).
    alpha, beta : float
        Weights of the utility (softplus) and privacy terms.
    init_epsilon : float or None
        Planar-Laplace epsilon of G0 (per metre); None: 20 / budget (expected displacement
        L / 10). The paper starts from a spread-out G0 (ln 2 / 100 for L = 270 m); in our runs a
        concentrated G0 ends in tighter, better-mixed releases (experiments/
        romanelli2020_obfuscation records both).
    margin : float
        The generator aims at (1 - margin) L so that held-out displacement stays within L.
    hits : int
        Releases per training point (different seeds) for the classifier each iteration.
    classifier_epochs, generator_epochs : int
        Passes over the training releases / training points per iteration.
    callbacks : sequence
        :class:`privwatch._trainer.Callback` objects or functions ``fn(record, self)`` called
        after each classifier round; ``self.release`` then releases with the generator that
        round measured (for snapshots, e.g. Fig. 4).

    progress : bool
        Show a progress bar (current held-out accuracy and displacement).
    rng : int, Generator or None
        Seeds the split, the initial weights and every seed draw (local generators only:
        torch's and NumPy's global states are left as they were).
    device : {"cpu", "cuda", "cuda:N", "auto"} or torch.device
        Where the networks and the data live during :meth:`fit` (moved there once; the seed
        draws come from a generator on that device). :meth:`release` returns NumPy arrays; a
        saved model loads on a machine without a GPU.
    cuda_graph : bool
        On CUDA, run each classifier epoch of Algorithm 1 as one captured CUDA graph (static
        buffers, Adam state on the device, reset in place each round); falls back to eager
        execution with a :class:`~privwatch.adversarial.GraphFallbackWarning` saying why.
        Ignored on the CPU.

    Attributes
    ----------
    budget_ : float
        The budget L the mechanism was trained for.
    history_ : History
        One record per epoch (iteration of Algorithm 1): ``epoch``, ``train_accuracy``,
        ``val_accuracy``, ``val_distortion`` (metres) and ``val_mutual_information`` (nats,
        of the true user and the classifier's guess on the validation releases).
    best_epoch_ : int
        The epoch whose classifier (``attacker="bayes"``: whose check) measured the kept
        generator (-1: none was within the budget; G0 is kept).
    val_accuracy_ : float
        That classifier's (the Bayes attacker's) held-out accuracy (for G0 kept: the first
        epoch's).
    """

    def __init__(
        self,
        budget: float | None = None,
        *,
        loss: str = "mutual_information",
        generator: str = "laplace",
        anchor_grid: int = 8,
        attacker: str = "classifier",
        alpha: float = 1.0,
        beta: float = 2.0,
        init_epsilon: float | None = None,
        margin: float = 0.02,
        noise_dim: int = 3,
        generator_hidden: tuple[int, ...] = (100, 100, 100),
        classifier_hidden: tuple[int, ...] = (60, 100, 51),
        max_iter: int = 200,
        patience: int = 40,
        hits: int = 10,
        classifier_epochs: int = 10,
        classifier_batch_size: int = 512,
        classifier_lr: float = 1e-3,
        generator_epochs: int = 10,
        generator_batch_size: int = 512,
        generator_lr: float = 1e-4,
        validation_fraction: float = 0.2,
        progress: bool = False,
        callbacks: Sequence[Any] = (),
        rng: RNGLike = None,
        device: DeviceLike = "cpu",
        cuda_graph: bool = True,
    ) -> None:
        self.budget = budget
        self.loss = loss
        self.generator = generator
        self.anchor_grid = anchor_grid
        self.attacker = attacker
        self.alpha = alpha
        self.beta = beta
        self.init_epsilon = init_epsilon
        self.margin = margin
        self.noise_dim = noise_dim
        self.generator_hidden = generator_hidden
        self.classifier_hidden = classifier_hidden
        self.max_iter = max_iter
        self.patience = patience
        self.hits = hits
        self.classifier_epochs = classifier_epochs
        self.classifier_batch_size = classifier_batch_size
        self.classifier_lr = classifier_lr
        self.generator_epochs = generator_epochs
        self.generator_batch_size = generator_batch_size
        self.generator_lr = generator_lr
        self.validation_fraction = validation_fraction
        self.progress = progress
        self.callbacks = callbacks
        self.rng = rng
        self.device = device
        self.cuda_graph = cuda_graph

    # ------------------------------------------------------------------ checks
    def _validate(self) -> None:
        check_obfuscator(self)

    # ------------------------------------------------------------------ fit
    def fit(self, observed: ArrayLike, sensitive: ArrayLike) -> Obfuscator:
        """Train on true locations ``observed`` ((n, 2) metres) labelled by the ``sensitive``
        user of each (any hashable labels)."""
        self._validate()
        setup = self._setup(observed, sensitive)
        game: Trainer
        if self.attacker == "bayes":  # no classifier: the exact posterior is the attacker
            callbacks = obfuscator_callbacks(self, setup.gen, min_delta=1e-6)
            game = BayesGame(
                self,
                setup.gen,
                setup.train,
                setup.valid,
                n_users=setup.n_users,
                target=setup.target,
                stopping=callbacks,
            )
        else:
            callbacks = obfuscator_callbacks(self, setup.gen, min_delta=1e-4)
            game = ClassifierGame(
                self,
                setup.gen,
                setup.clf,
                setup.train,
                setup.valid,
                n_users=setup.n_users,
                target=setup.target,
                generator=setup.tg,
                stopping=callbacks,
            )
        history = game.run()
        graph = getattr(getattr(game, "rounds", None), "graph", None) is not None
        return self._finish(history, callbacks, graph)

    def _setup(self, observed: ArrayLike, sensitive: ArrayLike) -> SimpleNamespace:
        """Everything a fit starts from, drawn from ``rng`` in one order (shared by
        :meth:`fit` and the stacked fit): the training and validation tensors, the seed
        generator ``tg`` (on the device), G0 (``gen``, also ``generator_``) and C0 (``clf``,
        None for the Bayes attacker), the displacement ``target`` and ``n_users``."""
        points, codes = self._check_data(observed, sensitive)
        g = check_rng(self.rng)
        dev = resolve_device(self.device)
        tg = generator_from(g, dev)
        tinit = generator_from(g)  # the initial weights, drawn on the CPU for every device
        val = self._validation_mask(codes, g)
        train = self._tensors(points[~val], codes[~val], dev)
        valid = self._tensors(points[val], codes[val], dev)
        self._centre = points.mean(axis=0)
        self._scale = float(np.sqrt(((points - self._centre) ** 2).sum(axis=1).mean())) or 1.0
        self.budget_ = 0.5 * self._scale if self.budget is None else float(self.budget)
        gen = self._initial_generator(train[0].cpu(), tinit).to(dev)
        self.generator_ = gen  # callbacks release with the generator the round measured
        n_users = len(self.users_)
        clf = None
        if self.attacker != "bayes":
            clf = initial_classifier(n_users, tuple(self.classifier_hidden), tinit).to(dev)
        return SimpleNamespace(
            dev=dev,
            tg=tg,
            train=train,
            valid=valid,
            gen=gen,
            clf=clf,
            target=(1.0 - self.margin) * self.budget_,
            n_users=n_users,
        )

    def _finish(self, history: History, callbacks: list[Any], graph: bool) -> Obfuscator:
        """The fitted attributes from the run's ``history`` and its early stopping."""
        self.history_: History = history
        stopping = next(c for c in callbacks if isinstance(c, EarlyStopping))
        self.cuda_graph_ = graph
        self.generator_.eval()
        self.best_epoch_ = stopping.best_epoch
        # none within the budget: G0 is kept, and its check is the first epoch's
        first = self.history_[0]["val_accuracy"]
        self.val_accuracy_ = stopping.best if stopping.best_epoch >= 0 else first
        self.n_iter_ = len(self.history_)
        return self

    def _check_data(self, observed: ArrayLike, sensitive: ArrayLike) -> tuple[Any, Any]:
        """The (n, 2) points and the users' codes; sets ``users_``."""
        points = check_planar_points(observed, "observed")
        labels = np.asarray(sensitive)
        if labels.shape != (len(points),):
            raise ValidationError(
                f"`sensitive` must have one label per point ({len(points)}); got shape "
                f"{labels.shape}."
            )
        self.users_, codes = np.unique(labels, return_inverse=True)
        if len(self.users_) < 2:
            raise ValidationError(
                f"`sensitive` must hold at least 2 users; got {len(self.users_)}."
            )
        return points, codes

    def _validation_mask(self, codes: Any, g: np.random.Generator) -> Any:
        """A stratified validation split: ``validation_fraction`` of each user's points."""
        val = np.zeros(len(codes), dtype=bool)
        for u in range(len(self.users_)):
            idx = np.flatnonzero(codes == u)
            n_val = max(1, round(self.validation_fraction * len(idx)))
            val[g.choice(idx, n_val, replace=False)] = True
        return val

    @staticmethod
    def _tensors(points: Any, codes: Any, dev: Any) -> tuple[Any, Any]:
        return (
            torch.as_tensor(points, dtype=torch.float32).to(dev),
            torch.as_tensor(codes, dtype=torch.int64).to(dev),
        )

    def _initial_generator(self, train_points: Any, tinit: Any) -> Any:
        """G0: the planar Laplace of ``init_epsilon`` (or anchors on a grid), the network's
        correction at zero; weights drawn from ``tinit``."""
        gen = build_seeded(
            lambda: make_generator(
                self.generator,
                tuple(self.generator_hidden),
                noise_dim=self.noise_dim,
                anchor_grid=self.anchor_grid,
                centre=self._centre,
                scale=self._scale,
                epsilon=float(self.init_epsilon or 20.0 / self.budget_),
                budget=self.budget_,
                points=train_points,
            ),
            None,
        )
        reinit_linear(gen, tinit)
        with torch.no_grad():  # h starts at zero: G0 is exactly its initial release
            gen.net[-1].weight.zero_()
            gen.net[-1].bias.zero_()
        return gen

    def _normalize(self, release: Any) -> Any:
        centre = torch.as_tensor(self._centre, dtype=torch.float32, device=release.device)
        return (release - centre) / self._scale

    # ------------------------------------------------------------------ use
    @property
    def privacy(self) -> Privacy:
        """What the kept generator was measured at (not a guarantee): the held-out accuracy of
        the adversary's guess of the user (``guess_accuracy``, a probability; see
        ``val_accuracy_``). Its releases are continuous, so :meth:`channel` raises."""
        check_is_fitted(self, "generator_")
        return Privacy("guess_accuracy", float(self.val_accuracy_), False)

    def release(self, observed: ArrayLike, rng: RNGLike = None) -> NDArray[np.float64]:
        """One obfuscated release per row of ``observed`` ((n, 2) true locations, metres)."""
        check_is_fitted(self, "generator_")
        points = check_planar_points(observed, "observed")
        dev = module_device(self.generator_)
        tg = generator_from(check_rng(rng), dev)
        noise = torch.rand((len(points), self.noise_dim), generator=tg, device=dev)
        with torch.no_grad():
            z = self.generator_(torch.as_tensor(points, dtype=torch.float32, device=dev), noise)
        return np.asarray(z.double().cpu().numpy(), dtype=np.float64)

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | Path) -> None:
        """Write ``path``: a checksummed privwatch model file (JSON parameters, users, history
        and the generator weights; see :mod:`privwatch._serialization`). Loading never executes
        code."""
        check_is_fitted(self, "generator_")
        save_obfuscator(self, path)

    @classmethod
    def load(cls, path: str | Path) -> Obfuscator:
        """Load a file written by :meth:`save`; a tampered or truncated file raises
        :class:`~privwatch.exceptions.TamperedFileError`, sizes beyond the memory budget
        :class:`~privwatch.exceptions.MemoryBudgetError`, before anything is built."""
        est: Obfuscator = load_obfuscator(cls, path)
        return est
