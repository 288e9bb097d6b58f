"""Fixtures: real scoreboard processes on SQLite files and on PostgreSQL (a fresh schema per
test session, dropped at the end; PostgreSQL tests skip with the reason when it is unreachable).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import Server

PG_BASE = os.environ.get("GUANDAN_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def _pg_reachable() -> str | None:
    try:
        import psycopg

        with psycopg.connect(PG_BASE, connect_timeout=3) as conn:
            conn.execute("select 1")
    except Exception as exc:  # noqa: BLE001 - any failure means: skip with the reason
        return f"PostgreSQL at {PG_BASE} unreachable ({type(exc).__name__}: {exc})"
    return None


def pg_schema(prefix: str) -> Iterator[str]:
    """A database URL on a fresh PostgreSQL schema named from ``prefix``, dropped afterwards
    (the test is skipped, with the reason, when PostgreSQL cannot be reached)."""
    reason = _pg_reachable()
    if reason:
        pytest.skip(reason)
    import psycopg

    schema = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_BASE, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"{PG_BASE}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(PG_BASE, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture(scope="session")
def pg_schema_url() -> Iterator[str]:
    yield from pg_schema("gd_test")


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    if request.param == "sqlite":
        return str(tmp_path_factory.mktemp("sb") / "scoreboard.db")
    url: str = request.getfixturevalue("pg_schema_url")
    return url


@pytest.fixture(scope="module")
def server(db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    log = Path(tmp_path_factory.mktemp("sblog")) / "server.log"
    srv = Server(db_url, log=log).start()
    try:
        yield srv
    finally:
        srv.stop()
