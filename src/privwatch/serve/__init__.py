"""``privwatch serve``: the audit as a local web app and an HTTP service (docs/serve.md).

Needs the extra ``privwatch[serve]`` (FastAPI, uvicorn, python-multipart). Jobs run in worker
processes through the library's public functions (:func:`privwatch.audit.run`,
:func:`privwatch.report.write_audit`, :func:`privwatch.check.check`); the server keeps their
records in a data folder.

- :class:`ServeConfig`: where it listens, its data folder, token, allowed root, limits;
- :func:`create_app`: the ASGI application (for uvicorn, or a test);
- :func:`serve`: run it.
"""

from ._app import create_app, serve
from ._config import DEFAULT_HOST, DEFAULT_PORT, TOKEN_ENV, ServeConfig

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "TOKEN_ENV", "ServeConfig", "create_app", "serve"]
