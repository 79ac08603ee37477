"""The data dir: one folder per job (``jobs/ID/job.json``, its outputs in ``jobs/ID/out``)
and the uploads (``uploads/``, under generated names). ``job.json`` is written by the server
only, each time whole (a temporary file moved over it); the worker writes ``progress.json``
and, last, ``outcome.json``.

An upload lives as long as a job names it: deleting a job removes the uploads no other job
names, and those no job names are removed when the server starts and, while it runs, once
they are :data:`UPLOAD_TTL_S` old (a source uploaded on the pages but never audited)."""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import secrets
import shutil
import time
from pathlib import Path
from typing import Any

__all__ = ["ACTIVE", "FINAL", "JOB_STATUSES", "UPLOAD_TTL_S", "JobStore", "now"]

JOB_STATUSES = ("queued", "running", "done", "failed", "cancelled", "interrupted")
ACTIVE = ("queued", "running")
FINAL = ("done", "failed", "cancelled", "interrupted")
_ID = re.compile(r"^[0-9a-f]{32}$")
#: An upload no job names is removed once it is this old (seconds), or when the server starts.
UPLOAD_TTL_S = 24 * 3600


def now() -> str:
    """The time in UTC, to the second, as the audit's stamp writes it."""
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` to ``path`` all or nothing (a temporary file, then a rename)."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    os.replace(tmp, path)


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class JobStore:
    """The jobs and uploads of one data dir."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.jobs = self.root / "jobs"
        self.uploads = self.root / "uploads"
        self.jobs.mkdir(parents=True, exist_ok=True)
        self.uploads.mkdir(parents=True, exist_ok=True)

    def folder(self, job_id: str) -> Path | None:
        """The folder of ``job_id``, or None for an id that is not one (never a path)."""
        if not _ID.match(job_id):
            return None
        folder = self.jobs / job_id
        return folder if (folder / "job.json").is_file() else None

    def create(
        self,
        kind: str,
        options: dict[str, Any],
        source: dict[str, Any],
        command: str | None,
        toml: str | None,
    ) -> dict[str, Any]:
        """A new queued job."""
        job_id = secrets.token_hex(16)
        folder = self.jobs / job_id
        folder.mkdir()
        job: dict[str, Any] = {
            "id": job_id,
            "kind": kind,
            "status": "queued",
            "created": now(),
            "started": None,
            "finished": None,
            "options": options,
            "source": source,
            "command": command,
            "error": None,
            "files": [],
        }
        if toml is not None:
            (folder / "audit.toml").write_text(toml, encoding="utf-8")
        write_json(folder / "job.json", job)
        return job

    def get(self, job_id: str) -> dict[str, Any] | None:
        folder = self.folder(job_id)
        return None if folder is None else read_json(folder / "job.json")

    def update(self, job_id: str, **changes: Any) -> dict[str, Any] | None:
        job = self.get(job_id)
        folder = self.folder(job_id)
        if job is None or folder is None:
            return None
        job.update(changes)
        write_json(folder / "job.json", job)
        return job

    def progress(self, job_id: str) -> dict[str, Any] | None:
        folder = self.folder(job_id)
        return None if folder is None else read_json(folder / "progress.json")

    def all(self) -> list[dict[str, Any]]:
        """Every job of the data dir, the newest first."""
        jobs = [read_json(p / "job.json") for p in self.jobs.iterdir() if _ID.match(p.name)]
        return sorted((j for j in jobs if j), key=lambda j: j["created"], reverse=True)

    def recover(self) -> list[str]:
        """At start: jobs left queued or running by a server that stopped are marked
        ``interrupted``, and whatever their worker left in ``out`` is removed."""
        ids = []
        for job in self.all():
            if job["status"] in ACTIVE:
                self.discard_outputs(job["id"])
                self.update(job["id"], status="interrupted", finished=now(), files=[])
                ids.append(job["id"])
        return ids

    def discard_outputs(self, job_id: str) -> None:
        folder = self.folder(job_id)
        if folder is not None:
            shutil.rmtree(folder / "out", ignore_errors=True)
            (folder / "outcome.json").unlink(missing_ok=True)

    def delete(self, job_id: str) -> None:
        """Remove the job's folder, and its uploads that no other job names."""
        job = self.get(job_id)
        folder = self.folder(job_id)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        if job is not None:
            still = self.referenced()
            for path in self.uploads_of(job) - still:
                path.unlink(missing_ok=True)

    def uploads_of(self, job: dict[str, Any]) -> set[Path]:
        """The files of ``uploads/`` that ``job`` names (its source, its hierarchy files)."""
        named = [*job.get("source", {}).values()]
        hierarchies = job.get("options", {}).get("hierarchies")
        if isinstance(hierarchies, dict):
            named += hierarchies.values()
        found = set()
        for value in named:
            if isinstance(value, str):
                path = Path(value)
                if path.parent == self.uploads and path.name:
                    found.add(path)
        return found

    def referenced(self) -> set[Path]:
        """The uploads some job names."""
        return {p for job in self.all() for p in self.uploads_of(job)}

    def sweep_uploads(self, max_age_s: float = 0.0) -> list[str]:
        """Remove the uploads no job names that are at least ``max_age_s`` seconds old
        (``0``: all of them, as the server does when it starts); their names."""
        keep = self.referenced()
        cutoff = time.time() - max_age_s
        removed = []
        for path in self.uploads.iterdir():
            try:
                old = path.stat().st_mtime <= cutoff
            except OSError:
                continue
            if path.is_file() and path not in keep and old:
                path.unlink(missing_ok=True)
                removed.append(path.name)
        return removed
