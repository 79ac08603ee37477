"""What a worker process does with one job: the audit, check or apply the command line would
run, through the library's public functions, its files written into ``jobs/ID/out`` by
:func:`privwatch.report.write_audit` (staged, moved in whole), then ``outcome.json``.

Runs in its own process (:mod:`._jobs` starts it); nothing here runs on the server's event
loop. Errors go to ``error.json`` (read by the job's owner through the API), never to the log.

A worker dies with its server: on Linux the kernel sends it SIGKILL when its parent (the fork
server, which exits when the server does) dies (``prctl(PR_SET_PDEATHSIG)``), and on any POSIX
system a daemon thread kills it within :data:`WATCH_S` once its parent changes or the server's
process is gone (a server killed with SIGKILL runs no shutdown).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..audit import AuditSpec, Bundled, Caller, method_for, plan, run
from ..check import check
from ..release.generalisation import apply_saved_mechanism
from ..report import write_audit
from ._store import read_json, write_json

__all__ = ["MECHANISM_FILE", "WATCH_S", "run_job"]

#: The saved mechanism of an audit whose method has one (records in memory).
MECHANISM_FILE = "mechanism.json"
#: How often a worker looks whether its server still runs (seconds).
WATCH_S = 0.25
#: ``prctl``'s option that sends the process a signal when its parent dies (Linux).
PR_SET_PDEATHSIG = 1


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not reaped, counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def die_with(server_pid: int | None) -> None:
    """Make this process exit (SIGKILL) when its parent or the server ``server_pid`` dies."""
    if sys.platform.startswith("linux"):
        # no libc to ask: the thread below still watches
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
    parent = os.getppid()

    def watch() -> None:
        while True:
            gone = server_pid is not None and not _alive(server_pid)
            if gone or os.getppid() != parent:
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(WATCH_S)

    threading.Thread(target=watch, name="privwatch-server-watch", daemon=True).start()


class _Progress:
    """``step(message)``: the next step, written to ``progress.json`` for the server."""

    def __init__(self, path: Path) -> None:
        self.path, self.done, self.total = path, 0, 1

    def __call__(self, message: str) -> None:
        write_json(self.path, {"step": self.done, "total": self.total, "message": message})
        self.done += 1


def _named(path: str, name: str | None, folder: Path) -> str:
    """``path`` (an upload under its generated name) seen under the name the user gave it: a
    link ``folder/NAME``, so that the stamp of ``leakage.json`` names the file as the command
    line that reproduces the job does. ``path`` itself where no link can be made."""
    if not name or Path(name).name != name or name in (".", ".."):
        return path
    link = folder / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
        link.unlink(missing_ok=True)
        link.symlink_to(path)
    except OSError:
        return path
    return str(link)


def _source(src: dict[str, Any], home: Path) -> Any:
    if src.get("dataset"):
        return Bundled(src["dataset"])
    return _named(src["path"], src.get("name"), home / "in" / "data")


def _caller(result: Any, command: str | None, translate: Callable[[str], str] | None) -> None:
    if command and translate is not None:
        result.caller = Caller(command, translate, "command line")


def _audit(job: dict[str, Any], out: Path, step: _Progress, translate: Any) -> Any:
    spec = AuditSpec.from_options(job["options"])
    source = _source(job["source"], out.parent)
    route = plan(spec, source)
    step.total = route.steps + 1
    result = run(spec, source, out=out, progress=step)
    _caller(result, job.get("command"), translate)
    step("writing the outputs")
    write_audit(result, out, overwrite=True, records=spec.records)
    if (
        route.name == "memory"
        and method_for(spec, route.name).mechanism_refusal(spec, route.name) is None
    ):
        result.mechanism().save(out / MECHANISM_FILE)
    return result


def _check(job: dict[str, Any], out: Path, step: _Progress, translate: Any) -> Any:
    src, options = job["source"], dict(job["options"])
    extra = {k: options.pop(k) for k in ("key", "synthetic") if k in options}
    step.total = 2
    step("checking the release")
    files = {
        role: _named(src[role], src.get(f"{role}_name"), out.parent / "in" / role)
        for role in ("original", "release", "control", "mechanism")
        if src.get(role)
    }
    result = check(
        files["original"],
        files["release"],
        AuditSpec.from_options(options),
        control=files.get("control"),
        mechanism=files.get("mechanism"),
        **extra,
    )
    _caller(result, job.get("command"), translate)
    step("writing the outputs")
    write_audit(result, out, overwrite=True)
    return result


def _apply(job: dict[str, Any], out: Path, step: _Progress, translate: Any) -> Any:
    src = job["source"]
    step.total = 1
    step("releasing the records")
    return apply_saved_mechanism(
        src["mechanism"], src["data"], out, overwrite=True, seed=job["options"].get("seed")
    )


JOB_KINDS = {"audit": _audit, "check": _check, "apply": _apply}


def run_job(
    folder: str, translate: Callable[[str], str] | None = None, server_pid: int | None = None
) -> None:
    """The worker process's entry: run the job of ``folder``; ``outcome.json`` when it is
    done, ``error.json`` (and exit status 1) when it fails. The worker exits when the server
    ``server_pid`` (or its parent) dies (:func:`die_with`)."""
    die_with(server_pid)
    home = Path(folder)
    job = read_json(home / "job.json")
    step = _Progress(home / "progress.json")
    try:
        with warnings.catch_warnings():  # kept in the result's warnings (leakage.json)
            warnings.simplefilter("ignore")
            result = JOB_KINDS[job["kind"]](job, home / "out", step, translate)
    except Exception as exc:
        text = str(exc) if translate is None else translate(str(exc))
        write_json(home / "error.json", {"error": f"{type(exc).__name__}: {text}"})
        raise SystemExit(1) from None
    files = sorted(
        p.name for p in (home / "out").iterdir() if p.is_file() and not p.name.startswith(".")
    )
    satisfied = getattr(result, "satisfied", None)
    write_json(home / "outcome.json", {"files": files, "satisfied": satisfied})
