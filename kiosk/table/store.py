"""The kiosk's local log: a SQLite file (WAL) holding what the table saw and what the referee said.

Tables (DESIGN.md: "the event log is the truth"):

* ``observations`` - every observation fed to the referee, in order, with where it came from
  (``source``: the camera/file/simulation; ``screen``: a pass signalled on the screen;
  ``referee``: a referee's correction, void, foul or deal start). Append-only.
* ``events`` - every event the referee emitted, with the index of the observation that caused
  it. Append-only (triggers refuse UPDATE and DELETE).
* ``outbox`` - one row per event: delivery state to the central scoreboard (mutable).
* ``notes`` - append-only kiosk notes that are not game events: seating (pairs at seats), a
  referee's confirmation of a play, PIN lockouts.
* ``meta`` - table id, profile, schema version.

One observation and all the events it caused are written in ONE transaction: after a crash
(kill -9, power loss) the log holds whole steps only, so replaying the logged observations
through a fresh :class:`engine.referee.Referee` gives exactly the logged events (ids are UUID5s
of table and seq) and the source resumes after the last logged source observation.

Writes go through :meth:`EventLog.append`; ``fault`` is a seam for tests: a callable run inside
the transaction before COMMIT that may raise (e.g. ``OSError(errno.ENOSPC)`` for a full disk).
"""

from __future__ import annotations

import errno
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.events import Event, dump_event, parse_event
from engine.observations import Observation, dump_observation, parse_observation

