"""The HTTP API (JSON): post an audit, a check or an apply; follow it; fetch its files;
cancel or delete it. Results have ``leakage.json``'s schema (:data:`privwatch.report.SCHEMA`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.responses import FileResponse, JSONResponse
from starlette.datastructures import UploadFile

from ..exceptions import ValidationError
from ._requests import audit_options, bundled, resolve_path, save_upload
from ._safety import FILE_CSP
from ._service import Service
from ._store import read_json

__all__ = ["COLLECTIONS", "router"]

router = APIRouter(prefix="/api", tags=["jobs"])
#: The collections of the API and the kind of job each holds.
COLLECTIONS = {"audits": "audit", "checks": "check", "apply": "apply"}
#: Inline in a browser; every other file is a download.
INLINE = {".html": "text/html", ".png": "image/png", ".json": "application/json"}


def service(request: Request) -> Service:
    return request.app.state.service  # type: ignore[no-any-return]


async def _body(request: Request) -> tuple[dict[str, Any], dict[str, UploadFile]]:
    """A request's fields and uploaded files: multipart (``spec`` a JSON text) or JSON."""
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        form = await request.form(max_files=4, max_fields=40)
        files = {k: v for k, v in form.items() if isinstance(v, UploadFile)}
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        try:
            spec = json.loads(fields.pop("spec", "") or "{}")
        except ValueError as exc:
            raise ValidationError("`spec` must be a JSON object.") from exc
        if not isinstance(spec, dict):
            raise ValidationError("`spec` must be a JSON object.")
        return {**fields, **spec}, files
    try:
        body = await request.json()
    except ValueError as exc:
        raise ValidationError("the body must be JSON or multipart/form-data.") from exc
    if not isinstance(body, dict):
        raise ValidationError("the body must be a JSON object.")
    spec = body.pop("spec", None) or {}
    return {**body, **spec}, {}


async def _file(
    svc: Service,
    fields: dict[str, Any],
    files: dict[str, UploadFile],
    name: str,
    saved: list[Path],
    required: bool = True,
) -> dict[str, str] | None:
    """The file ``name``: uploaded (stored under a generated name, added to ``saved``) or a
    server path."""
    if name in files:
        upload = files[name]
        path = await save_upload(upload, svc.config, svc.store.uploads)
        saved.append(path)
        return {"path": str(path), "name": Path(upload.filename or path.name).name}
    if fields.get(name):
        path = resolve_path(str(fields.pop(name)), svc.config)
        return {"path": str(path), "name": path.name}
    if required:
        raise ValidationError(f"give `{name}`: a file upload, or a path under the allowed root.")
    return None


