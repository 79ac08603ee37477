"""Algorithm 1 of Romanelli, Chatzikokolakis, Palamidessi in the one trainer of privwatch.

One trainer epoch is one iteration i of Algorithm 1 seen from its check: the generator is first
trained against the previous classifier C_{i-1} (from the second epoch on), then the classifier
C_i is trained from C_0 on the generator's releases of the training points (train step), then
the releases of the held-out points are measured against C_i (validation step). The record of
epoch i therefore measures the generator C_i was trained on, and an early stop never trains a
generator that no classifier will check.

Notation: observed = W (true location), sensitive = X (user), guess = Y (the classifier's
prediction), release = Z.
"""

from __future__ import annotations

from typing import Any

from .._torch import adam, torch
from .._trainer import EarlyStopping, ProgressBar, Trainer
from ._clf_rounds import ClassifierRounds
from ._mi import batch_mutual_information

__all__ = ["ClassifierGame", "GeneratorEpochs", "obfuscator_callbacks"]

F = torch.nn.functional


def obfuscator_callbacks(obfuscator: Any, generator: Any, min_delta: float) -> list[Any]:
    """The user's callbacks, then early stopping (keep the generator whose held-out releases
    the attacker guessed worst, within the budget), then the progress bar."""
    budget = float(obfuscator.budget_)
    stopping = EarlyStopping(
        generator,
        "val_accuracy",
        patience=obfuscator.patience,
        min_delta=min_delta,
        accept=lambda record: record["val_distortion"] <= budget,
    )
    out: list[Any] = [*obfuscator.callbacks, stopping]
    if obfuscator.progress:
        out.append(
            ProgressBar(
                "obfuscator",
                obfuscator.max_iter,
                lambda r: f"obfuscator acc={r['val_accuracy']:.3f} d={r['val_distortion']:.0f}m",
            )
        )
    return out


class GeneratorEpochs(Trainer):
    """``generator_epochs`` passes over the training points in mini-batches, each a descent step
    on :math:`\\alpha\\,\\mathrm{softplus}(\\mathbb{E}[d] - L') + \\beta\\,I(X; Y)` (or minus the
    cross entropy) against the frozen classifier ``classify``."""

    def __init__(self, game: ClassifierGame) -> None:
        obf = game.model
        super().__init__(
            obf,
            epochs=obf.generator_epochs,
            n_samples=len(game.train[0]),
            batch_size=obf.generator_batch_size,
            generator=game.generator,
        )
        self.game = game

    def train_step(self, batch: Any) -> dict[str, Any]:
        game, obf = self.game, self.model
        observed, sensitive = game.train[0][batch], game.train[1][batch]
        noise = torch.rand(
            (len(observed), obf.noise_dim), generator=self.generator, device=observed.device
        )
        guess, dist, ce = game.gen.loss_terms(observed, noise, sensitive, game.classify)
        utility = F.softplus(dist.mean() - game.target)
        if obf.loss == "mutual_information":
            privacy = batch_mutual_information(F.one_hot(sensitive, game.n_users).float(), guess)
        else:
            privacy = -ce.mean()
        loss = obf.alpha * utility + obf.beta * privacy
        game.g_opt.zero_grad()
        loss.backward()
        game.g_opt.step()
        return {}


class ClassifierGame(Trainer):
    """Algorithm 1: per epoch, the generator's steps (:class:`GeneratorEpochs`, from the second
    epoch on), the classifier round (:class:`ClassifierRounds`) and the held-out check."""

    def __init__(
        self,
        obfuscator: Any,
        gen: Any,
        clf: Any,
        train: tuple[Any, Any],
        validation: tuple[Any, Any],
        *,
        n_users: int,
        target: float,
        generator: Any,
        stopping: list[Any],
    ) -> None:
        super().__init__(
            obfuscator, epochs=obfuscator.max_iter, callbacks=stopping, generator=generator
        )
        self.gen, self.clf, self.train, self.validation = gen, clf, train, validation
        self.n_users, self.target = n_users, target
        self.rounds = ClassifierRounds(
            clf,
            {k: v.clone() for k, v in clf.state_dict().items()},
            lr=obfuscator.classifier_lr,
            epochs=obfuscator.classifier_epochs,
            batch_size=obfuscator.classifier_batch_size,
            graph=bool(obfuscator.cuda_graph),
        )
        self.g_opt = adam(gen.parameters(), obfuscator.generator_lr)

    def classify(self, release: Any) -> Any:
        """The classifier's logits for (un-normalised) releases."""
        return self.clf(self.model._normalize(release))

    def _release(self, observed: Any) -> tuple[Any, Any]:
        """``hits`` releases of every point (and the points repeated alike)."""
        repeated = observed.repeat(self.model.hits, 1)
        shape = (len(repeated), self.model.noise_dim)
        noise = torch.rand(shape, generator=self.generator, device=repeated.device)
        with torch.no_grad():
            return self.gen(repeated, noise), repeated

    def _accuracy(self, release: Any, sensitive: Any) -> float:
        with torch.no_grad():
            return float((self.classify(release).argmax(dim=1) == sensitive).float().mean())

    def _train_generator(self) -> None:
        for p in self.clf.parameters():
            p.requires_grad_(False)
        self.gen.train()
        GeneratorEpochs(self).run()
        self.gen.eval()
        for p in self.clf.parameters():
            p.requires_grad_(True)

    def train_epoch(self, epoch: int) -> dict[str, float]:
        if epoch > 0:  # G_{i-1} = the generator trained against C_{i-1}
            self._train_generator()
        release, _ = self._release(self.train[0])  # C_i = train(C_0, G_{i-1}(train))
        sensitive = self.train[1].repeat(self.model.hits)
        self.rounds.train(self.model._normalize(release), sensitive, self.generator)
        return {"train_accuracy": self._accuracy(release, sensitive)}

    def validation_step(self, epoch: int) -> dict[str, float]:
        release, observed = self._release(self.validation[0])
        sensitive = self.validation[1].repeat(self.model.hits)
        accuracy = self._accuracy(release, sensitive)
        with torch.no_grad():
            guess = torch.softmax(self.classify(release), dim=1)
            onehot = F.one_hot(sensitive, self.n_users).float()
            mi = float(batch_mutual_information(onehot, guess))
            dist = float((release - observed).norm(dim=1).mean())
        return {"val_accuracy": accuracy, "val_distortion": dist, "val_mutual_information": mi}
