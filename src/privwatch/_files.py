"""Files and folders, for every package: a file's SHA-256, and a folder written all or nothing.

:func:`file_sha256` ties an output to its input (the audit's stamp, ``apply.json``, the check's
stamp); :func:`check_writable` and :func:`staged_files` write a set of files into a folder all or
nothing (the audit's outputs, ``privwatch check``'s, ``apply``'s).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from .exceptions import ValidationError

__all__ = ["STAGING_PREFIX", "check_writable", "file_sha256", "staged_files"]

#: The prefix of the hidden staging folder :func:`staged_files` writes into.
STAGING_PREFIX = ".privwatch-staging-"


def _clean_stale(out: Path) -> None:
    for p in out.glob(STAGING_PREFIX + "*"):
        shutil.rmtree(p, ignore_errors=True)
    for p in out.glob(".privwatch-check-*"):
        p.unlink(missing_ok=True)


def check_writable(out: Path, overwrite: bool = True) -> None:
    """Create ``out`` if needed and make sure files can be written there (before any work).

    Staging folders an interrupted earlier run left behind are removed. With
    ``overwrite=False`` a folder that already holds files is refused.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValidationError(f"`out` must be a writable folder; got the file {str(out)!r}.")
    if out.is_dir():
        _clean_stale(out)
        if not overwrite and any(out.iterdir()):
            raise ValidationError(
                f"`out` must be an empty or new folder; got {str(out)!r}, which holds files: "
                "pass `overwrite`=True to replace the outputs there."
            )
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".privwatch-check-"):
            pass
    except OSError as exc:
        raise ValidationError(
            f"`out` must be a writable folder; got {str(out)!r} ({exc.strerror or exc})."
        ) from None


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while the outputs are moved in (delivered right after)."""
    sigs = {signal.SIGINT, signal.SIGTERM}
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextlib.contextmanager
def staged_files(out: Path, names: tuple[str, ...]) -> Iterator[Path]:
    """A hidden staging folder inside ``out`` to write ``names`` into; when the block ends
    normally they are moved into ``out`` in that order (stale copies removed first), with
    SIGINT and SIGTERM held during the move. Any exception (a failure, KeyboardInterrupt, or a
    SIGTERM the caller turned into one, as the command line does) removes the staging folder,
    so nothing half-written survives. No signal handler is installed here."""
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out))
    try:
        yield staging
        with _signals_held():
            for name in names:
                (out / name).unlink(missing_ok=True)
            for name in names:
                os.replace(staging / name, out / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def file_sha256(path: str | Path, chunk: int = 1 << 20) -> str:
    """SHA-256 of a file's bytes, in hex.

    Raises :class:`~privwatch.exceptions.ValidationError` when ``path`` is not a readable file.
    """
    if not isinstance(path, (str, os.PathLike)) or not str(path) or not Path(path).is_file():
        raise ValidationError(f"`path` must be an existing file; got {path!r}.")
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()