def _remove(paths: list[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


async def _submit(request: Request, kind: str) -> JSONResponse:
    svc = service(request)
    saved: list[Path] = []  # this request's uploads: removed if it is refused
    try:
        return await _submit_saved(request, svc, kind, saved)
    except BaseException:
        _remove(saved)
        raise


async def _submit_saved(
    request: Request, svc: Service, kind: str, saved: list[Path]
) -> JSONResponse:
    try:
        fields, files = await _body(request)
        if kind == "audit":
            dataset = fields.pop("dataset", None)
            fields.pop("path", None) if dataset else None
            source: dict[str, Any] = (
                {"dataset": bundled(str(dataset))}
                if dataset
                else await _file(svc, {"file": fields.pop("path", None)}, files, "file", saved)
                or {}
            )
            options = audit_options(fields, svc.config)
        elif kind == "check":
            source = {}
            for name, required in (
                ("original", True),
                ("release", True),
                ("control", False),
                ("mechanism", False),
            ):
                got = await _file(svc, fields, files, name, saved, required)
                if got is not None:
                    source[name] = got["path"]
                    source[f"{name}_name"] = got["name"]
            extra: dict[str, Any] = {k: fields.pop(k) for k in ("key", "synthetic") if k in fields}
            options = {**audit_options(fields, svc.config), **extra}
        else:
            source = {}
            for name in ("mechanism", "data"):
                got = await _file(svc, fields, files, name, saved)
                assert got is not None
                source[name], source[f"{name}_name"] = got["path"], got["name"]
            seed = fields.pop("seed", None)
            options = {"seed": None if seed in (None, "") else int(seed)}
    except OverflowError:
        _remove(saved)
        return JSONResponse({"detail": "the upload is larger than the limit"}, status_code=413)
    except (ValidationError, ValueError, TypeError) as exc:
        _remove(saved)
        return JSONResponse({"detail": str(exc)}, status_code=422)
    job_id = svc.submit(kind, options, source)
    return JSONResponse({"id": job_id, "status": "queued"}, status_code=202)


@router.post("/audits", status_code=202, summary="Start an audit")
async def post_audit(request: Request) -> JSONResponse:
    """multipart: ``file`` (CSV, Excel, Parquet, JSON Lines) and ``spec`` (the
    :class:`~privwatch.audit.AuditSpec` fields as JSON); or JSON: ``{"dataset": "compas",
    ...}`` or ``{"path": "file under --allow-root", ...}`` with the spec's fields."""
    return await _submit(request, "audit")


@router.post("/checks", status_code=202, summary="Start a check of a release")
async def post_check(request: Request) -> JSONResponse:
    """``original`` and ``release`` (and optionally ``control``, ``mechanism``) as uploads or
    paths under --allow-root; the spec's fields (``sensitive`` ...), ``key``, ``synthetic``."""
    return await _submit(request, "check")


@router.post("/apply", status_code=202, summary="Release new records through a mechanism")
async def post_apply(request: Request) -> JSONResponse:
    """``mechanism`` (an audit's mechanism.json) and ``data``, uploads or paths; ``seed``."""
    return await _submit(request, "apply")


def job_view(svc: Service, job: dict[str, Any]) -> dict[str, Any]:
    """A job as the API shows it: status, progress, and once done its ``leakage.json``."""
    view = {
        k: job.get(k)
        for k in (
            "id",
            "kind",
            "status",
            "created",
            "started",
            "finished",
            "command",
            "error",
            "files",
            "satisfied",
        )
    }
    view["progress"] = svc.store.progress(job["id"]) if job["status"] == "running" else None
    folder = svc.store.folder(job["id"])
    if job["status"] == "done" and folder is not None:
        view["result"] = read_json(folder / "out" / "leakage.json")
    view["toml"] = None  # an audit's only
    if folder is not None and (folder / "audit.toml").is_file():
        view["toml"] = (folder / "audit.toml").read_text(encoding="utf-8")
    return view


def _job(svc: Service, collection: str, job_id: str) -> dict[str, Any]:
    job = svc.store.get(job_id)
    if collection not in COLLECTIONS or job is None or job["kind"] != COLLECTIONS[collection]:
        raise HTTPException(404, "no such job")
    return job


@router.get("/jobs", summary="Every job of the data dir, newest first")
async def list_jobs(request: Request) -> list[dict[str, Any]]:
    svc = service(request)
    return [
        {k: j.get(k) for k in ("id", "kind", "status", "created", "finished", "satisfied")}
        for j in svc.store.all()
    ]


@router.get("/{collection}/{job_id}", summary="A job: status, progress, result")
async def get_job(request: Request, collection: str, job_id: str) -> dict[str, Any]:
    svc = service(request)
    return job_view(svc, _job(svc, collection, job_id))


@router.get("/{collection}/{job_id}/files/{name}", summary="A file the job wrote")
async def get_file(request: Request, collection: str, job_id: str, name: str) -> Response:
    svc = service(request)
    _job(svc, collection, job_id)
    path = svc.output(job_id, name)
    if path is None or not path.is_file():
        raise HTTPException(404, "no such file")
    media = INLINE.get(path.suffix, "text/csv" if path.suffix == ".csv" else None)
    disposition = "inline" if path.suffix in (".html", ".png") else "attachment"
    return FileResponse(
        path,
        media_type=media,
        filename=name,
        content_disposition_type=disposition,
        headers={"content-security-policy": FILE_CSP},
    )


@router.post("/{collection}/{job_id}/cancel", summary="Cancel a job (kept, as cancelled)")
async def cancel_job(request: Request, collection: str, job_id: str) -> dict[str, Any]:
    svc = service(request)
    _job(svc, collection, job_id)
    await svc.scheduler.cancel(job_id)
    return job_view(svc, _job(svc, collection, job_id))


@router.delete("/{collection}/{job_id}", summary="Cancel and delete a job and its uploads")
async def delete_job(request: Request, collection: str, job_id: str) -> dict[str, str]:
    svc = service(request)
    _job(svc, collection, job_id)
    await svc.delete(job_id)
    return {"id": job_id, "status": "deleted"}