SCHEMA_VERSION = 1
ORIGINS = ("source", "screen", "button", "referee")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS observations (
    idx INTEGER PRIMARY KEY,
    t REAL NOT NULL,
    origin TEXT NOT NULL,
    body TEXT NOT NULL,
    logged_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    deal INTEGER NOT NULL,
    t REAL NOT NULL,
    obs_idx INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY,
    status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    sent_at REAL
);
CREATE INDEX IF NOT EXISTS outbox_status ON outbox(status, seq);
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS events_append_only_u BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only: add a correction instead'); END;
CREATE TRIGGER IF NOT EXISTS events_append_only_d BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only: add a correction instead'); END;
CREATE TRIGGER IF NOT EXISTS obs_append_only_u BEFORE UPDATE ON observations
BEGIN SELECT RAISE(ABORT, 'the observation log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS obs_append_only_d BEFORE DELETE ON observations
BEGIN SELECT RAISE(ABORT, 'the observation log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS notes_append_only_u BEFORE UPDATE ON notes
BEGIN SELECT RAISE(ABORT, 'notes are append-only'); END;
"""


class StoreError(ValueError):
    """The log cannot be used (another table's log, a newer schema, a corrupt file)."""


class DiskFull(OSError):
    """The disk is full: nothing of this step was written; the log is intact."""

    def __init__(self, detail: str) -> None:
        super().__init__(errno.ENOSPC, detail)


def is_disk_full(exc: BaseException) -> bool:
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return True
    if isinstance(exc, sqlite3.OperationalError | sqlite3.DatabaseError):
        text = str(exc).lower()
        return "disk is full" in text or "database or disk is full" in text
    return False


@dataclass(frozen=True)
class LoggedObservation:
    idx: int
    origin: str
    obs: Observation


class EventLog:
    """The SQLite log. Thread-safe: one connection per thread, writes serialised by a lock."""

    def __init__(self, path: str | Path, *, table: str, profile: str) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise StoreError(f"--db {self.path} is a directory; give a file path like kiosk.db")
        if not self.path.parent.exists():
            raise StoreError(f"--db {self.path}: the folder {self.path.parent} does not exist")
        self.table = table
        self.profile = profile
        self._local = threading.local()
        self._lock = threading.Lock()
        #: test seam: called inside the write transaction, before COMMIT
        self.fault: Callable[[str], None] | None = None
        conn = self._conn()
        try:
            conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a usable kiosk log: {exc}") from exc
        self._check_meta(conn)

    # ------------------------------------------------------------------ connections
    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    @contextmanager
    def _tx(self, what: str) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        with self._lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                if self.fault is not None:
                    self.fault(what)
                conn.execute("COMMIT")
            except BaseException as exc:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                if is_disk_full(exc):
                    raise DiskFull(f"disk full while writing {what}: nothing written") from exc
                raise

    def _check_meta(self, conn: sqlite3.Connection) -> None:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        if not meta:
            with self._tx("meta") as c:
                c.executemany(
                    "INSERT INTO meta(key, value) VALUES (?, ?)",
                    [
                        ("schema", str(SCHEMA_VERSION)),
                        ("table", self.table),
                        ("profile", self.profile),
                        ("created", str(time.time())),
                    ],
                )
            return
        if int(meta.get("schema", "0")) > SCHEMA_VERSION:
            raise StoreError(f"{self.path} was written by a newer kiosk (schema {meta['schema']})")
        if meta.get("table") != self.table:
            raise StoreError(
                f"{self.path} is the log of table {meta.get('table')!r}, not {self.table!r}: "
                "use --table {meta.get('table')} or another --db file"
            )
        if meta.get("profile") != self.profile:
            raise StoreError(
                f"{self.path} was recorded under profile {meta.get('profile')!r}, not "
                f"{self.profile!r}: use --profile {meta.get('profile')} or another --db file"
            )

    # ------------------------------------------------------------------ writes
    def append(
        self, origin: str, obs: Observation, events: Sequence[Event], *, deliverable: set[str]
    ) -> int:
        """Log one observation and the events it produced, atomically; returns its index."""
        if origin not in ORIGINS:
            raise ValueError(f"origin {origin!r}: one of {ORIGINS}")
        now = time.time()
        with self._tx("an observation and its events") as c:
            row = c.execute("SELECT COALESCE(MAX(idx), -1) + 1 FROM observations").fetchone()
            idx = int(row[0])
            c.execute(
                "INSERT INTO observations(idx, t, origin, body, logged_at) VALUES (?,?,?,?,?)",
                (idx, obs.t, origin, dump_observation(obs), now),
            )
            top = int(c.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0])
            for ev in events:
                if ev.seq != top + 1:
                    raise StoreError(f"event seq {ev.seq} does not follow the log's {top}")
                top = ev.seq
                c.execute(
                    "INSERT INTO events(seq, id, type, deal, t, obs_idx, body) "
                    "VALUES (?,?,?,?,?,?,?)",
                    (ev.seq, ev.id, ev.type, ev.deal, ev.t, idx, dump_event(ev)),
                )
                status = "pending" if ev.type in deliverable else "local"
                c.execute("INSERT INTO outbox(seq, status) VALUES (?, ?)", (ev.seq, status))
        return idx

    def note(self, kind: str, body: dict[str, Any]) -> None:
        with self._tx("a note") as c:
            c.execute(
                "INSERT INTO notes(at, kind, body) VALUES (?,?,?)",
                (time.time(), kind, json.dumps(body, ensure_ascii=False)),
            )

    # ------------------------------------------------------------------ reads
    def observations(self) -> list[LoggedObservation]:
        rows = self._conn().execute("SELECT idx, origin, body FROM observations ORDER BY idx")
        return [
            LoggedObservation(int(i), str(o), parse_observation(b, where=f"log observation {i}"))
            for i, o, b in rows
        ]

    def source_count(self) -> int:
        row = self._conn().execute("SELECT COUNT(*) FROM observations WHERE origin = 'source'")
        return int(row.fetchone()[0])

    def last_t(self) -> float:
        row = self._conn().execute("SELECT COALESCE(MAX(t), 0) FROM observations").fetchone()
        return float(row[0])

    def events(self, after_seq: int = 0) -> list[Event]:
        rows = self._conn().execute(
            "SELECT body FROM events WHERE seq > ? ORDER BY seq", (after_seq,)
        )
        return [parse_event(b, where="log event") for (b,) in rows]

    def event_count(self) -> int:
        return int(self._conn().execute("SELECT COUNT(*) FROM events").fetchone()[0])

    def event_bodies(self, seqs: Iterable[int]) -> dict[int, str]:
        seqs = list(seqs)
        out: dict[int, str] = {}
        conn = self._conn()
        for i in range(0, len(seqs), 500):
            chunk = seqs[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for seq, body in conn.execute(
                f"SELECT seq, body FROM events WHERE seq IN ({marks})", chunk
            ):
                out[int(seq)] = str(body)
        return out

    def notes(self, kind: str | None = None) -> list[tuple[float, str, dict[str, Any]]]:
        q = "SELECT at, kind, body FROM notes"
        args: tuple[Any, ...] = ()
        if kind is not None:
            q += " WHERE kind = ?"
            args = (kind,)
        rows = self._conn().execute(q + " ORDER BY id", args)
        return [(float(a), str(k), json.loads(b)) for a, k, b in rows]

    # ------------------------------------------------------------------ outbox
    def outbox_pending(self, limit: int) -> list[tuple[int, str]]:
        rows = self._conn().execute(
            "SELECT o.seq, e.body FROM outbox o JOIN events e ON e.seq = o.seq "
            "WHERE o.status = 'pending' ORDER BY o.seq LIMIT ?",
            (limit,),
        )
        return [(int(s), str(b)) for s, b in rows]

    def outbox_mark(self, seqs: Sequence[int], status: str, error: str | None = None) -> None:
        if not seqs:
            return
        now = time.time()
        with self._tx("outbox state") as c:
            for i in range(0, len(seqs), 500):
                chunk = list(seqs[i : i + 500])
                marks = ",".join("?" * len(chunk))
                c.execute(
                    f"UPDATE outbox SET status = ?, attempts = attempts + 1, last_error = ?, "
                    f"sent_at = CASE WHEN ? = 'sent' THEN ? ELSE sent_at END "
                    f"WHERE seq IN ({marks})",
                    [status, error, status, now, *chunk],
                )

    def outbox_requeue(self, seqs: Sequence[int]) -> int:
        """Seqs the scoreboard says it lacks: back to pending (only deliverable ones)."""
        n = 0
        with self._tx("outbox requeue") as c:
            for i in range(0, len(seqs), 500):
                chunk = list(seqs[i : i + 500])
                marks = ",".join("?" * len(chunk))
                cur = c.execute(
                    f"UPDATE outbox SET status = 'pending' WHERE status = 'sent' "
                    f"AND seq IN ({marks})",
                    chunk,
                )
                n += cur.rowcount
        return n

    def outbox_retype(self, deliverable: set[str]) -> None:
        """The scoreboard's accepted event types are known: local rows of those types become
        pending (and pending rows of other types local)."""
        marks = ",".join("?" * len(deliverable)) or "''"
        types = list(deliverable)
        with self._tx("outbox types") as c:
            c.execute(
                f"UPDATE outbox SET status = 'pending' WHERE status = 'local' AND seq IN "
                f"(SELECT seq FROM events WHERE type IN ({marks}))",
                types,
            )
            c.execute(
                f"UPDATE outbox SET status = 'local' WHERE status = 'pending' AND seq IN "
                f"(SELECT seq FROM events WHERE type NOT IN ({marks}))",
                types,
            )

    def outbox_counts(self) -> dict[str, int]:
        rows = self._conn().execute("SELECT status, COUNT(*) FROM outbox GROUP BY status")
        out = {"pending": 0, "sent": 0, "local": 0, "rejected": 0}
        out.update({str(s): int(n) for s, n in rows})
        return out

    def outbox_rejected(self, limit: int = 5) -> list[tuple[int, str]]:
        rows = self._conn().execute(
            "SELECT seq, COALESCE(last_error, '') FROM outbox WHERE status = 'rejected' "
            "ORDER BY seq LIMIT ?",
            (limit,),
        )
        return [(int(s), str(e)) for s, e in rows]

    def outbox_seqs(self, status: str) -> list[int]:
        rows = self._conn().execute(
            "SELECT seq FROM outbox WHERE status = ? ORDER BY seq", (status,)
        )
        return [int(s) for (s,) in rows]

    def local_seqs(self) -> set[int]:
        rows = self._conn().execute("SELECT seq FROM outbox WHERE status = 'local'")
        return {int(s) for (s,) in rows}
