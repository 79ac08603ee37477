"""Jobs in worker processes: at most ``jobs`` at a time, the others queued; a cancelled job's
worker is killed (SIGKILL) and whatever it left in ``out`` removed. A worker knows the
server's pid and exits when the server dies, even by SIGKILL (:func:`._worker.die_with`).

The workers come from a ``forkserver`` that has imported the library once, so a job starts in
a fraction of a second and never shares the server's threads. The server process keeps only
the job records: a worker's memory is its own and returns to the system when it exits.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
from collections.abc import Callable
from typing import Any

from ._store import JobStore, now, read_json
from ._worker import run_job

__all__ = ["Scheduler"]

log = logging.getLogger("privwatch.serve")
#: Modules the fork server imports before it forks any worker.
PRELOAD = ["privwatch.audit", "privwatch.report", "privwatch.check", "privwatch.release"]
#: How often the server looks at a running worker (seconds).
POLL_S = 0.1


class Scheduler:
    """Runs the store's queued jobs in worker processes, ``jobs`` at a time."""

    def __init__(
        self, store: JobStore, jobs: int, translate: Callable[[str], str] | None = None
    ) -> None:
        self.store, self.jobs, self.translate = store, jobs, translate
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(PRELOAD)
        self._slots: asyncio.Semaphore | None = None
        self._procs: dict[str, Any] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._cancelled: set[str] = set()

    def submit(self, job_id: str) -> None:
        """Queue ``job_id`` (already in the store as ``queued``)."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.jobs)
        task = asyncio.get_running_loop().create_task(self._run(job_id))
        self._tasks[job_id] = task
        task.add_done_callback(lambda _: self._tasks.pop(job_id, None))

    async def _run(self, job_id: str) -> None:
        assert self._slots is not None
        async with self._slots:
            if job_id in self._cancelled or self.store.folder(job_id) is None:
                return
            folder = self.store.folder(job_id)
            proc = self._context.Process(
                target=run_job, args=(str(folder), self.translate, os.getpid())
            )
            await asyncio.to_thread(proc.start)
            self._procs[job_id] = proc
            if job_id in self._cancelled:  # cancelled while it started
                proc.kill()
            self.store.update(job_id, status="running", started=now(), pid=proc.pid)
            log.info("job %s started", job_id)
            try:
                while proc.exitcode is None:
                    await asyncio.sleep(POLL_S)
            finally:
                self._procs.pop(job_id, None)
            self._finish(job_id, proc.exitcode)

    def _finish(self, job_id: str, exitcode: int | None) -> None:
        folder = self.store.folder(job_id)
        if folder is None:  # deleted while it ran
            return
        outcome = read_json(folder / "outcome.json")
        if job_id in self._cancelled:
            self.store.discard_outputs(job_id)
            self.store.update(job_id, status="cancelled", finished=now(), files=[])
        elif exitcode == 0 and outcome is not None:
            self.store.update(
                job_id,
                status="done",
                finished=now(),
                files=outcome["files"],
                satisfied=outcome.get("satisfied"),
            )
        else:
            error = read_json(folder / "error.json") or {
                "error": f"the worker stopped with exit status {exitcode}"
            }
            self.store.discard_outputs(job_id)
            self.store.update(
                job_id, status="failed", finished=now(), files=[], error=error["error"]
            )
        log.info("job %s finished", job_id)

    async def cancel(self, job_id: str) -> None:
        """Stop ``job_id``: a queued job never starts, a running one's worker is killed."""
        job = self.store.get(job_id)
        if job is None or job["status"] not in ("queued", "running"):
            return
        self._cancelled.add(job_id)
        proc = self._procs.get(job_id)
        if proc is not None:
            proc.kill()
        task = self._tasks.get(job_id)
        if task is not None:
            await asyncio.wait({task}, timeout=10)
        job = self.store.get(job_id)
        if job is not None and job["status"] == "queued":
            self.store.update(job_id, status="cancelled", finished=now())

    async def shutdown(self) -> None:
        """Kill every worker; their jobs are marked ``interrupted``."""
        for job_id, proc in list(self._procs.items()):
            proc.kill()
            await asyncio.to_thread(proc.join, 5)
            self.store.discard_outputs(job_id)
            self.store.update(job_id, status="interrupted", finished=now(), files=[])
        for task in list(self._tasks.values()):
            task.cancel()
        self.store.recover()
