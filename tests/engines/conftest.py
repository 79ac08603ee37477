"""A real PostgreSQL server for the session (the system's initdb/pg_ctl, unprivileged user)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for d in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (d / name).exists():
            return str(d / name)
    return None


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("PostgreSQL server binaries not installed (.ci/run installs `postgresql`)")
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("psycopg")
    root = os.geteuid() == 0
    run_as = ["runuser", "-u", "postgres", "--"] if root else []
    tmp = tempfile.mkdtemp(prefix="privwatch-pg-")
    os.chmod(tmp, 0o777)
    data = os.path.join(tmp, "data")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    pw = os.urandom(12).hex()
    pwfile = os.path.join(tmp, "pw")
    Path(pwfile).write_text(pw)
    os.chmod(pwfile, 0o644)
    subprocess.run(
        [*run_as, initdb, "-D", data, "-U", "privwatch", "--pwfile", pwfile, "-A", "scram-sha-256"],
        check=True,
        capture_output=True,
    )
    opts = f"-p {port} -k {tmp} -c listen_addresses=127.0.0.1"
    subprocess.run(
        [*run_as, pg_ctl, "-D", data, "-o", opts, "-l", os.path.join(tmp, "log"), "-w", "start"],
        check=True,
        capture_output=True,
    )
    os.environ["PGPASSWORD"] = pw  # credentials from the environment, never in the URL
    try:
        yield f"postgresql://privwatch@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*run_as, pg_ctl, "-D", data, "-m", "fast", "stop"], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def local_spark() -> object:
    """A local Spark session on 2 cores, no UI, 4 shuffle partitions (skipped without
    PySpark); the engines pick it up as the active session."""
    pyspark_sql = pytest.importorskip("pyspark.sql")
    return (
        pyspark_sql.SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
