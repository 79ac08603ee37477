"""A request turned into a job: its options checked as the audit checks them
(:meth:`privwatch.audit.AuditSpec.from_options`), its source resolved (a bundled data set, an
upload stored under a generated name, a file under ``--allow-root``), and the ``audit.toml``
that reproduces it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from starlette.datastructures import UploadFile

from ..audit import BUNDLED, AuditSpec
from ..exceptions import ValidationError
from ._config import ServeConfig
from ._safety import generated_name, sniff_upload, under_root

__all__ = ["SERVER_REFUSED", "audit_options", "resolve_path", "save_upload", "toml_of"]

#: Audit options a server does not take from a request: they name places to read or write
#: on the server (a database table, where to write the records) or what only a local
#: user may choose.
SERVER_REFUSED = ("table", "write_table", "engine", "estimator_params")
_CHUNK = 1 << 20


def audit_options(raw: dict[str, Any], config: ServeConfig) -> dict[str, Any]:
    """The options of a request, checked: no option of :data:`SERVER_REFUSED`, a hierarchy
    file only under the allowed root, and every value as :class:`AuditSpec` validates it."""
    refused = sorted(k for k in raw if k in SERVER_REFUSED)
    if refused:
        raise ValidationError(f"a server does not take the options {refused}.")
    options = {k: v for k, v in raw.items() if v is not None and v != ""}
    hierarchies = options.pop("hierarchies", None) or {}
    if isinstance(hierarchies, dict) and hierarchies:
        options["hierarchies"] = {
            col: str(resolve_path(str(path), config)) for col, path in hierarchies.items()
        }
    elif not isinstance(hierarchies, dict):
        raise ValidationError("`hierarchies` must be a table of column: file.")
    AuditSpec.from_options(options)  # refused here, not in the worker
    return options


def resolve_path(path: str, config: ServeConfig) -> Path:
    """A server-side file, only under ``--allow-root``."""
    return under_root(path, config.allow_root)


def bundled(name: str) -> str:
    if name not in BUNDLED:
        raise ValidationError(f"`dataset` must be one of {sorted(BUNDLED)}; got {name!r}.")
    return name


async def save_upload(upload: UploadFile, config: ServeConfig, folder: Path) -> Path:
    """Copy an upload into ``folder`` under a generated name, checked by content and size
    (:class:`ValidationError` on a bad content; ``OverflowError`` past the limit)."""
    head = await upload.read(_CHUNK)
    suffix = Path(upload.filename or "").suffix
    target = folder / generated_name(suffix.lower())
    size, tail = len(head), head[-8:]
    try:
        with target.open("wb") as fh:
            fh.write(head)
            while chunk := await upload.read(_CHUNK):
                size += len(chunk)
                if size > config.max_upload_bytes:
                    raise OverflowError("upload too large")
                fh.write(chunk)
                tail = (tail + chunk)[-8:]
        if size > config.max_upload_bytes:
            raise OverflowError("upload too large")
        real = sniff_upload(upload.filename or "", head, tail)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    if real != target.suffix:
        target = target.rename(target.with_suffix(real))
    return target


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items())
            + "}"
        )
    return json.dumps(str(value), ensure_ascii=False)


def toml_of(options: dict[str, Any], source: dict[str, Any]) -> str:
    """The ``audit.toml`` of a job, for ``privwatch audit --config audit.toml``."""
    lines = ["[audit]"]
    if source.get("dataset"):
        lines.append(f"dataset = {_toml_value(source['dataset'])}")
    elif source.get("name"):
        lines.append(f"data = {_toml_value(source['name'])}")
    for key, value in options.items():
        name = "hierarchy" if key == "hierarchies" else key
        lines.append(f"{name} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"
