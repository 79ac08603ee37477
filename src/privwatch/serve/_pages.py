"""The web app's pages, rendered on the server (Jinja2, every value escaped): source ->
columns and settings -> run (live progress, cancel) -> results -> history. The one script
(``static/app.js``) only follows a running job's progress; every step works as a form."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jinja2
from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from ..audit import BUNDLED, DISCLOSURES, ESTIMATORS, METHODS, AuditSpec
from ..engines import read_table
from ..exceptions import PrivwatchError, ValidationError
from ..preprocessing import parse_bins
from ..release.hierarchies import Hierarchy
from ..report import GLOSSARY, attack_rows, classic_rows
from ._api import job_view
from ._columns import levels, profile
from ._figure import frontier_svg
from ._requests import audit_options, resolve_path, save_upload
from ._service import Service

__all__ = ["SETTINGS", "render", "router", "setting_help"]

router = APIRouter(include_in_schema=False)
_env = jinja2.Environment(
    loader=jinja2.PackageLoader("privwatch.serve", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)
#: The settings of the form: name, label, the report's glossary term whose entry is its help
#: (:data:`privwatch.report.GLOSSARY`: the app and the report say the same), what empty means.
SETTINGS = [
    ("epsilon", "epsilon (nats)", "epsilon", "Empty: proposed from the data."),
    ("held_out_tolerance", "held-out tolerance", "held-out tolerance", ""),
    ("max_suppressed", "suppression limit", "suppression limit", ""),
    ("confidence", "confidence", "confidence", "Empty: none."),
    ("min_class_size", "minimum class size", "minimum class size", ""),
    ("delta", "delta", "delta", "Empty: none."),
]
#: The disclosure select's help: the glossary's lift privacy (two-sided or positive).
DISCLOSURE_TERM = "lift privacy"


def setting_help() -> list[dict[str, str]]:
    """The form's settings, each with its help from the glossary."""
    return [
        {"name": name, "label": label, "term": term, "help": GLOSSARY[term], "empty": empty}
        for name, label, term, empty in SETTINGS
    ]


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = _env.get_template(template).render(**context)
    return HTMLResponse(html, status_code=status)


def _svc(request: Request) -> Service:
    return request.app.state.service  # type: ignore[no-any-return]


def _source_of(svc: Service, params: dict[str, str]) -> dict[str, str]:
    """The source named by a page's query: ``dataset``, ``upload`` (a generated name) or
    ``path`` (under the allowed root)."""
    if params.get("dataset"):
        if params["dataset"] not in BUNDLED:
            raise ValidationError("no such data set.")
        return {"dataset": params["dataset"]}
    if params.get("upload"):
        name = Path(params["upload"]).name
        path = svc.store.uploads / name
        if name != params["upload"] or not path.is_file():
            raise ValidationError("no such upload.")
        return {"upload": name, "path": str(path), "name": params.get("name") or name}
    if params.get("path"):
        path = resolve_path(params["path"], svc.config)
        return {"path": str(path), "name": path.name, "server": params["path"]}
    raise ValidationError("choose a source.")


