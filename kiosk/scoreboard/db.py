"""Database engine, sessions and Alembic migrations (shipped in ``kiosk/scoreboard/migrations``).

On PostgreSQL several scoreboard processes may share one database. A transaction that writes a
table the ingest path caches (tables and their tokens, rounds, matches, decisions) sends a
``NOTIFY`` on the database's directory channel as it commits — from the app, its pages or the
``guandan scoreboard`` verbs alike — so every process reloads its copy at once (``live.Peers``
listens) instead of after its refresh interval.
"""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = Path(__file__).with_name("migrations")

#: This process among the scoreboard processes of one database (notifications carry it, so a
#: process skips its own).
ORIGIN = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
#: Tables whose rows the ingest path's directory caches (service.Directory).
DIRECTORY_TABLES = frozenset({"game_table", "round", "match", "match_decision"})
_WRITE = re.compile(r'\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"?(\w+)"?', re.IGNORECASE)


def channel(kind: str, database: str, schema: str) -> str:
    """The NOTIFY channel of ``kind`` (``live`` or ``dir``) for one database and schema:
    channels are per database, and two scoreboards in two schemas of one database (tests,
    benches) must not hear each other."""
    digest = hashlib.sha1(f"{database}\0{schema}".encode()).hexdigest()[:16]
    return f"guandan_{kind}_{digest}"


def _directory_notify(engine: Engine) -> None:
    """Send the directory channel's NOTIFY with the commit of a transaction that wrote a
    directory table (delivered only if it commits, like any NOTIFY)."""

    @event.listens_for(engine, "connect")
    def _channel(dbapi_conn: Any, record: Any) -> None:
        with dbapi_conn.cursor() as cur:
            cur.execute("SELECT current_database(), current_schema()")
            database, schema = cur.fetchone()
        dbapi_conn.rollback()
        record.info["gd_dir_channel"] = channel("dir", database, schema or "")

    @event.listens_for(engine, "after_cursor_execute")
    def _written(conn: Any, _cur: Any, statement: str, *_a: Any) -> None:
        m = _WRITE.match(statement)
        if m and m.group(1).lower() in DIRECTORY_TABLES:
            conn.info["gd_dir_dirty"] = True

    @event.listens_for(engine, "commit")
    def _commit(conn: Any) -> None:
        if not conn.info.pop("gd_dir_dirty", False):
            return
        name = conn.info.get("gd_dir_channel")
        if name:
            with conn.connection.dbapi_connection.cursor() as cur:
                cur.execute("SELECT pg_notify(%s, %s)", (name, ORIGIN))

    @event.listens_for(engine, "rollback")
    def _rollback(conn: Any) -> None:
        conn.info.pop("gd_dir_dirty", None)


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite gets WAL, a busy timeout and foreign keys."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        db = parsed.database
        if db and db != ":memory:":
            Path(db).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    # No pre-ping (one round trip per request on the ingest path); recycle instead, and a
    # request that meets a dead connection fails with 5xx and the kiosk retries.
    # A fixed pool, no overflow: overflow connections are opened and closed under load, and
    # each is a new PostgreSQL backend (a fork) — measurably slower than waiting for one.
    engine = create_engine(url, pool_size=24, max_overflow=0, pool_timeout=60, pool_recycle=300)
    if parsed.get_backend_name() == "postgresql":
        _directory_notify(engine)
    return engine


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def alembic_config(url: str) -> Any:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    # ConfigParser interpolation: a literal % in a URL (e.g. %3D) must be doubled.
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(engine: Engine, revision: str = "head") -> None:
    """``alembic upgrade <revision>`` on ``engine``."""
    from alembic import command

    cfg = alembic_config(engine.url.render_as_string(hide_password=False))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()
