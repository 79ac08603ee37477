"""Privacy-Preserving Adversarial Networks (Tripathy, Wang, Ishwar): the trainer."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base import ParamsMixin, check_is_fitted
from .._device import DeviceLike, resolve_device
from .._rng import RNGLike, check_rng
from .._validation import (
    check_cost_matrix,
    check_nonnegative,
    check_positive,
    check_positive_int,
)
from ..estimators._torch_utils import adam, require_torch
from ..exceptions import ValidationError
from ._runtime import build_seeded, device_generator, module_device

__all__ = ["PPAN", "gaussian_mi"]

PENALTIES = ("expected", "per_sample", "lagrangian")
SCHEDULES = ("constant", "cosine")


def gaussian_mi(x: ArrayLike, z: ArrayLike) -> float:
    r"""Gaussian-approximation I(X; Z) in nats from samples (PPAN §III-B1):
    :math:`\tfrac12 \log \det\hat\Sigma_X / \det\hat\Sigma_{X|Z}` with
    :math:`\hat\Sigma_{X|Z} = \hat\Sigma_X - \hat\Sigma_{XZ}\hat\Sigma_Z^{+}\hat\Sigma_{XZ}^\top`.
    Exact for jointly Gaussian (X, Z); otherwise it measures only the linear dependence and
    underestimates I(X; Z).

    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((200_000, 1)); z = x + rng.standard_normal((200_000, 1))
    >>> round(gaussian_mi(x, z), 2)  # 0.5 log 2
    0.35
    """
    xa = np.asarray(x, dtype=np.float64)
    za = np.asarray(z, dtype=np.float64)
    xa = xa.reshape(len(xa), -1)
    za = za.reshape(len(za), -1)
    if len(xa) != len(za) or len(xa) < 2:
        raise ValidationError(
            f"`x` and `z` must hold the same number (>= 2) of samples; got {len(xa)} and {len(za)}."
        )
    cov = np.cov(np.hstack([xa, za]), rowvar=False)
    k = xa.shape[1]
    sx, sxz, sz = cov[:k, :k], cov[:k, k:], cov[k:, k:]
    cond = sx - sxz @ np.linalg.pinv(sz) @ sxz.T
    _, logdet_x = np.linalg.slogdet(sx)
    sign, logdet_c = np.linalg.slogdet(cond)
    if sign <= 0:
        return math.inf
    return float(max(0.0, 0.5 * (logdet_x - logdet_c)))


class PPAN(ParamsMixin):
    r"""Adversarially trained release mechanism (Tripathy, Wang, Ishwar eq. 3-6, App. A).

    .. math:: \min_\theta \max_\phi \frac1n \sum_i \mathbb{E}_{z \sim P_\theta(\cdot|w_i)}
              \log Q_\phi(x_i | z) + \text{penalty}

    with penalty ``"expected"``: :math:`\lambda \max(0, \mathbb{E}[d(Y, Z)] - \delta)^2` over the
    batch (the budget form of eq. 3), ``"per_sample"``: :math:`\lambda\,\mathbb{E}\max(0,
    d(y_i, z) - \delta)^2` (eq. 6 and 8), or ``"lagrangian"``: :math:`\lambda\,\mathbb{E}[d]`
    (eq. 3 and 9). Finite-alphabet mechanisms (``mechanism.exact``) use the exact expectation
    over z of eq. (6). Each iteration takes ``adversary_steps`` ascent steps of the adversary (and
    of the optional realism discriminator, eq. 9, weight ``gamma``), then one descent step of the
    mechanism.

    The trainer is built from overridable steps: :meth:`log_q`, :meth:`privacy_and_distortion`,
    :meth:`penalty_term`, :meth:`adversary_step`, :meth:`discriminator_step`,
    :meth:`mechanism_step`, :meth:`evaluate`. ``callbacks`` are called as
    ``callback(epoch, record, self)`` after every epoch; ``history_`` holds one record per epoch
    (mean adversary log-likelihood, distortion, and the held-out metrics when ``validation`` is
    given to :meth:`fit`).

    Parameters
    ----------
    mechanism, adversary : torch modules
        From :mod:`privwatch.adversarial` (``MatrixMechanism``, ``GaussianMechanism``,
        ``SeedNoiseMechanism``; ``CategoricalAdversary``, ``GaussianAdversary``) or your own
        with the same methods (their initial weights are yours; :meth:`finite` seeds them from
        ``rng`` without touching torch's global generator; ``rng`` seeds the batches and the
        release noise through a local ``torch.Generator`` on ``device``).
    distortion : callable
        ``distortion(y, z)`` per sample (``hamming(table)``, ``squared_error``,
        ``pixel_cross_entropy``).
    delta : float
        Distortion budget (ignored by the Lagrangian penalty).
    lam : float
        Penalty weight lambda.
    lr, adversary_lr : float
        Adam step sizes of the mechanism (and discriminator) and of the adversary (None: ``lr``).
    schedule : {"constant", "cosine"}
        ``"cosine"`` anneals every step size to 0 over the epochs (cosine, per epoch), which
        lets the two players settle instead of circling a saddle point at a fixed step size.
    device : {"cpu", "cuda", "cuda:N", "auto"} or torch.device
        Where the modules and the data live during :meth:`fit` (moved there once); results
        come back as NumPy arrays.
    cuda_graph : bool
        On CUDA, run the training epochs of stacked fits (:func:`fit_many`) as one captured
        CUDA graph (replayed once per epoch); falls back to eager execution with a
        :class:`~privwatch.adversarial.GraphFallbackWarning` saying why. Ignored on the CPU.
    """

    def __init__(
        self,
        mechanism: Any,
        adversary: Any,
        distortion: Callable[[Any, Any], Any],
        *,
        delta: float = 0.0,
        lam: float = 500.0,
        penalty: str = "expected",
        epochs: int = 100,
        batch_size: int = 100,
        adversary_steps: int = 1,
        lr: float = 1e-3,
        adversary_lr: float | None = None,
        schedule: str = "constant",
        discriminator: Any = None,
        gamma: float = 0.0,
        callbacks: Sequence[Callable[[int, dict[str, float], PPAN], None]] = (),
        progress: bool = False,
        rng: RNGLike = None,
        device: DeviceLike = "cpu",
        cuda_graph: bool = True,
    ) -> None:
        self.mechanism = mechanism
        self.adversary = adversary
        self.distortion = distortion
        self.delta = delta
        self.lam = lam
        self.penalty = penalty
        self.epochs = epochs
        self.batch_size = batch_size
        self.adversary_steps = adversary_steps
        self.lr = lr
        self.adversary_lr = adversary_lr
        self.schedule = schedule
        self.discriminator = discriminator
        self.gamma = gamma
        self.callbacks = callbacks
        self.progress = progress
        self.rng = rng
        self.device = device
        self.cuda_graph = cuda_graph

    @classmethod
    def finite(
        cls,
        distortion: ArrayLike,
        *,
        n_observed: int,
        n_sensitive: int,
        observed_shape: Sequence[int] | None = None,
        **params: Any,
    ) -> PPAN:
        """PPAN for finite alphabets (§III-A1): a :class:`MatrixMechanism` (|W| x |Z|), a
        matrix :class:`CategoricalAdversary` (|Z| -> |X|) and the distortion table
        ``distortion[y, z]`` (e.g. ``1 - np.eye(m)`` for Pr[Y != Z]). With ``observed_shape``
        (W a tuple of attributes of these sizes, coded row-major, e.g. ``(m, m)`` for
        W = (X, Y) coded x * m + y) the mechanism is a :class:`FactoredMechanism` instead. With
        an integer ``rng`` the initial weights are seeded too, so the whole run is
        reproducible."""
        from ._families import CategoricalAdversary, FactoredMechanism, MatrixMechanism, hamming

        table = check_cost_matrix(distortion, "distortion", rows="n_useful, n_outputs")
        n_z = table.shape[1]
        check_positive_int(n_observed, "n_observed")
        check_positive_int(n_sensitive, "n_sensitive")
        if observed_shape is not None:
            shape = tuple(observed_shape)
            if (
                not shape
                or any(not isinstance(s, (int, np.integer)) or s < 1 for s in shape)
                or math.prod(shape) != n_observed
            ):
                raise ValidationError(
                    f"`observed_shape` must be positive ints whose product is `n_observed` "
                    f"({n_observed}); got {observed_shape!r}."
                )
        rng = params.get("rng")  # reproducible initial weights of the adversary
        seed = None if rng is None else int(check_rng(rng).integers(0, 2**62))
        mechanism, adversary = build_seeded(
            lambda: (
                MatrixMechanism(n_observed, n_z)
                if observed_shape is None
                else FactoredMechanism(observed_shape, n_z),
                CategoricalAdversary(n_z, n_sensitive),
            ),
            seed,
        )
        return cls(mechanism, adversary, hamming(table), **params)

    def channel(self) -> NDArray[np.float64]:
        """The (|W|, |Z|) channel of a finite-alphabet mechanism, rows summing to 1."""
        check_is_fitted(self, "fitted_")
        k = np.asarray(self.mechanism.channel().double().cpu().numpy(), dtype=np.float64)
        return np.asarray(k / k.sum(axis=1, keepdims=True), dtype=np.float64)

    # ------------------------------------------------------------------ pieces
    def _n_z(self) -> int:
        return int(self.mechanism.logits.shape[1])

    def log_q(self, x: Any, z: Any) -> Any:
        """Per-sample log Q(x | z); for finite alphabets ``z`` holds the rows P(. | w) and this is
        the exact expectation over z of eq. (6)."""
        if getattr(self.mechanism, "exact", False):
            torch = require_torch()
            eye = torch.eye(self._n_z(), device=z.device)
            log_post = self.adversary.log_posterior(eye)  # (n_z, n_x)
            return (z * log_post[:, x].T).sum(dim=1)
        return self.adversary.log_q(x, z)

    def privacy_and_distortion(self, w: Any, x: Any, y: Any) -> tuple[Any, Any]:
        """Per-sample E_z log Q(x | z) and d(y, z) for a batch (exact for finite alphabets)."""
        z = self.mechanism.release(w, self._gen)
        return self.log_q(x, z), self.distortion(y, z)

    def penalty_term(self, dist: Any, delta: Any = None) -> Any:
        """The distortion part of the objective for per-sample distortions ``dist`` (last axis;
        leading axes, e.g. the models of a stacked fit, each with its own ``delta``)."""
        torch = require_torch()
        d = torch.as_tensor(
            self.delta if delta is None else delta, dtype=dist.dtype, device=dist.device
        )
        if self.penalty == "expected":
            return self.lam * torch.clamp(dist.mean(dim=-1) - d, min=0.0) ** 2
        if self.penalty == "per_sample":
            return self.lam * (torch.clamp(dist - d.unsqueeze(-1), min=0.0) ** 2).mean(dim=-1)
        return self.lam * dist.mean(dim=-1)

    def _realism(self, z: Any) -> Any:
        """gamma * E[log D(z)] of eq. (9) (0 without a discriminator)."""
        if self.discriminator is None or self.gamma == 0:
            return 0.0
        return self.gamma * self.discriminator(z).clamp(1e-6, 1 - 1e-6).log().mean()

    def adversary_step(self, w: Any, x: Any, y: Any) -> Any:
        """One ascent step of the adversary on E log Q(x | z); returns that mean (a 0-d
        tensor on the device, so that no step waits for the device)."""
        torch = require_torch()
        with torch.no_grad():  # the release is data for the adversary
            z = self.mechanism.release(w, self._gen)
        loss = -self.log_q(x, z).mean()
        self._adv_opt.zero_grad()
        loss.backward()
        self._adv_opt.step()
        return -loss.detach()

    def discriminator_step(self, w: Any, y: Any) -> None:
        """One ascent step of the realism discriminator of eq. (9)."""
        torch = require_torch()
        with torch.no_grad():
            z = self.mechanism.release(w, self._gen)
        d_z = self.discriminator(z).clamp(1e-6, 1 - 1e-6)
        d_y = self.discriminator(y).clamp(1e-6, 1 - 1e-6)
        loss = -(d_z.log().mean() + (1 - d_y).log().mean())
        self._disc_opt.zero_grad()
        loss.backward()
        self._disc_opt.step()

    def mechanism_step(self, w: Any, x: Any, y: Any) -> dict[str, Any]:
        """One descent step of the mechanism on the full objective; returns the batch means
        (0-d tensors on the device)."""
        z = self.mechanism.release(w, self._gen)  # one release for all three terms of eq. (9)
        privacy, dist = self.log_q(x, z), self.distortion(y, z)
        loss = privacy.mean() + self.penalty_term(dist) + self._realism(z)
        self._mech_opt.zero_grad()
        loss.backward()
        self._mech_opt.step()
        return {"log_q": privacy.mean().detach(), "distortion": dist.mean().detach()}

    # ------------------------------------------------------------------ fit
    def _validate(self) -> None:
        check_nonnegative(self.delta, "delta")
        check_positive(self.lam, "lam")
        check_positive(self.lr, "lr")
        if self.penalty not in PENALTIES:
            raise ValidationError(f"`penalty` must be one of {PENALTIES}; got {self.penalty!r}.")
        if self.schedule not in SCHEDULES:
            raise ValidationError(f"`schedule` must be one of {SCHEDULES}; got {self.schedule!r}.")
        for name in ("epochs", "batch_size", "adversary_steps"):
            check_positive_int(getattr(self, name), name)
        if self.gamma and self.discriminator is None:
            raise ValidationError("`gamma` must be 0 unless a `discriminator` is given.")

    def _w_tensor(self, w: ArrayLike) -> Any:
        torch = require_torch()
        exact = getattr(self.mechanism, "exact", False)
        dev = module_device(self.mechanism)
        w_t = torch.as_tensor(np.asarray(w), dtype=torch.int64 if exact else torch.float32)
        w_t = w_t.to(dev)
        return w_t if exact or w_t.ndim > 1 else w_t[:, None]

    def _tensors(self, w: ArrayLike, x: ArrayLike, y: ArrayLike) -> tuple[Any, Any, Any]:
        torch = require_torch()
        arrays = [np.asarray(a) for a in (w, x, y)]
        n = len(arrays[0])
        if n == 0 or any(len(a) != n for a in arrays):
            raise ValidationError(
                f"`w`, `x`, `y` must be non-empty with one row per sample; got lengths "
                f"{[len(a) for a in arrays]}."
            )
        x_int = hasattr(self.adversary, "log_posterior")
        dev = module_device(self.mechanism)
        x_t = torch.as_tensor(arrays[1], dtype=torch.int64 if x_int else torch.float32).to(dev)
        if not x_int and x_t.ndim == 1:
            x_t = x_t[:, None]
        y_int = np.issubdtype(arrays[2].dtype, np.integer) and getattr(
            self.mechanism, "exact", False
        )
        y_t = torch.as_tensor(arrays[2], dtype=torch.int64 if y_int else torch.float32).to(dev)
        if not y_int and y_t.ndim == 1:
            y_t = y_t[:, None]
        return self._w_tensor(arrays[0]), x_t, y_t

    def fit(
        self,
        w: ArrayLike,
        x: ArrayLike,
        y: ArrayLike,
        *,
        validation: tuple[ArrayLike, ArrayLike, ArrayLike] | None = None,
    ) -> PPAN:
        """Train on samples of the observation ``w``, sensitive ``x`` and useful ``y``.

        Finite alphabets: integer codes. Continuous data: (n, dim) arrays (1-d arrays are
        treated as one column).
        """
        self._validate()
        torch = require_torch()
        dev = self._to_device()
        self._gen = device_generator(check_rng(self.rng), dev)
        w_t, x_t, y_t = self._tensors(w, x, y)
        val = self._tensors(*validation) if validation is not None else None
        self._mech_opt = adam(self.mechanism.parameters(), self.lr)
        self._adv_opt = adam(self.adversary.parameters(), self.adversary_lr or self.lr)
        if self.discriminator is not None:
            self._disc_opt = adam(self.discriminator.parameters(), self.lr)
        optimisers = [self._mech_opt, self._adv_opt] + (
            [self._disc_opt] if self.discriminator is not None else []
        )
        schedulers = (
            [torch.optim.lr_scheduler.CosineAnnealingLR(o, self.epochs) for o in optimisers]
            if self.schedule == "cosine"
            else []
        )
        self.history_: list[dict[str, float]] = []
        n = len(w_t)
        from rich.progress import Progress

        with Progress(transient=True, disable=not self.progress) as bar:
            task = bar.add_task("PPAN", total=self.epochs)
            for epoch in range(self.epochs):
                order = torch.randperm(n, generator=self._gen, device=dev)
                sums = {
                    "log_q": torch.zeros((), device=dev),
                    "distortion": torch.zeros((), device=dev),
                }
                for lo in range(0, n, self.batch_size):
                    idx = order[lo : lo + self.batch_size]
                    wb, xb, yb = w_t[idx], x_t[idx], y_t[idx]
                    for _ in range(self.adversary_steps):
                        self.adversary_step(wb, xb, yb)
                        if self.discriminator is not None and self.gamma:
                            self.discriminator_step(wb, yb)
                    step = self.mechanism_step(wb, xb, yb)
                    for k in sums:
                        sums[k] += step[k] * len(idx)
                record = {"epoch": float(epoch), **{k: float(v) / n for k, v in sums.items()}}
                if val is not None:
                    record.update({f"val_{k}": v for k, v in self._evaluate_tensors(*val).items()})
                self.history_.append(record)
                for cb in self.callbacks:
                    cb(epoch, record, self)
                for sched in schedulers:
                    sched.step()
                bar.update(task, advance=1, description=f"PPAN d={record['distortion']:.3f}")
        self.mechanism.eval()
        self.adversary.eval()
        self.cuda_graph_ = False  # a single fit runs eagerly; fit_many's stacked fits graph
        self.fitted_ = True
        return self

    def _to_device(self) -> Any:
        """Resolve ``device`` and move the modules (and their distortion table) there once."""
        dev = resolve_device(self.device)
        for module in (self.mechanism, self.adversary, self.discriminator):
            if module is not None:
                module.to(dev)
        return dev

    # ------------------------------------------------------------------ use
    def _evaluate_tensors(self, w: Any, x: Any, y: Any) -> dict[str, float]:
        torch = require_torch()
        with torch.no_grad():
            privacy, dist = self.privacy_and_distortion(w, x, y)
        return {"log_q": float(privacy.mean()), "distortion": float(dist.mean())}

    def evaluate(self, w: ArrayLike, x: ArrayLike, y: ArrayLike) -> dict[str, float]:
        """Held-out ``log_q`` (mean adversary log-likelihood: plus H(X) it is the adversary's
        variational lower bound on I(X; Z), eq. 2) and ``distortion``."""
        check_is_fitted(self, "fitted_")
        return self._evaluate_tensors(*self._tensors(w, x, y))

    def release(self, w: ArrayLike, rng: RNGLike = None) -> NDArray[np.float64]:
        """Releases for ``w``: samples z (continuous) or sampled codes (finite alphabet)."""
        check_is_fitted(self, "fitted_")
        torch = require_torch()
        w_t = self._w_tensor(w)
        gen = device_generator(check_rng(rng), w_t.device)
        with torch.no_grad():
            if getattr(self.mechanism, "exact", False):
                probs = self.mechanism.release(w_t)
                codes = torch.multinomial(probs, 1, generator=gen).squeeze(1)
                return np.asarray(codes.cpu().numpy())
            return np.asarray(self.mechanism.release(w_t, gen).double().cpu().numpy())