def _remove(paths: list[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def _table(source: dict[str, str]) -> Any:
    if "dataset" in source:
        return BUNDLED[source["dataset"]][0]()
    return read_table(source["path"])


@router.get("/", response_class=HTMLResponse)
async def index(request: Request) -> HTMLResponse:
    svc = _svc(request)
    return render(
        request,
        "index.html.j2",
        jobs=svc.store.all()[:10],
        server=svc.config.allow_root is not None,
        datasets=sorted(BUNDLED),
    )


@router.post("/sources")
async def new_source(request: Request) -> Response:
    svc = _svc(request)
    form = await request.form(max_files=1, max_fields=10)
    upload = form.get("file")
    try:
        if isinstance(upload, UploadFile) and upload.filename:
            path = await save_upload(upload, svc.config, svc.store.uploads)
            query = {"upload": path.name, "name": Path(upload.filename).name}
        elif form.get("path"):
            query = {"path": str(resolve_path(str(form["path"]), svc.config))}
        else:
            query = {"dataset": str(form.get("dataset") or "compas")}
    except OverflowError:
        return render(request, "error.html.j2", 413, message="The file is larger than the limit.")
    except ValidationError as exc:
        return render(request, "error.html.j2", 422, message=str(exc))
    return RedirectResponse(f"/columns?{urlencode(query)}", status_code=303)


@router.get("/columns", response_class=HTMLResponse)
async def columns(request: Request) -> HTMLResponse:
    svc = _svc(request)
    params = dict(request.query_params)
    try:
        source = _source_of(svc, params)
        table = await run_in_threadpool(_table, source)
    except (PrivwatchError, OSError, ValueError) as exc:
        return render(request, "error.html.j2", 422, message=str(exc))
    sensitive: str = ""
    observed: list[str] = []
    bins: dict[str, Any] = {}
    if "dataset" in source:
        _, sensitive, observed, bins = BUNDLED[source["dataset"]]
    info = await run_in_threadpool(profile, table)
    for col in info["columns"]:
        edges = bins.get(col["name"])
        if col["suggestion"] != "drop":
            col["levels"] = await run_in_threadpool(levels, table[col["name"]], col["name"], edges)
        else:
            col["levels"] = []
        col["bins"] = (
            ""
            if edges is None
            else (str(edges) if isinstance(edges, int) else ",".join(f"{e:g}" for e in edges))
        )
        col["observed"] = col["name"] in observed or (
            not observed and col["suggestion"] == "quasi-identifier"
        )
    return render(
        request,
        "columns.html.j2",
        source=source,
        info=info,
        sensitive=sensitive,
        settings=setting_help(),
        disclosure_help=GLOSSARY[DISCLOSURE_TERM],
        disclosures=DISCLOSURES,
        methods=sorted(METHODS),
        estimators=ESTIMATORS,
        query=params,
    )


def _form_options(form: dict[str, Any], cols: list[str], source: dict[str, str]) -> dict[str, Any]:
    """The audit options of the columns form; with a bundled data set, the columns and bins
    equal to its own are left out (the command then reads ``--dataset compas`` alone)."""
    options: dict[str, Any] = {"sensitive": form.get("sensitive") or None, "observed": cols}
    bins = [f"{c}={form[f'bins_{c}']}" for c in cols if form.get(f"bins_{c}")]
    options["bins"] = bins
    for name, *_ in SETTINGS:
        value = form.get(name)
        options[name] = None if value in (None, "") else float(value)
    if options["min_class_size"] is not None:
        options["min_class_size"] = int(options["min_class_size"])
    for name in ("disclosure", "method", "estimator", "missing"):
        options[name] = form.get(name) or None
    if "dataset" in source:
        _, sensitive, observed, preset = BUNDLED[source["dataset"]]
        if options["sensitive"] == sensitive:
            options.pop("sensitive")
        if set(cols) == set(observed):  # the data set's own order
            options.pop("observed")
        if parse_bins(bins) == {c: v for c, v in preset.items() if c in cols}:
            options.pop("bins")
    return {k: v for k, v in options.items() if v not in (None, [], "")}


@router.post("/run")
async def run_audit(request: Request) -> Response:
    svc = _svc(request)
    form = await request.form(max_fields=400, max_files=100)
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    saved: list[Path] = []  # this request's uploads: removed if it is refused
    try:
        source = _source_of(
            svc, {k: fields.get(k, "") for k in ("dataset", "upload", "path", "name")}
        )
        cols = [str(c) for c in form.getlist("observed")]
        options = audit_options(_form_options(fields, cols, source), svc.config)
        hierarchies = {}
        for col in cols:  # uploaded hierarchy files: stored by the server, checked here
            upload = form.get(f"hierarchy_{col}")
            if isinstance(upload, UploadFile) and upload.filename:
                path = await save_upload(upload, svc.config, svc.store.uploads)
                saved.append(path)
                Hierarchy.from_file(path, col)
                hierarchies[col] = str(path)
        if hierarchies:
            options["hierarchies"] = hierarchies
            AuditSpec.from_options(options)
    except OverflowError:
        _remove(saved)
        return render(request, "error.html.j2", 413, message="The file is larger than the limit.")
    except (PrivwatchError, ValueError) as exc:
        _remove(saved)
        return render(request, "error.html.j2", 422, message=str(exc))
    job_source = {k: v for k, v in source.items() if k in ("dataset", "path", "name")}
    return RedirectResponse(f"/jobs/{svc.submit('audit', options, job_source)}", status_code=303)


@router.get("/jobs/{job_id}", response_class=HTMLResponse)
async def job_page(request: Request, job_id: str, point: int | None = None) -> HTMLResponse:
    svc = _svc(request)
    job = svc.store.get(job_id)
    if job is None:
        raise HTTPException(404, "no such job")
    view = job_view(svc, job)
    result = view.get("result") or {}
    frontier = result.get("frontier") or []
    chosen = frontier[point] if point is not None and 0 <= point < len(frontier) else None
    svg = frontier_svg(frontier, result.get("epsilon"), point, f"/jobs/{job_id}")
    # the report's own rows (privwatch.report), from leakage.json: counts and shares only
    classic, attack = result.get("classic"), result.get("attack")
    return render(
        request,
        "job.html.j2",
        job=view,
        result=result,
        svg=svg,
        chosen=chosen,
        point=point,
        classic=classic_rows(classic) if classic else None,
        classic_info=classic,
        attack=attack_rows(attack) if attack else None,
        attack_info=attack,
        collection={"audit": "audits", "check": "checks"}.get(job["kind"], "apply"),
    )


@router.post("/jobs/{job_id}/cancel")
async def cancel(request: Request, job_id: str) -> Response:
    svc = _svc(request)
    if svc.store.get(job_id) is None:
        raise HTTPException(404, "no such job")
    await svc.scheduler.cancel(job_id)
    return RedirectResponse(f"/jobs/{job_id}", status_code=303)


@router.post("/jobs/{job_id}/delete")
async def delete(request: Request, job_id: str) -> Response:
    """Cancel the job and remove it, with the uploads no other job names."""
    svc = _svc(request)
    if svc.store.get(job_id) is None:
        raise HTTPException(404, "no such job")
    await svc.delete(job_id)
    return RedirectResponse("/history", status_code=303)


@router.post("/jobs/{job_id}/rerun")
async def rerun(request: Request, job_id: str) -> Response:
    """The same audit at the epsilon of a chosen frontier point: its release to download."""
    svc = _svc(request)
    job = svc.store.get(job_id)
    form = await request.form(max_fields=5)
    if job is None or job["kind"] != "audit":
        raise HTTPException(404, "no such job")
    try:
        options = audit_options(
            {**job["options"], "epsilon": float(str(form.get("epsilon")))}, svc.config
        )
    except (ValidationError, ValueError) as exc:
        return render(request, "error.html.j2", 422, message=str(exc))
    return RedirectResponse(f"/jobs/{svc.submit('audit', options, job['source'])}", status_code=303)


@router.get("/history", response_class=HTMLResponse)
async def history(request: Request) -> HTMLResponse:
    return render(request, "history.html.j2", jobs=_svc(request).store.all())


@router.post("/checks")
async def run_check(request: Request) -> Response:
    """A release made elsewhere (uploaded with its original) judged as ``privwatch check``."""
    svc = _svc(request)
    form = await request.form(max_files=2, max_fields=10)
    saved: list[Path] = []  # this request's uploads: removed if it is refused
    try:
        source: dict[str, Any] = {}
        for name in ("original", "release"):
            upload = form.get(name)
            if not isinstance(upload, UploadFile) or not upload.filename:
                raise ValidationError(f"choose the {name} file.")
            path = await save_upload(upload, svc.config, svc.store.uploads)
            saved.append(path)
            source[name], source[f"{name}_name"] = str(path), Path(upload.filename).name
        raw = {k: str(form.get(k) or "") for k in ("sensitive", "epsilon")}
        options = audit_options(
            {
                "sensitive": raw["sensitive"] or None,
                "epsilon": float(raw["epsilon"]) if raw["epsilon"] else None,
            },
            svc.config,
        )
    except OverflowError:
        _remove(saved)
        return render(request, "error.html.j2", 413, message="The file is larger than the limit.")
    except (ValidationError, ValueError) as exc:
        _remove(saved)
        return render(request, "error.html.j2", 422, message=str(exc))
    return RedirectResponse(f"/jobs/{svc.submit('check', options, source)}", status_code=303)


#: The figures set side by side on the compare page: label, path in leakage.json.
COMPARED = [
    ("verdict", ("status",)),
    ("epsilon (nats)", ("epsilon",)),
    ("information kept (nats)", ("utility", "information_nats")),
    ("records suppressed", ("summary", "n_suppressed")),
    ("held-out breach share", ("held_out", "breach_probability")),
    ("method", ("release", "method")),
    ("records", ("summary", "n_records")),
    ("date", ("stamp", "date")),
]


def _pick(data: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


@router.get("/compare", response_class=HTMLResponse)
async def compare(request: Request) -> HTMLResponse:
    """Two (or more) finished jobs side by side."""
    svc = _svc(request)
    jobs = [svc.store.get(i) for i in request.query_params.getlist("id")[:4]]
    views = [job_view(svc, j) for j in jobs if j is not None]
    rows = [
        (label, [_pick(v.get("result") or {}, path) for v in views]) for label, path in COMPARED
    ]
    return render(request, "compare.html.j2", jobs=views, rows=rows)
