"""SQL databases through SQLAlchemy: connect from a URL, quote names, number rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..exceptions import ValidationError
from ._sources import require

__all__ = ["connect_url", "quote", "sql_row_number"]


def quote(name: str, q: str = '"') -> str:
    """Quote an identifier (or, with ``q="'"``, a string literal) by doubling the quote."""
    return q + name.replace(q, q + q) + q


def sql_row_number(dialect: str) -> str:
    """0-based row position in the table's physical order (a freshly loaded table's order)."""
    if dialect == "postgresql":
        return "CAST(row_number() OVER (ORDER BY ctid) - 1 AS BIGINT)"
    if dialect == "sqlite":
        return "(rowid - 1)"
    return "CAST(row_number() OVER () - 1 AS BIGINT)"


@dataclass
class Connection:
    """A SQLAlchemy engine and connection; ``query`` returns pandas, ``execute`` runs DDL."""

    engine: Any
    conn: Any

    def query(self, sql: str) -> pd.DataFrame:
        sqlalchemy = require("sqlalchemy")
        result = self.conn.execute(sqlalchemy.text(sql))
        return pd.DataFrame(result.fetchall(), columns=list(result.keys()))

    def execute(self, sql: str) -> None:
        sqlalchemy = require("sqlalchemy")
        self.conn.execute(sqlalchemy.text(sql))

    def close(self) -> None:
        self.conn.commit()
        self.conn.close()
        self.engine.dispose()


def connect_url(url: str) -> tuple[Connection, str]:
    """Connect with SQLAlchemy. Credentials come from the URL, the environment (PGPASSWORD,
    PGUSER, ...) or ``~/.pgpass`` through libpq; they are never printed (errors hide them)."""
    sqlalchemy = require("sqlalchemy")
    if url.startswith(("postgresql://", "postgres://")):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    engine = sqlalchemy.create_engine(url, hide_parameters=True)
    try:
        conn = engine.connect()
    except Exception as exc:  # the message may contain the URL: show it without the password
        safe = sqlalchemy.engine.make_url(url).render_as_string(hide_password=True)
        raise ValidationError(
            f"`source` must be a database URL privwatch can connect to; cannot connect to "
            f"{safe} ({type(exc).__name__})."
        ) from None
    return Connection(engine, conn), engine.dialect.name
