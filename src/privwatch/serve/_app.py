"""The server: one FastAPI application (the API under ``/api``, the pages, the vendored
assets under ``/static``, the OpenAPI document at ``/openapi.json`` shown at ``/docs``),
wrapped in the safety middleware, run by uvicorn."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from ..audit import privwatch_version
from ._api import router as api_router
from ._config import ServeConfig
from ._pages import render
from ._pages import router as page_router
from ._safety import TOKEN_COOKIE, BodyLimit, Guard
from ._service import Service

__all__ = ["create_app", "serve"]

HERE = Path(__file__).parent
#: Room for a multipart request's fields and boundaries around an upload of the limit.
FORM_SLACK = 1 << 20


def create_app(config: ServeConfig) -> Any:
    """The ASGI application of ``config`` (the FastAPI app inside the safety middleware)."""
    svc = Service(config)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        svc.start()
        yield
        await svc.scheduler.shutdown()

    app = FastAPI(
        title="privwatch serve",
        version=privwatch_version(),
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.service = svc
    app.include_router(api_router)
    app.include_router(page_router)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> PlainTextResponse:
        # no message: it may quote a cell of the table (the guard logs the type and route)
        return PlainTextResponse("internal error (see the server's log)", status_code=500)

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    async def docs(request: Request) -> HTMLResponse:
        return render(request, "docs.html.j2", schema=app.openapi())

    @app.get("/login", include_in_schema=False)
    async def login(token: str = "") -> RedirectResponse:
        # the token moves into an HttpOnly cookie; the guard checks it on the next request
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict")
        return response

    return Guard(BodyLimit(app, config.max_upload_bytes + FORM_SLACK), config.token)


def serve(config: ServeConfig) -> None:
    """Run the server of ``config`` until interrupted."""
    import uvicorn

    config.data_dir.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:     %(message)s")
    uvicorn.run(
        create_app(config),
        host=config.host,
        port=config.port,
        log_level="info",
        timeout_graceful_shutdown=5,
    )
