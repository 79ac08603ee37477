"""One place that turns a user's ``device=`` argument into a :class:`torch.device`.

Every torch-backed estimator and mechanism takes ``device`` (``"cpu"``, ``"cuda"``, ``"cuda:1"``,
``"auto"`` or a :class:`torch.device`) and resolves it here, so the error for a missing GPU reads
the same everywhere.
"""

from __future__ import annotations

from typing import Any

from .exceptions import ValidationError

__all__ = ["DeviceLike", "resolve_device"]

#: What a ``device=`` argument accepts.
DeviceLike = Any


def resolve_device(device: DeviceLike = "cpu", name: str = "device") -> Any:
    """Resolve ``device`` to a :class:`torch.device`.

    ``"auto"`` picks the first CUDA device when one is present and the CPU otherwise. Asking for
    a CUDA device that is absent raises :class:`~privwatch.ValidationError` naming the argument.

    Examples
    --------
    >>> resolve_device("cpu")
    device(type='cpu')
    """
    import torch

    if isinstance(device, torch.device):
        text = str(device)
    elif isinstance(device, str):
        text = device.strip().lower()
    else:
        raise ValidationError(
            f"`{name}` must be 'cpu', 'cuda', 'cuda:N', 'auto' or a torch.device; got {device!r}."
        )
    if text == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(text)
    except (RuntimeError, ValueError) as exc:
        raise ValidationError(
            f"`{name}` must be 'cpu', 'cuda', 'cuda:N', 'auto' or a torch.device; got {device!r}."
        ) from exc
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValidationError(
                f"`{name}` asks for {text!r} but this machine has no CUDA device "
                "(use device='cpu' or 'auto')."
            )
        index = 0 if dev.index is None else dev.index
        if index >= torch.cuda.device_count():
            raise ValidationError(
                f"`{name}` asks for {text!r} but only {torch.cuda.device_count()} CUDA "
                "device(s) are present."
            )
    elif dev.type != "cpu":
        raise ValidationError(f"`{name}` must be a CPU or CUDA device; got {device!r}.")
    return dev
