"""Location obfuscation learned by a generator against a re-initialised classifier.

Romanelli, Chatzikokolakis, Palamidessi, "Optimal Obfuscation Mechanisms via Machine Learning"
(§III, Algorithm 1).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator

from .._base import check_is_fitted
from .._device import DeviceLike, resolve_device
from .._memory import check_allocation
from .._rng import RNGLike, check_rng
from .._serialization import check_array, read_model, reconstructing, write_model
from .._validation import (
    check_open_fraction,
    check_planar_points,
    check_positive,
    check_positive_int,
)
from ..estimators._torch_utils import adam, mlp, require_torch
from ..exceptions import ValidationError
from ._clf_rounds import ClassifierRounds
from ._exact import train_against_bayes
from ._generators import GENERATORS, make_generator
from ._mi import batch_mutual_information
from ._runtime import build_seeded, device_generator, module_device, reinit_linear

__all__ = ["Obfuscator"]

LOSSES = ("mutual_information", "cross_entropy")
ATTACKERS = ("classifier", "bayes")


@dataclass(frozen=True)
class IterationRecord:
    """One round of Algorithm 1: the classifier C_i trained on G_{i-1}'s releases."""

    iteration: int
    train_accuracy: float
    val_accuracy: float
    val_distortion: float
    mutual_information: float

    def to_dict(self) -> dict[str, float]:
        return dict(vars(self))


