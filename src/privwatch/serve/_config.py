"""The settings of one ``privwatch serve`` and the refusal to bind an open address without a
token."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..exceptions import ValidationError

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "TOKEN_ENV", "ServeConfig"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
#: The environment variable read when no ``token`` is given.
TOKEN_ENV = "PRIVWATCH_TOKEN"


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class ServeConfig:
    """One server: where it listens, where it keeps its jobs, what it may read.

    ``command_for(kind, options, source)`` writes the ``privwatch ...`` line that reproduces a
    job and ``translate`` writes library messages in that command's words (the command line
    passes its own; ``None``: the library's Python words). Both must be module-level functions:
    they travel to the worker processes.
    """

    data_dir: Path
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    token: str | None = None
    allow_root: Path | None = None
    max_upload_mb: float = 512.0
    jobs: int = 2
    command_for: Callable[[str, Mapping[str, Any], Mapping[str, Any]], str] | None = None
    translate: Callable[[str], str] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "data_dir", Path(self.data_dir).resolve())
        if self.allow_root is not None:
            set_(self, "allow_root", Path(self.allow_root).resolve())
        if self.token is None and os.environ.get(TOKEN_ENV):
            set_(self, "token", os.environ[TOKEN_ENV])
        if self.token is not None and len(self.token) < 8:
            raise ValidationError("`token` must be at least 8 characters long.")
        if not _loopback(self.host) and not self.token:
            raise ValidationError(
                f"refusing to bind {self.host!r} without a token: any machine that reaches it "
                f"could read the tables. Give `token` (or set {TOKEN_ENV}), or bind 127.0.0.1."
            )
        if self.jobs < 1:
            raise ValidationError(f"`jobs` must be at least 1; got {self.jobs!r}.")
        if not self.max_upload_mb > 0:
            raise ValidationError(f"`max_upload_mb` must be positive; got {self.max_upload_mb!r}.")

    @property
    def max_upload_bytes(self) -> int:
        """The largest upload accepted, in bytes."""
        return int(self.max_upload_mb * 2**20)
