"""Privacy-Preserving Adversarial Networks (Tripathy, Wang, Ishwar): the estimator."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator

from .._base import check_is_fitted
from .._device import DeviceLike, resolve_device
from .._rng import RNGLike, check_rng
from .._torch import generator_from, torch
from .._trainer import History
from .._validation import check_cost_matrix, check_nonnegative, check_positive, check_positive_int
from ..exceptions import ValidationError
from ..mechanisms import Mechanism, Privacy
from ._families import hamming, over_components
from ._ppan_networks import default_networks, finite_networks, observed_tensor, sample_tensors
from ._ppan_trainer import PPANTrainer

__all__ = ["PPAN"]

PENALTIES = ("expected", "per_sample", "lagrangian")
SCHEDULES = ("constant", "cosine")
Samples = tuple[ArrayLike, ...]


class PPAN(BaseEstimator, Mechanism):  # type: ignore[misc]
    r"""Adversarially trained release mechanism (Tripathy, Wang, Ishwar eq. 3-6, App. A).

    .. math:: \min_\theta \max_\phi \frac1n \sum_i \mathbb{E}_{r \sim P_\theta(\cdot|o_i)}
              \log Q_\phi(s_i | r) + \text{penalty}

    over samples (observed o_i, sensitive s_i, useful u_i), with penalty ``"expected"``:
    :math:`\lambda \max(0, \mathbb{E}[d(U, R)] - B)^2` over the batch (the budget form of
    eq. 3), ``"per_sample"``: :math:`\lambda\,\mathbb{E}\max(0, d(u_i, r) - B)^2` (§II-B
    after eq. 4; the finite loss of §III-A and eq. 8 of §III-B, used for the paper's Figs.
    3-6; it pushes every sample's distortion under B, so the mean distortion ends well under a
    large budget: 0.49 at B = 1 in Fig. 5 and at most 2.2 of B = 4.5 in Fig. 6 with the paper's
    settings, gallery ``tripathy2019_gaussian_paper`` / ``_vector_paper``), or ``"lagrangian"``:
    :math:`\lambda\,\mathbb{E}[d]` (eq. 3 and 9). Finite-alphabet
    mechanisms (``mechanism.exact``) use the exact expectation over the release of eq. (6).
    Each mini-batch takes ``adversary_steps`` ascent steps of the adversary (and of the optional
    realism discriminator, eq. 9, weight ``gamma``), then one descent step of the mechanism.

    Notation (Tripathy, Wang, Ishwar): observed = W, sensitive = X, useful = Y, release = Z,
    the adversary's posterior Q(x | z), the distortion budget B = delta. Finite alphabets are
    integer codes; a joint pmf of the three is ``p[s, x, u]`` (sensitive, observed, useful), as
    in :func:`privwatch.mechanisms.optimal_privacy_mechanism`.

    Training runs through the one trainer of privwatch (:mod:`privwatch._trainer`) with the
    steps :meth:`adversary_step`, :meth:`discriminator_step` and :meth:`mechanism_step`
    (override them to change the game) and :meth:`evaluate` as its validation step.
    ``callbacks`` are :class:`privwatch._trainer.Callback` objects or functions
    ``fn(record, ppan)`` called after every epoch; ``history_`` holds one record per epoch
    (``log_likelihood``: the adversary's mean log-likelihood of the sensitive value,
    ``distortion``, and ``val_...`` when ``validation`` is given to :meth:`fit`).

    Parameters
    ----------
    mechanism, adversary : torch modules or None
        From :mod:`privwatch.adversarial` (``MatrixMechanism``, ``GaussianMechanism``,
        ``SeedNoiseMechanism``; ``CategoricalAdversary``, ``GaussianAdversary``) or your own
        with the same methods (their initial weights are yours; :meth:`finite` seeds them from
        ``rng`` without touching torch's global generator; ``rng`` seeds the batches and the
        release noise through a local ``torch.Generator`` on ``device``). :meth:`fit` trains
        deep copies (``mechanism_``, ``adversary_``) and leaves these as they were given.
        None (the default): built by :meth:`fit` from the data's shape, initial weights seeded
        from ``rng`` (:func:`~privwatch.adversarial._ppan_networks.default_networks`): a
        ``GaussianMechanism`` from the observed columns to the useful ones, and a
        ``CategoricalAdversary`` for integer sensitive codes 0..k-1 or a ``GaussianAdversary``
        for real ones, with hidden layers (20, 20). Finite alphabets: :meth:`finite`.
    distortion : callable or None
        ``distortion(useful, release)`` per sample (``hamming(table)``, ``squared_error``,
        ``pixel_cross_entropy``), or a learned one: a torch module such as
        :class:`UsefulPosterior` (-log Q(useful | release), the mutual-information utility of
        App. D), trained (a copy, ``distortion_``) with the mechanism's steps. None (the
        default): ``squared_error``.
    budget : float
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

    Attributes
    ----------
    mechanism_, adversary_, discriminator_ : torch modules
        The trained copies of ``mechanism``, ``adversary`` and ``discriminator`` (None without
        one), on ``device``.
    distortion_ : callable
        ``distortion``, or the trained copy of it when it is a torch module.
    history_ : privwatch._trainer.History
        One record per epoch.
    """

    def __init__(
        self,
        mechanism: Any = None,
        adversary: Any = None,
        distortion: Callable[[Any, Any], Any] | None = None,
        *,
        budget: float = 0.0,
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
        callbacks: Sequence[Any] = (),
        progress: bool = False,
        rng: RNGLike = None,
        device: DeviceLike = "cpu",
        cuda_graph: bool = True,
    ) -> None:
        self.mechanism = mechanism
        self.adversary = adversary
        self.distortion = distortion
        self.budget = budget
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
        """PPAN for finite alphabets (§III-A1): a :class:`MatrixMechanism`
        (n_observed x n_outputs), a matrix :class:`CategoricalAdversary` (n_outputs ->
        n_sensitive) and the distortion table ``distortion[useful, release]`` (e.g.
        ``1 - np.eye(m)`` for Pr[useful != release]). With ``observed_shape`` (the observation a
        tuple of attributes of these sizes, coded row-major, e.g. ``(m, m)`` for observed =
        (sensitive, useful) coded s * m + u) the mechanism is a :class:`FactoredMechanism`
        instead. With an integer ``rng`` the initial weights are seeded too, so the whole run
        is reproducible."""
        table = check_cost_matrix(distortion, "distortion", rows="n_useful, n_outputs")
        mechanism, adversary = finite_networks(
            n_observed, n_sensitive, table.shape[1], observed_shape, params.get("rng")
        )
        return cls(mechanism, adversary, hamming(table), **params)

    @property
    def privacy(self) -> Privacy:
        """What the fitted mechanism was measured at (not a guarantee): the adversary's mean
        log-likelihood of the sensitive value in the last epoch (``guess_log_likelihood``, nats;
        held-out when ``validation`` was given to :meth:`fit`). Plus H(sensitive) it is the
        adversary's variational lower bound on I(sensitive; release)."""
        check_is_fitted(self, "fitted_")
        last = self.history_[-1] if len(self.history_) else {}
        value = last.get("val_log_likelihood", last.get("log_likelihood", math.nan))
        return Privacy("guess_log_likelihood", float(value), False)

    def channel(self) -> NDArray[np.float64]:
        """The (n_observed, n_outputs) channel of a finite-alphabet mechanism, rows summing
        to 1."""
        check_is_fitted(self, "fitted_")
        k = np.asarray(self.mechanism_.channel().double().cpu().numpy(), dtype=np.float64)
        return np.asarray(k / k.sum(axis=1, keepdims=True), dtype=np.float64)

    # ------------------------------------------------------------------ the game's steps
    def log_likelihood(self, sensitive: Any, release: Any) -> Any:
        """Per-sample log-posterior of the adversary at the true ``sensitive`` value; for finite
        alphabets ``release`` holds the rows P(. | observed) and this is the exact expectation
        over the release of eq. (6)."""
        if getattr(self.mechanism_, "exact", False):
            n_out = int(self.mechanism_.logits.shape[1])
            log_post = self.adversary_.log_posterior(torch.eye(n_out, device=release.device))
            return (release * log_post[:, sensitive].T).sum(dim=1)
        return over_components(self.adversary_.log_likelihood, sensitive, release)

    def training_release(self, observed: Any) -> Any:
        """What the game's steps evaluate: the release (a sample, or the rows of a finite
        mechanism), or every component with its weight for a mixture (eq. 29)."""
        if hasattr(self.mechanism_, "components"):
            return self.mechanism_.components(observed, self._generator)
        return self.mechanism_.release(observed, self._generator)

    def privacy_and_distortion(self, observed: Any, sensitive: Any, useful: Any) -> tuple[Any, Any]:
        """Per-sample expected log-likelihood of the adversary and distortion of a batch."""
        release = self.training_release(observed)
        dist = over_components(self.distortion_, useful, release)
        return self.log_likelihood(sensitive, release), dist

    def penalty_term(self, distortion: Any, budget: Any = None, lam: Any = None) -> Any:
        """The distortion part of the objective for per-sample ``distortion`` (last axis;
        leading axes, e.g. the models of a stacked fit, each with its own ``budget`` and
        ``lam``; None: this model's)."""
        d = torch.as_tensor(
            self.budget if budget is None else budget,
            dtype=distortion.dtype,
            device=distortion.device,
        )
        weight = self.lam if lam is None else lam
        if self.penalty == "expected":
            return weight * torch.clamp(distortion.mean(dim=-1) - d, min=0.0) ** 2
        if self.penalty == "per_sample":
            excess = torch.clamp(distortion - d.unsqueeze(-1), min=0.0)
            return weight * (excess**2).mean(dim=-1)
        return weight * distortion.mean(dim=-1)

    def _realism(self, release: Any) -> Any:
        """gamma * E[log D(release)] of eq. (9) (0 without a discriminator)."""
        if self.discriminator_ is None or self.gamma == 0:
            return 0.0
        return self.gamma * self.discriminator_(release).clamp(1e-6, 1 - 1e-6).log().mean()

    def adversary_step(self, observed: Any, sensitive: Any, useful: Any) -> Any:
        """One ascent step of the adversary on its mean log-likelihood; returns that mean (a 0-d
        tensor on the device, so that no step waits for the device)."""
        with torch.no_grad():  # the release is data for the adversary
            release = self.training_release(observed)
        loss = -self.log_likelihood(sensitive, release).mean()
        self._adv_opt.zero_grad()
        loss.backward()
        self._adv_opt.step()
        return -loss.detach()

    def discriminator_step(self, observed: Any, useful: Any) -> None:
        """One ascent step of the realism discriminator of eq. (9)."""
        with torch.no_grad():
            release = self.mechanism_.release(observed, self._generator)
        d_release = self.discriminator_(release).clamp(1e-6, 1 - 1e-6)
        d_useful = self.discriminator_(useful).clamp(1e-6, 1 - 1e-6)
        loss = -(d_release.log().mean() + (1 - d_useful).log().mean())
        self._disc_opt.zero_grad()
        loss.backward()
        self._disc_opt.step()

    def mechanism_step(self, observed: Any, sensitive: Any, useful: Any) -> dict[str, Any]:
        """One descent step of the mechanism on the full objective; returns the batch means
        (0-d tensors on the device)."""
        release = self.training_release(observed)  # one for all of eq. (9)
        privacy = self.log_likelihood(sensitive, release)
        dist = over_components(self.distortion_, useful, release)
        loss = privacy.mean() + self.penalty_term(dist) + self._realism(release)
        self._mech_opt.zero_grad()
        loss.backward()
        self._mech_opt.step()
        return {"log_likelihood": privacy.mean().detach(), "distortion": dist.mean().detach()}

    # ------------------------------------------------------------------ fit
    def _validate(self) -> None:
        check_nonnegative(self.budget, "budget")
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
        if self.gamma and hasattr(self.mechanism, "components"):
            raise ValidationError("`gamma` must be 0 with a mixture mechanism (App. F).")

    def _observed_tensor(self, observed: ArrayLike) -> Any:
        return observed_tensor(self.mechanism_, observed)

    def _tensors(
        self, observed: ArrayLike, sensitive: ArrayLike, useful: ArrayLike | None = None
    ) -> tuple[Any, Any, Any]:
        """(observed, sensitive, useful) tensors on the mechanism's device; ``useful`` None is
        the observation itself (the useful-data model)."""
        return sample_tensors(self.mechanism_, self.adversary_, observed, sensitive, useful)

    def fit(
        self,
        observed: ArrayLike,
        sensitive: ArrayLike,
        useful: ArrayLike | None = None,
        *,
        validation: Samples | None = None,
    ) -> PPAN:
        """Train on samples of the ``observed`` data, the ``sensitive`` attribute and the
        ``useful`` data (None: the observation itself, the useful-data model).

        Finite alphabets: integer codes. Continuous data: (n, dim) arrays (1-d arrays are
        treated as one column). ``validation`` is a held-out ``(observed, sensitive)`` or
        ``(observed, sensitive, useful)`` tuple measured after every epoch.
        """
        self._validate()
        self._start_fit(observed, sensitive, useful)
        data = self._tensors(observed, sensitive, useful)
        val = self._tensors(*validation) if validation is not None else None
        trainer = PPANTrainer(self, data, val)
        self.history_: History = trainer.run()
        self.mechanism_.eval()
        self.adversary_.eval()
        self.cuda_graph_ = False  # a single fit runs eagerly; fit_many's stacked fits graph
        self.fitted_ = True
        return self

    def _start_fit(self, observed: ArrayLike, sensitive: ArrayLike, useful: Any) -> None:
        """Resolve ``device``, build the missing networks from the data (their seed is the
        first draw from ``rng``), copy the modules there (:meth:`copy_modules`) and seed the
        local generator."""
        dev = resolve_device(self.device)
        g = check_rng(self.rng)
        defaults = None
        if self.mechanism is None or self.adversary is None or self.distortion is None:
            seed = int(g.integers(0, 2**62))
            defaults = default_networks(observed, sensitive, useful, seed)
        self.copy_modules(dev, defaults)
        self._generator = generator_from(g, dev)

    def copy_modules(self, device: Any, defaults: Mapping[str, Any] | None = None) -> None:
        """Deep copies of the constructor's modules on ``device`` (``defaults[name]`` where the
        constructor's is None) become ``mechanism_``, ``adversary_``, ``discriminator_`` and
        (a learned distortion module) ``distortion_``, the modules that training changes; the
        given ones stay untouched (scikit-learn's rule), so ``clone(fitted).fit`` starts
        afresh."""
        built = defaults or {}

        def chosen(name: str) -> Any:
            given = getattr(self, name)
            return built.get(name) if given is None else given

        def fresh(module: Any) -> Any:
            return None if module is None else copy.deepcopy(module).to(device)

        self.mechanism_ = fresh(chosen("mechanism"))
        self.adversary_ = fresh(chosen("adversary"))
        self.discriminator_ = fresh(chosen("discriminator"))
        distortion = chosen("distortion")
        learned = isinstance(distortion, torch.nn.Module)  # e.g. UsefulPosterior (App. D)
        self.distortion_ = fresh(distortion) if learned else distortion

    # ------------------------------------------------------------------ use
    def evaluate_tensors(self, observed: Any, sensitive: Any, useful: Any) -> dict[str, float]:
        """:meth:`evaluate` on tensors already on the device (the trainer's validation step)."""
        with torch.no_grad():
            privacy, dist = self.privacy_and_distortion(observed, sensitive, useful)
        return {"log_likelihood": float(privacy.mean()), "distortion": float(dist.mean())}

    def evaluate(
        self, observed: ArrayLike, sensitive: ArrayLike, useful: ArrayLike | None = None
    ) -> dict[str, float]:
        """Held-out ``log_likelihood`` (the adversary's mean log-likelihood of the sensitive
        value: plus H(sensitive) it is the adversary's variational lower bound on
        I(sensitive; release), eq. 2) and ``distortion``."""
        check_is_fitted(self, "fitted_")
        return self.evaluate_tensors(*self._tensors(observed, sensitive, useful))

    def release(self, observed: ArrayLike, rng: RNGLike = None) -> NDArray[np.float64]:
        """Releases for ``observed``: samples (continuous) or sampled codes (finite alphabet)."""
        check_is_fitted(self, "fitted_")
        obs = self._observed_tensor(observed)
        gen = generator_from(check_rng(rng), obs.device)
        with torch.no_grad():
            if getattr(self.mechanism_, "exact", False):
                probs = self.mechanism_.release(obs)
                codes = torch.multinomial(probs, 1, generator=gen).squeeze(1)
                return np.asarray(codes.cpu().numpy())
            return np.asarray(self.mechanism_.release(obs, gen).double().cpu().numpy())