class Obfuscator(BaseEstimator):  # type: ignore[misc]
    r"""A learned location-obfuscation mechanism :math:`P_{Z|W}` hiding the user's identity.

    A generator :math:`G(w, u)` (true location w, seed u uniform on [0, 1)^``noise_dim``) fights a
    classifier :math:`C(z)` that guesses the user from the release z (Romanelli et al., Alg. 1).
    Each iteration i: the classifier is reset to its initial weights :math:`C_0` and trained with
    cross entropy on :math:`G_{i-1}`'s releases of the training points; then the generator is
    trained against this :math:`C_i` with

    .. math:: \mathrm{Loss}_G = \alpha\,\mathrm{softplus}(\mathbb{E}[d(W, Z)] - L')
              + \beta\, I(X; Y)

    where :math:`I(X; Y)` is the batch mutual information of the true user X and the
    classifier's prediction Y (eq. 18-21, :func:`batch_mutual_information`) and
    :math:`L' = (1 - \text{margin}) L` (eq. 22-23; distances in metres). ``loss="cross_entropy"``
    replaces the MI term by minus the classifier's cross entropy: the generator then learns to
    swap users and the game does not settle (§IV-A1, Fig. 4). :math:`G_0` is exactly the planar
    Laplace of ``init_epsilon`` (the network's correction starts at zero).

    The generator kept is the one whose releases of the held-out validation points the freshly
    trained classifier guessed worst, among those within the budget there; training stops when
    that accuracy has not fallen for ``patience`` iterations (or after ``max_iter``).

    Parameters
    ----------
    budget : float
        L, the expected displacement allowed (metres).
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
    callback : callable or None
        ``callback(record, self)`` after each classifier round; ``self.sample`` then releases
        with the generator that round measured (for snapshots, e.g. Fig. 4).

    progress : bool
        Show a progress bar (current held-out accuracy and displacement).
    rng : int, Generator or None
        Seeds the split, the initial weights and every seed draw (local generators only:
        torch's and NumPy's global states are left as they were).
    device : {"cpu", "cuda", "cuda:N", "auto"} or torch.device
        Where the networks and the data live during :meth:`fit` (moved there once; the seed
        draws come from a generator on that device). :meth:`sample` returns NumPy arrays; a
        saved model loads on a machine without a GPU.
    cuda_graph : bool
        On CUDA, run each classifier epoch of Algorithm 1 as one captured CUDA graph (static
        buffers, Adam state on the device, reset in place each round); falls back to eager
        execution with a :class:`~privwatch.adversarial.GraphFallbackWarning` saying why.
        Ignored on the CPU.

    Attributes
    ----------
    history_ : list of IterationRecord
    best_iteration_ : int
        The iteration whose classifier (``attacker="bayes"``: whose check) measured the kept
        generator.
    val_accuracy_ : float
        That classifier's (the Bayes attacker's) held-out accuracy.
    """

    def __init__(
        self,
        budget: float,
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
        callback: Callable[[IterationRecord, Obfuscator], None] | None = None,
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
        self.callback = callback
        self.rng = rng
        self.device = device
        self.cuda_graph = cuda_graph

    # ------------------------------------------------------------------ checks
    def _validate(self) -> None:
        check_positive(self.budget, "budget")
        if self.loss not in LOSSES:
            raise ValidationError(f"`loss` must be one of {LOSSES}; got {self.loss!r}.")
        if self.generator not in GENERATORS:
            raise ValidationError(
                f"`generator` must be one of {GENERATORS}; got {self.generator!r}."
            )
        if self.attacker not in ATTACKERS:
            raise ValidationError(f"`attacker` must be one of {ATTACKERS}; got {self.attacker!r}.")
        if self.attacker == "bayes" and (
            self.generator != "anchors" or self.loss != "mutual_information"
        ):
            raise ValidationError(
                '`attacker="bayes"` needs a release with finite support and the MI loss: '
                f'generator="anchors", loss="mutual_information"; got generator='
                f"{self.generator!r}, loss={self.loss!r}."
            )
        check_positive(self.beta, "beta")
        if not (isinstance(self.alpha, (int, float)) and self.alpha >= 0):
            raise ValidationError(f"`alpha` must be a non-negative number; got {self.alpha!r}.")
        if self.init_epsilon is not None:
            check_positive(self.init_epsilon, "init_epsilon")
        if not (0 <= self.margin < 1):
            raise ValidationError(f"`margin` must be in [0, 1); got {self.margin!r}.")
        if not (isinstance(self.noise_dim, int) and self.noise_dim >= 3):
            raise ValidationError(
                f"`noise_dim` must be an int >= 3 (three seeds drive the planar Laplace of G0); "
                f"got {self.noise_dim!r}."
            )
        for name in (
            "anchor_grid",
            "max_iter",
            "patience",
            "hits",
            "classifier_epochs",
            "classifier_batch_size",
            "generator_epochs",
            "generator_batch_size",
        ):
            check_positive_int(getattr(self, name), name)
        check_open_fraction(self.validation_fraction, "validation_fraction")

    # ------------------------------------------------------------------ fit
    def fit(self, points: ArrayLike, users: ArrayLike) -> Obfuscator:
        """Train on ``points`` ((n, 2) metres) labelled by ``users`` (any hashable labels)."""
        self._validate()
        torch = require_torch()
        pts = check_planar_points(points, "points")
        lab = np.asarray(users)
        if lab.shape != (len(pts),):
            raise ValidationError(
                f"`users` must have one label per point ({len(pts)}); got shape {lab.shape}."
            )
        self.users_, codes = np.unique(lab, return_inverse=True)
        if len(self.users_) < 2:
            raise ValidationError(f"`users` must hold at least 2 users; got {len(self.users_)}.")
        g = check_rng(self.rng)
        dev = resolve_device(self.device)
        tg = device_generator(g, dev)
        tinit = torch.Generator()  # the initial weights, drawn on the CPU for every device
        tinit.manual_seed(int(g.integers(0, 2**62)))
        n_users = len(self.users_)
        # stratified validation split
        val = np.zeros(len(pts), dtype=bool)
        for u in range(n_users):
            idx = np.flatnonzero(codes == u)
            n_val = max(1, round(self.validation_fraction * len(idx)))
            val[g.choice(idx, n_val, replace=False)] = True
        w_tr = torch.as_tensor(pts[~val], dtype=torch.float32)
        x_tr = torch.as_tensor(codes[~val], dtype=torch.int64)
        w_va = torch.as_tensor(pts[val], dtype=torch.float32)
        x_va = torch.as_tensor(codes[val], dtype=torch.int64)

        centre = pts.mean(axis=0)
        scale = float(np.sqrt(((pts - centre) ** 2).sum(axis=1).mean())) or 1.0
        gen = build_seeded(
            lambda: make_generator(
                self.generator,
                tuple(self.generator_hidden),
                noise_dim=self.noise_dim,
                anchor_grid=self.anchor_grid,
                centre=centre,
                scale=scale,
                epsilon=float(self.init_epsilon or 20.0 / float(self.budget)),
                budget=float(self.budget),
                points=w_tr,
            ),
            None,
        )
        reinit_linear(gen, tinit)
        with torch.no_grad():  # h starts at zero: G0 is exactly its initial release
            gen.net[-1].weight.zero_()
            gen.net[-1].bias.zero_()
        gen.to(dev)
        w_tr, x_tr, w_va, x_va = (t.to(dev) for t in (w_tr, x_tr, w_va, x_va))
        target = (1.0 - self.margin) * float(self.budget)
        self._centre, self._scale = centre, scale
        self.history_: list[IterationRecord] = []
        if self.attacker == "bayes":  # no classifier: the exact posterior is the attacker
            return self._fit_bayes(gen, (w_tr, x_tr), (w_va, x_va), n_users, target)
        clf0 = build_seeded(lambda: mlp(2, tuple(self.classifier_hidden), n_users), None)
        reinit_linear(clf0, tinit)  # the draws torch's default init made before Glorot's
        for layer in clf0:
            if isinstance(layer, torch.nn.Linear):  # Glorot, as the paper's C0
                torch.nn.init.xavier_uniform_(layer.weight, generator=tinit)
                torch.nn.init.zeros_(layer.bias)
        clf0.to(dev)
        c0_state = copy.deepcopy(clf0.state_dict())
        clf = clf0
        rounds = ClassifierRounds(
            clf,
            c0_state,
            lr=self.classifier_lr,
            epochs=self.classifier_epochs,
            batch_size=self.classifier_batch_size,
            graph=bool(self.cuda_graph),
        )
        g_opt = adam(gen.parameters(), self.generator_lr)

        def release(w: Any, hits: int) -> tuple[Any, Any]:
            w_rep = w.repeat(hits, 1)
            u = torch.rand((len(w_rep), self.noise_dim), generator=tg, device=dev)
            with torch.no_grad():
                return gen(w_rep, u), w_rep

        def accuracy(z: Any, x: Any) -> float:
            with torch.no_grad():
                return float((clf(self._normalize(torch, z)).argmax(dim=1) == x).float().mean())

        best_acc, best_state, best_it, stale = math.inf, copy.deepcopy(gen.state_dict()), 0, 0
        from rich.progress import Progress

        with Progress(transient=True, disable=not self.progress) as bar:
            task = bar.add_task("obfuscator", total=self.max_iter)
            for it in range(1, self.max_iter + 1):
                # C_i = train(C_0, G_{i-1}(train))
                z_tr, _ = release(w_tr, self.hits)
                x_rep = x_tr.repeat(self.hits)
                rounds.train(self._normalize(torch, z_tr), x_rep, tg)  # C_0 reset inside
                z_va, w_va_rep = release(w_va, self.hits)
                x_va_rep = x_va.repeat(self.hits)
                val_acc = accuracy(z_va, x_va_rep)
                val_dist = float((z_va - w_va_rep).norm(dim=1).mean())
                with torch.no_grad():
                    q = torch.softmax(clf(self._normalize(torch, z_va)), dim=1)
                    mi = float(
                        batch_mutual_information(
                            torch.nn.functional.one_hot(x_va_rep, n_users).float(), q
                        )
                    )
                rec = IterationRecord(it, accuracy(z_tr, x_rep), val_acc, val_dist, mi)
                self.history_.append(rec)
                if self.callback is not None:  # sees G_{i-1}, the generator C_i was trained on
                    self.generator_ = gen
                    self.callback(rec, self)
                if val_acc < best_acc - 1e-4 and val_dist <= float(self.budget):
                    best_acc, best_state, best_it, stale = (
                        val_acc,
                        copy.deepcopy(gen.state_dict()),
                        it,
                        0,
                    )
                else:
                    stale += 1
                bar.update(
                    task,
                    advance=1,
                    description=f"obfuscator acc={val_acc:.3f} d={val_dist:.0f}m",
                )
                if stale >= self.patience:
                    break
                # G_i = generator trained against C_i
                self._train_generator(torch, gen, clf, g_opt, w_tr, x_tr, target, n_users, tg)
        self.cuda_graph_ = rounds.graph is not None
        return self._finish(gen, best_state, best_it, best_acc)

    def _finish(self, gen: Any, state: dict[str, Any], it: int, acc: float) -> Obfuscator:
        gen.load_state_dict(state)
        gen.eval()
        self.generator_ = gen
        self.best_iteration_ = it
        self.val_accuracy_ = acc
        self.n_iter_ = len(self.history_)
        return self

    def _fit_bayes(
        self, gen: Any, train: tuple[Any, Any], val: tuple[Any, Any], n_users: int, target: float
    ) -> Obfuscator:
        from rich.progress import Progress

        with Progress(transient=True, disable=not self.progress) as bar:
            task = bar.add_task("obfuscator", total=self.max_iter)

            def on_round(it: int, tr_acc: float, va_acc: float, va_dist: float, mi: float) -> None:
                rec = IterationRecord(it, tr_acc, va_acc, va_dist, mi)
                self.history_.append(rec)
                if self.callback is not None:
                    self.generator_ = gen
                    self.callback(rec, self)
                bar.update(
                    task, advance=1, description=f"obfuscator acc={va_acc:.3f} d={va_dist:.0f}m"
                )

            state, it, acc = train_against_bayes(
                gen,
                train,
                val,
                n_users,
                target=target,
                budget=float(self.budget),
                alpha=self.alpha,
                beta=self.beta,
                lr=self.generator_lr,
                steps=self.generator_epochs,
                max_iter=self.max_iter,
                patience=self.patience,
                on_round=on_round,
            )
        return self._finish(gen, state, it, acc)

    def _normalize(self, torch: Any, z: Any) -> Any:
        centre = torch.as_tensor(self._centre, dtype=torch.float32, device=z.device)
        return (z - centre) / self._scale

    def _train_generator(
        self,
        torch: Any,
        gen: Any,
        clf: Any,
        opt: Any,
        w: Any,
        x: Any,
        target: float,
        n_users: int,
        tg: Any,
    ) -> None:
        for p in clf.parameters():
            p.requires_grad_(False)
        gen.train()
        for _ in range(self.generator_epochs):
            order = torch.randperm(len(w), generator=tg, device=w.device)
            for lo in range(0, len(w), self.generator_batch_size):
                idx = order[lo : lo + self.generator_batch_size]
                wb, xb = w[idx], x[idx]
                u = torch.rand((len(wb), self.noise_dim), generator=tg, device=wb.device)
                pred, dist, ce = gen.loss_terms(wb, u, xb, lambda z: clf(self._normalize(torch, z)))
                utility = torch.nn.functional.softplus(dist.mean() - target)
                if self.loss == "mutual_information":
                    t = torch.nn.functional.one_hot(xb, n_users).float()
                    privacy = batch_mutual_information(t, pred)
                else:
                    privacy = -ce.mean()
                loss = self.alpha * utility + self.beta * privacy
                opt.zero_grad()
                loss.backward()
                opt.step()
        gen.eval()
        for p in clf.parameters():
            p.requires_grad_(True)

    # ------------------------------------------------------------------ use
    def sample(self, points: ArrayLike, rng: RNGLike = None) -> NDArray[np.float64]:
        """One obfuscated release per row of ``points`` ((n, 2) metres)."""
        check_is_fitted(self, "generator_")
        torch = require_torch()
        pts = check_planar_points(points, "points")
        dev = module_device(self.generator_)
        tg = device_generator(check_rng(rng), dev)
        u = torch.rand((len(pts), self.noise_dim), generator=tg, device=dev)
        with torch.no_grad():
            z = self.generator_(torch.as_tensor(pts, dtype=torch.float32, device=dev), u)
        return np.asarray(z.double().cpu().numpy(), dtype=np.float64)

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | Path) -> None:
        """Write ``path``: a checksummed privwatch model file (JSON parameters, users, history
        and the generator weights; see :mod:`privwatch._serialization`). Loading never executes
        code."""
        check_is_fitted(self, "generator_")
        params = self.get_params()
        params["generator_hidden"] = list(params["generator_hidden"])
        params["classifier_hidden"] = list(params["classifier_hidden"])
        params["rng"] = None
        params["callback"] = None
        state = {
            "params": params,
            "users": self.users_.tolist(),
            "centre": list(map(float, self._centre)),
            "scale": self._scale,
            "best_iteration": self.best_iteration_,
            "val_accuracy": self.val_accuracy_,
            "history": [r.to_dict() for r in self.history_],
        }
        arrays = {
            k: v.detach().cpu().contiguous().numpy()
            for k, v in self.generator_.state_dict().items()
        }
        write_model(path, type(self).__name__, state, arrays)

    @classmethod
    def load(cls, path: str | Path) -> Obfuscator:
        """Load a file written by :meth:`save`; a tampered or truncated file raises
        :class:`~privwatch.exceptions.TamperedFileError`, sizes beyond the memory budget
        :class:`~privwatch.exceptions.MemoryBudgetError`, before anything is built."""
        import torch

        state, arrays = read_model(path, cls.__name__)
        stored = sum(int(a.size) for a in arrays.values())
        with reconstructing(path):
            params = dict(state["params"])
            params["generator_hidden"] = tuple(params["generator_hidden"])
            params["classifier_hidden"] = tuple(params["classifier_hidden"])
            est = cls(**params)
            widths = [*est.generator_hidden, est.noise_dim]
            if not all(isinstance(w, int) and 0 < w <= max(stored, 1) for w in widths):
                raise ValueError(f"generator sizes {widths} do not match {stored} stored weights")
            check_allocation("anchor_grid", (int(est.anchor_grid), int(est.anchor_grid), 2))
            est.users_ = np.asarray(state["users"])
            est._centre = np.asarray(state["centre"], dtype=np.float64)
            est._scale = float(state["scale"])
            if est._centre.shape != (2,) or not (
                np.isfinite(est._centre).all() and math.isfinite(est._scale) and est._scale > 0
            ):
                raise ValueError("centre and scale must be finite (scale positive)")
            est.best_iteration_ = int(state["best_iteration"])
            est.val_accuracy_ = float(state["val_accuracy"])
            est.history_ = [IterationRecord(**r) for r in state["history"]]
            est.n_iter_ = len(est.history_)
            for name, arr in arrays.items():
                check_array(path, arrays, name, ndim=arr.ndim)
            gen = make_generator(
                est.generator,
                tuple(est.generator_hidden),
                noise_dim=est.noise_dim,
                anchor_grid=est.anchor_grid,
            )
            try:
                gen.load_state_dict({k: torch.from_numpy(v) for k, v in arrays.items()})
            except RuntimeError as exc:  # missing, unexpected or mis-shaped weights
                raise ValueError(str(exc)[:200]) from None
        gen.eval()
        est.generator_ = gen
        return est
