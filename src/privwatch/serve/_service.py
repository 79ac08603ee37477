"""The server's state: the settings, the data dir's jobs and the scheduler, and the one way a
job is made from a request (used by the API and the pages alike)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ._config import ServeConfig
from ._jobs import Scheduler
from ._requests import toml_of
from ._store import UPLOAD_TTL_S, JobStore

__all__ = ["Service"]

log = logging.getLogger("privwatch.serve")


class Service:
    """One server's jobs."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.store = JobStore(config.data_dir)
        self.scheduler = Scheduler(self.store, config.jobs, config.translate)

    def start(self) -> None:
        interrupted = self.store.recover()
        if interrupted:
            log.info("%d jobs left running by the last server marked interrupted", len(interrupted))
        removed = self.store.sweep_uploads()
        if removed:
            log.info("%d uploads no job names removed", len(removed))

    def submit(self, kind: str, options: dict[str, Any], source: dict[str, Any]) -> str:
        """A new job, queued; its id. ``source``: ``dataset`` or ``path`` (and ``name``, what
        the user called the file) for an audit; the files of a check or an apply."""
        command = None
        if self.config.command_for is not None:
            command = self.config.command_for(kind, options, source)
        toml = toml_of(options, source) if kind == "audit" else None
        job = self.store.create(kind, options, source, command, toml)
        self.scheduler.submit(job["id"])
        self.store.sweep_uploads(UPLOAD_TTL_S)
        log.info("job %s queued (%s)", job["id"], kind)
        return str(job["id"])

    async def delete(self, job_id: str) -> None:
        """Cancel ``job_id`` and remove it with the uploads no other job names."""
        await self.scheduler.cancel(job_id)
        self.store.delete(job_id)

    def output(self, job_id: str, name: str) -> Path | None:
        """A file the job wrote, by its name in the job's list; None for any other name."""
        job = self.store.get(job_id)
        folder = self.store.folder(job_id)
        if job is None or folder is None or job["status"] != "done" or name not in job["files"]:
            return None
        return folder / "out" / name
