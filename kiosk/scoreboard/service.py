"""Database operations behind the API, the admin pages and the CLI (sync SQLAlchemy sessions)."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import secrets
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import (
    Connection,
    CursorResult,
    and_,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from kiosk.scoreboard import formats
from kiosk.scoreboard.fold import (
    RESULT_TYPES,
    TEAM_OF,
    MatchSummary,
    TableState,
    match_summary,
    table_state,
)
from kiosk.scoreboard.models import (
    Deal,
    EventRow,
    GameTable,
    Match,
    MatchDecision,
    Pair,
    Round,
    RoundChange,
    Tournament,
    utcnow,
)
from kiosk.scoreboard.schemas import EventBase, IngestResult, MissingSeqs, event_body
from kiosk.scoreboard.standings import (
    LEVEL_VALUE,
    PROFILES,
    MatchInput,
    MatchPoints,
    Pairing,
    Standing,
    StandingsError,
    decision,
    match_points,
    swiss_pairings,
)
from kiosk.scoreboard.standings import standings as rank_pairs

MISSING_LIST_LIMIT = 1000


class ApiError(Exception):
    """An error with an HTTP status and a message saying what was wrong and what to do."""

    def __init__(self, status: int, detail: Any) -> None:
        super().__init__(detail if isinstance(detail, str) else json.dumps(detail))
        self.status = status
        self.detail = detail


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def new_token() -> str:
    return "gdt_" + secrets.token_urlsafe(24)


def canonical(body: dict[str, Any]) -> str:
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _bad_text(value: Any, path: str) -> str | None:
    """Path of the first string with a NUL or an unpaired surrogate (unstorable), else None."""
    if isinstance(value, str):
        if "\x00" in value:
            return path
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            bad = _bad_text(k, f"{path}.<key>") or _bad_text(v, f"{path}.{k}")
            if bad:
                return bad
    if isinstance(value, list):
        for i, v in enumerate(value):
            bad = _bad_text(v, f"{path}[{i}]")
            if bad:
                return bad
    return None


# ----------------------------------------------------------------------------- directory


class Directory:
    """Cached lookups the ingestion path needs on every request: token -> table, table ->
    tournament, table -> current match. Reloaded when older than ``ttl`` seconds — in a
    background thread, answering from the loaded copy meanwhile, so the event loop never waits
    for the query — and before the next lookup when this process changed them
    (``invalidate``) or when the copy is older than ``max_stale`` seconds."""

    def __init__(
        self, sf: sessionmaker[Session], ttl: float = 2.0, max_stale: float = 30.0
    ) -> None:
        self._sf = sf
        self._ttl = ttl
        self._max_stale = max_stale
        self._lock = threading.Lock()  # one synchronous reload at a time
        self._swap = threading.Lock()  # guards the tickets and the swap of the maps
        self._loaded = 0.0  # monotonic time the loaded copy was read (0: reload before use)
        self._tickets = 0  # reloads started
        self._applied = 0  # the newest reload whose result is in use
        self._invalidated = 0  # ticket count when invalidate() was last called
        self._background: threading.Thread | None = None
        self.by_token: dict[str, str] = {}
        self.tournament_of: dict[str, int] = {}
        #: table key -> its code (the ``table`` field of its events); code -> table keys
        self.code_of: dict[str, str] = {}
        self.by_code: dict[str, list[str]] = {}
        self.current_match: dict[str, int] = {}
        #: the matches of the open rounds: one ending leaves its table's current match as it is
        self.open_round_matches: frozenset[int] = frozenset()
        #: match id -> its table (None for a bye); facts that never change, loaded on demand
        self.match_table: dict[int, str | None] = {}

    def invalidate(self) -> None:
        with self._swap:
            self._loaded = 0.0
            self._invalidated = self._tickets

    def refresh_soon(self) -> None:
        """Reload in the background at the next lookup (answering from the loaded copy until
        then): for changes that only move a table's current match (another process stored a
        match's end), where a few ms of the old copy do no harm but a reload on the event loop
        at every such change would."""
        with self._swap:
            if self._loaded:
                self._loaded = min(self._loaded, time.monotonic() - self._ttl)

    def _reload(self) -> None:
        with self._swap:
            self._tickets += 1
            ticket = self._tickets
        started = time.monotonic()
        with self._sf() as s:
            tables = s.execute(
                select(GameTable.id, GameTable.token_hash, GameTable.tournament_id, GameTable.code)
            ).all()
            # Events without match_id (older kiosks) go to the table's match in the open round,
            # or to an earlier match the organiser let go on ("wait") until it has finished.
            open_matches = s.execute(
                select(Match.table_id, Match.id, Round.status)
                .join(Round, Match.round_id == Round.id)
                .where(
                    Match.table_id.is_not(None),
                    or_(
                        Round.status == "open",
                        and_(Match.decision == "wait", Match.status != "finished"),
                    ),
                )
                .order_by(Round.number.desc())
            ).all()
        with self._swap:
            if ticket <= self._applied:
                return  # a reload that started later has already been applied
            self._applied = ticket
            self.by_token = {h: tid for tid, h, _, _ in tables}
            self.tournament_of = {tid: tour for tid, _, tour, _ in tables}
            self.code_of = {tid: code for tid, _, _, code in tables}
            by_code: dict[str, list[str]] = {}
            for tid, _, _, code in tables:
                by_code.setdefault(code, []).append(tid)
            self.by_code = by_code
            # Rows come latest round first: the earliest round's match is kept.
            self.current_match = {tid: mid for tid, mid, _ in open_matches if tid is not None}
            self.open_round_matches = frozenset(
                int(mid) for _, mid, status in open_matches if status == "open"
            )
            # The open matches' tables are known from here on: without this, the first event
            # of every match made since the last reload looked its match up on its own (a
            # query per table, off the loop), and at a round's start 1,000 tables queued
            # 1,000 lookups in the thread pool: the load bench's round p99 went 18 ms -> 1.4 s
            # (2026-12-05) when its events began to carry match_id.
            for tid, mid, _ in open_matches:
                self.match_table.setdefault(int(mid), tid)
            # Fresh only if no invalidate() came after this reload started reading.
            if self._invalidated < ticket:
                self._loaded = started

    def _reload_in_background(self) -> None:
        try:
            self._reload()
        except Exception:  # noqa: BLE001 - the next lookup retries (synchronously when too old)
            logging.getLogger("guandan.scoreboard").exception("directory reload failed")
        finally:
            self._background = None

    def _refresh(self) -> None:
        age = time.monotonic() - self._loaded
        if age < self._ttl:
            return
        if self._loaded and age < self._max_stale:
            if self._background is None:
                self._background = threading.Thread(
                    target=self._reload_in_background, name="directory-reload", daemon=True
                )
                self._background.start()
            return
        with self._lock:
            if time.monotonic() - self._loaded < self._ttl:
                return
            self._reload()

    def table_for_token(self, token: str) -> str | None:
        self._refresh()
        return self.by_token.get(hash_token(token))

    def has_table(self, table: str) -> bool:
        """A table of that key or code exists (reloads once when not: made just now?)."""
        self._refresh()
        if table in self.tournament_of or table in self.by_code:
            return True
        self.invalidate()  # made by another process just now?
        self._refresh()
        return table in self.tournament_of or table in self.by_code

    def code(self, table: str) -> str:
        """The code (the events' ``table`` field) of the table with key ``table``."""
        return self.code_of.get(table, table)

    def resolve(self, name: str, token_table: str | None = None) -> str | None:
        """The key of the table a URL names: by its key, or by its code (the caller's own
        table when its token is one, else the only table of that code). None: unknown or
        ambiguous (use the key)."""
        self._refresh()
        if token_table is not None and self.code(token_table) == name:
            return token_table
        if name in self.tournament_of:
            return name
        keys = self.by_code.get(name, [])
        if not keys:
            self.invalidate()
            self._refresh()
            if name in self.tournament_of:
                return name
            keys = self.by_code.get(name, [])
        return keys[0] if len(keys) == 1 else None

    def moves_current(self, ended: Iterable[int | None]) -> bool:
        """Whether matches that just ended (``match_ended`` stored) can change a table's current
        match: only a match let go on from a closed round (``wait``) leaves the table's queue
        when it ends; a match of an open round stays its table's current match, finished or
        not, so its end needs no reload (at a round's end that was a reload of the whole
        directory, on the event loop, for every table)."""
        known = self.open_round_matches
        return any(mid is None or mid not in known for mid in ended)

    def match_for(self, table: str) -> int | None:
        self._refresh()
        return self.current_match.get(table)

    def load_matches(self, ids: Iterable[int]) -> None:
        """Learn the tables of matches not seen yet (a database query; off the event loop)."""
        wanted = sorted({i for i in ids if i not in self.match_table})
        if not wanted:
            return
        with self._sf() as s:
            found = dict(
                s.execute(select(Match.id, Match.table_id).where(Match.id.in_(wanted))).all()
            )
        for mid, table in found.items():
            self.match_table[int(mid)] = table


# ----------------------------------------------------------------------------- ingestion


@dataclass
class IngestOutcome:
    result: IngestResult
    new_bodies: list[dict[str, Any]] = field(default_factory=list)
    rebuilt_matches: set[int] = field(default_factory=set)
    tournament: int | None = None
    #: ``new_bodies`` as JSON text (their canonical text with ``_match``), for the
    #: notifications to the other processes: the bodies are not serialised a second time
    new_texts: list[str] | None = None


def body_text(row: Mapping[str, Any]) -> str:
    """A stored row's body as JSON text with its ``_match``, as ``new_bodies`` holds it: the
    canonical text (a JSON object, never empty) with the member added at the end."""
    mid = row["match_id"]
    return f'{row["_text"][:-1]},"_match":{"null" if mid is None else int(mid)}}}'


def check_tables(directory: Directory, auth_table: str, events: Sequence[EventBase]) -> None:
    """404 when an event names a table the scoreboard does not know; 403 when it names another
    table than the token's. May reload the directory (a database query) for an unknown table."""
    own = directory.code(auth_table)
    for ev in events:
        if ev.table == own:
            continue
        if not directory.has_table(ev.table):
            raise ApiError(
                404,
                f"event {ev.id!r} is for unknown table {ev.table!r}: register the table on the "
                "scoreboard first (admin page, POST /api/v1/tournaments/{id}/tables or "
                "`guandan scoreboard add-table`)",
            )
        raise ApiError(
            403,
            f"event {ev.id!r} is for table {ev.table!r} but the token is table "
            f"{own!r}'s: a table can only write its own events",
        )


def needs_match_lookup(directory: Directory, events: Sequence[EventBase]) -> bool:
    known = directory.match_table
    return any(ev.match_id is not None and ev.match_id not in known for ev in events)


def check_matches(directory: Directory, auth_table: str, events: Sequence[EventBase]) -> None:
    """409 when an event names a match that is not its table's (or no match at all): nothing of
    the request is stored and the kiosk keeps the events (its outbox says why). May query the
    database for matches not seen yet (call it off the event loop then)."""
    if needs_match_lookup(directory, events):
        directory.load_matches(ev.match_id for ev in events if ev.match_id is not None)
    conflicts: list[dict[str, Any]] = []
    for ev in events:
        mid = ev.match_id
        if mid is None:
            continue
        if mid not in directory.match_table:
            conflicts.append(
                {
                    "id": ev.id,
                    "reason": f"there is no match {mid} on this scoreboard: the event was "
                    f"assigned to a match of another scoreboard or database; check GET "
                    f"/api/v1/tables/{auth_table}/assignment (此计分中心没有第 {mid} 场比赛)",
                }
            )
        elif directory.match_table[mid] != auth_table:
            other = directory.match_table[mid]
            conflicts.append(
                {
                    "id": ev.id,
                    "reason": f"match {mid} is played at table {other!r}, not at table "
                    f"{auth_table!r}: a table's events can only go to its own matches; check "
                    f"the kiosk's table id and GET /api/v1/tables/{auth_table}/assignment "
                    f"(第 {mid} 场比赛不属于本桌)",
                }
            )
    if conflicts:
        raise ApiError(
            409,
            {
                "message": "events for a match that is not this table's, nothing stored: "
                "the kiosk keeps them; fix the table or the match assignment and resend "
                "(事件所属比赛不属于本桌，未保存)",
                "conflicts": conflicts,
            },
        )


def prepare_rows(
    events: Sequence[EventBase], table: str | None = None
) -> dict[str, dict[str, Any]]:
    """The rows to store, by event id in request order (canonical JSON text and its digest),
    filed under the table key ``table`` (default: the events' ``table`` field):
    422 for text PostgreSQL/SQLite cannot store, 409 for an id or a seq twice in the request
    with different content. A repeated identical event is kept once."""
    rows: dict[str, dict[str, Any]] = {}
    by_seq: dict[int, str] = {}
    conflicts: list[dict[str, Any]] = []
    for ev in events:
        body = event_body(ev)
        text = canonical(body)
        try:
            raw = text.encode("utf-8")
        except UnicodeEncodeError:  # an unpaired surrogate somewhere
            raw = b""
        # The canonical text shows both unstorable cases: a NUL is written \u0000, a surrogate
        # does not encode. Only then is the body walked, to name the field.
        if not raw or "\\u0000" in text:
            bad = _bad_text(body, "event")
            if bad:
                raise ApiError(
                    422,
                    f"event {ev.id!r}: field {bad} holds a NUL character or an unpaired "
                    "surrogate; send valid UTF-8 text",
                )
        digest = hashlib.sha256(raw).hexdigest()
        if ev.id in rows:
            if rows[ev.id]["digest"] != digest:
                conflicts.append(
                    {
                        "id": ev.id,
                        "reason": "the id appears twice in the batch with different content",
                    }
                )
            continue
        if ev.seq in by_seq:
            conflicts.append(
                {
                    "id": ev.id,
                    "reason": f"seq {ev.seq} appears twice in the batch ({by_seq[ev.seq]!r} too)",
                }
            )
            continue
        by_seq[ev.seq] = ev.id
        explicit_round = body.get("round")
        rows[ev.id] = {
            "id": ev.id,
            "table_id": table or ev.table,
            "seq": ev.seq,
            "deal": ev.deal,
            "t": ev.t,
            "type": body["type"],
            "body": body,
            "digest": digest,
            "_text": text,
            "_round": explicit_round if isinstance(explicit_round, int) else None,
            "_match": ev.match_id,
        }
    if conflicts:
        raise ApiError(409, _conflict_detail(conflicts))
    return rows


def ingest(
    sf: sessionmaker[Session], directory: Directory, auth_table: str, events: Sequence[EventBase]
) -> IngestOutcome:
    """Store the events of one table exactly once. All or nothing: a conflict stores nothing.

    404: an event names a table the scoreboard does not know. 403: an event of another table.
    409: an id already stored with different content, or a seq already taken by another id.
    """
    check_tables(directory, auth_table, events)
    check_matches(directory, auth_table, events)
    return store_rows(sf, directory, auth_table, prepare_rows(events, auth_table))


def store_rows(
    sf: sessionmaker[Session],
    directory: Directory,
    auth_table: str,
    rows: dict[str, dict[str, Any]],
) -> IngestOutcome:
    """Store ``prepare_rows``' rows of one table in one transaction (sync, one request)."""
    last_exc: Exception | None = None
    for _attempt in range(4):
        try:
            return _ingest_once(sf, directory, auth_table, rows)
        except IntegrityError as exc:  # a concurrent request stored some of them first
            last_exc = exc
            continue
    raise ApiError(503, f"could not store the events after retries ({last_exc}); retry later")


def _conflict_detail(conflicts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "message": "conflicting events, nothing stored: an event id must always carry the same "
        "content and a seq belongs to one event; check the kiosk's event log",
        "conflicts": conflicts,
    }


class _Conflict(Exception):
    def __init__(self, conflicts: list[dict[str, Any]]) -> None:
        self.conflicts = conflicts


_EVENT_COLS = (
    "id",
    "table_id",
    "seq",
    "deal",
    "t",
    "type",
    "match_id",
    "body",
    "digest",
    "received_at",
)


def _param(conn: Connection, name: str) -> str:
    return f"%({name})s" if conn.dialect.name == "postgresql" else f":{name}"


def _insert_events(conn: Connection, rows: list[dict[str, Any]]) -> set[str]:
    """One ``INSERT ... VALUES (...), ... ON CONFLICT DO NOTHING RETURNING id`` in driver SQL
    (the ORM's per-statement overhead was most of the ingest time); returns the ids stored."""
    pg = conn.dialect.name == "postgresql"
    now = utcnow() if pg else utcnow().strftime("%Y-%m-%d %H:%M:%S.%f")
    values = []
    params: dict[str, Any] = {"now": now}
    for i, r in enumerate(rows):
        ph = []
        for col in _EVENT_COLS:
            key = f"{col}{i}"
            if col == "received_at":
                ph.append(_param(conn, "now"))
                continue
            val = r[col]
            if col == "body":
                val = r["_text"]
                ph.append(f"CAST({_param(conn, key)} AS json)" if pg else _param(conn, key))
            else:
                ph.append(_param(conn, key))
            params[key] = val
        values.append("(" + ", ".join(ph) + ")")
    sql = (
        f"INSERT INTO event ({', '.join(_EVENT_COLS)}) VALUES {', '.join(values)} "
        "ON CONFLICT DO NOTHING RETURNING id"
    )
    return {row[0] for row in conn.exec_driver_sql(sql, params)}


_PG_CASTS = {
    "id": "text",
    "table_id": "text",
    "seq": "bigint",
    "deal": "integer",
    "t": "double precision",
    "type": "text",
    "match_id": "integer",
    "body": "json",
    "digest": "text",
    "received_at": "timestamptz",
}


@dataclass
class _PgInsert:
    inserted: set[str]
    clashes: list[dict[str, Any]]
    count_before: int
    max_before: int


def _pg_insert(conn: Connection, rows: list[dict[str, Any]], table: str) -> _PgInsert:
    """PostgreSQL: one statement checks for conflicts, inserts (all or nothing) and reads the
    table's seq count/max — one round trip, atomic even in autocommit mode. Every CTE sees the
    same snapshot, so count/max are from before the insert."""
    params: dict[str, Any] = {"t": table, "now": utcnow()}
    values = []
    for i, r in enumerate(rows):
        ph = []
        for col in _EVENT_COLS:
            if col == "received_at":
                ph.append("%(now)s::timestamptz")
                continue
            key = f"{col}{i}"
            params[key] = r["_text"] if col == "body" else r[col]
            ph.append(f"%({key})s::{_PG_CASTS[col]}")
        values.append("(" + ", ".join(ph) + ")")
    cols = ", ".join(_EVENT_COLS)
    sql = f"""
WITH v ({cols}) AS (VALUES {", ".join(values)}),
clash AS (
  SELECT v.id AS id, 'content' AS why, e.id AS other FROM v JOIN event e
    ON e.table_id = v.table_id AND e.id = v.id
   WHERE e.digest <> v.digest
  UNION ALL
  SELECT v.id, 'seq', e.id FROM v JOIN event e ON e.table_id = v.table_id AND e.seq = v.seq
   WHERE e.id <> v.id
),
ins AS (
  INSERT INTO event ({cols}) SELECT {cols} FROM v WHERE NOT EXISTS (SELECT 1 FROM clash)
  ON CONFLICT DO NOTHING RETURNING id
),
agg AS (SELECT count(seq) AS c, max(seq) AS m FROM event WHERE table_id = %(t)s AND seq >= 1)
SELECT 'i'::text, id, NULL::text, NULL::text, NULL::bigint FROM ins
UNION ALL SELECT 'c'::text, id, why, other, NULL::bigint FROM clash
UNION ALL SELECT 'a'::text, NULL::text, NULL::text, c::text, m FROM agg
"""
    out = _PgInsert(set(), [], 0, 0)
    for kind, eid, why, other, top in conn.exec_driver_sql(sql, params):
        if kind == "i":
            out.inserted.add(eid)
        elif kind == "c":
            seq = next((r["seq"] for r in rows if r["id"] == eid), None)
            reason = (
                "already stored with different content"
                if why == "content"
                else f"seq {seq} of table {table!r} is event {other!r}"
            )
            out.clashes.append({"id": eid, "reason": reason})
        else:
            out.count_before = int(other or 0)
            out.max_before = int(top or 0)
    return out


def _count_max(conn: Connection, table: str) -> tuple[int, int]:
    sql = (
        f"SELECT count(seq), max(seq) FROM event WHERE table_id = {_param(conn, 't')} AND seq >= 1"
    )
    count, top = conn.exec_driver_sql(sql, {"t": table}).one()
    return int(count or 0), int(top or 0)


def _ingest_once(
    sf: sessionmaker[Session],
    directory: Directory,
    table: str,
    rows: dict[str, dict[str, Any]],
) -> IngestOutcome:
    # PostgreSQL: one statement (conflict check + insert + seq count/max), in autocommit mode
    # unless a result-bearing event needs the match re-derived in the same transaction.
    # SQLite: INSERT ... ON CONFLICT DO NOTHING RETURNING id, then classify what it skipped.
    engine = sf.kw["bind"]
    pg = engine.dialect.name == "postgresql"
    rebuilt: set[int] = set()
    tournament = directory.tournament_of.get(table)
    ordered = sorted(rows.values(), key=lambda r: r["seq"])
    default_match = directory.match_for(table)
    explicit: dict[int, int | None] = {}
    to_insert = []
    with engine.connect() as conn:
        for r in ordered:
            rnd = r["_round"]
            if r["_match"] is not None:  # checked against the table (check_matches)
                match_id = r["_match"]
            elif rnd is None:
                match_id = default_match
            else:
                if rnd not in explicit:
                    explicit[rnd] = conn.execute(
                        select(Match.id)
                        .join(Round, Match.round_id == Round.id)
                        .where(Match.table_id == table, Round.number == rnd)
                    ).scalar_one_or_none()
                match_id = explicit[rnd]
            r["match_id"] = match_id
            to_insert.append({k: v for k, v in r.items() if k not in ("_round", "_match")})
        if conn.in_transaction():
            conn.rollback()
        needs_tx = not pg or any(
            r["match_id"] is not None and r["type"] in RESULT_TYPES for r in to_insert
        )
        if not needs_tx:
            conn.execution_options(isolation_level="AUTOCOMMIT")
        counted: tuple[int, int] | None = None
        if pg:
            res = _pg_insert(conn, to_insert, table)
            if res.clashes:
                if conn.in_transaction():
                    conn.rollback()
                raise ApiError(409, _conflict_detail(res.clashes))
            inserted = res.inserted
            new_seqs = [r["seq"] for r in to_insert if r["id"] in inserted and r["seq"] >= 1]
            counted = (
                res.count_before + len(new_seqs),
                max([res.max_before, *new_seqs]),
            )
        else:
            inserted = _insert_events(conn, to_insert)
        duplicates: list[str] = []
        if len(inserted) < len(to_insert):
            skipped = [r for r in to_insert if r["id"] not in inserted]
            stored = dict(
                conn.execute(
                    select(EventRow.id, EventRow.digest).where(
                        EventRow.table_id == table,
                        EventRow.id.in_([r["id"] for r in skipped]),
                    )
                ).all()
            )
            conflicts: list[dict[str, Any]] = []
            for r in skipped:
                if r["id"] not in stored:
                    other = conn.execute(
                        select(EventRow.id).where(
                            EventRow.table_id == table, EventRow.seq == r["seq"]
                        )
                    ).scalar_one_or_none()
                    conflicts.append(
                        {
                            "id": r["id"],
                            "reason": f"seq {r['seq']} of table {table!r} is event {other!r}",
                        }
                    )
                elif stored[r["id"]] != r["digest"]:
                    conflicts.append(
                        {"id": r["id"], "reason": "already stored with different content"}
                    )
                else:
                    duplicates.append(r["id"])
            if conflicts:
                if conn.in_transaction():
                    conn.rollback()
                raise ApiError(409, _conflict_detail(conflicts))
        new = [r for r in to_insert if r["id"] in inserted]
        for r in new:
            if r["match_id"] is not None and r["type"] in RESULT_TYPES:
                rebuilt.add(r["match_id"])
        for mid in sorted(rebuilt):
            rebuild_match(conn, mid)
        # Gap check inside the transaction: it sees this request's rows, saves round trips.
        missing = missing_seqs(conn, table, counted)
        if conn.in_transaction():
            conn.commit()
    result = IngestResult(
        table=table,
        accepted=[eid for eid in rows if eid in inserted],
        duplicates=[eid for eid in rows if eid in set(duplicates)],
        max_seq=missing.max_seq,
        missing=missing.missing,
        missing_count=missing.missing_count,
    )
    return IngestOutcome(
        result=result,
        new_bodies=[dict(r["body"], _match=r["match_id"]) for r in new],
        rebuilt_matches=rebuilt,
        tournament=tournament,
        new_texts=[body_text(r) for r in new],
    )


def gaps(stored: Iterable[int]) -> list[int]:
    """The first ``MISSING_LIST_LIMIT`` seqs from 1 up that ``stored`` (ascending) lacks."""
    missing: list[int] = []
    expect = 1
    for seq in stored:
        while expect < seq and len(missing) < MISSING_LIST_LIMIT:
            missing.append(expect)
            expect += 1
        expect = seq + 1
        if len(missing) >= MISSING_LIST_LIMIT:
            break
    return missing


def missing_seqs(
    s: Session | Connection, table: str, counted: tuple[int, int] | None = None
) -> MissingSeqs:
    """Seqs 1..max not stored for ``table`` (seq 0, if a kiosk uses it, is never required).
    ``counted``: (count, max) when the caller knows them already."""
    conn = s if isinstance(s, Connection) else s.connection()
    count, top = counted if counted is not None else _count_max(conn, table)
    missing: list[int] = []
    if count < top:
        missing = gaps(
            s.execute(
                select(EventRow.seq)
                .where(EventRow.table_id == table, EventRow.seq >= 1)
                .order_by(EventRow.seq)
            ).scalars()
        )
    return MissingSeqs(
        table=table, max_seq=top, stored=count, missing=missing, missing_count=top - count
    )


def match_values(summary: MatchSummary) -> dict[str, Any]:
    """The derived result columns of a match from its fold."""
    return {
        "status": summary.status,
        "winner": summary.winner,
        "level_ns": summary.levels["NS"],
        "level_ew": summary.levels["EW"],
        "deals_played": summary.deals_played,
        "fouls_ns": summary.fouls["NS"],
        "fouls_ew": summary.fouls["EW"],
    }


def deal_rows(match_id: int, summary: MatchSummary) -> list[dict[str, Any]]:
    """The derived ``deal`` rows of a match from its fold, by deal number."""
    return [
        {
            "match_id": match_id,
            "number": d.number,
            "level": d.level,
            "leader": d.leader,
            "finish_order": "".join(d.order) if d.order else None,
            "level_ns": (d.levels or {}).get("NS"),
            "level_ew": (d.levels or {}).get("EW"),
            "ended": d.ended,
        }
        for d in sorted(summary.deals.values(), key=lambda d: d.number)
    ]


def rebuild_match(s: Session | Connection, match_id: int) -> None:
    """Re-derive a match's deals and result from its events (the fold)."""
    bodies = (
        s.execute(
            select(EventRow.body)
            .where(EventRow.match_id == match_id, EventRow.type.in_(sorted(RESULT_TYPES)))
            .order_by(EventRow.seq)
        )
        .scalars()
        .all()
    )
    summary = match_summary(bodies)
    s.execute(update(Match).where(Match.id == match_id).values(**match_values(summary)))
    s.execute(delete(Deal).where(Deal.match_id == match_id))
    deals = deal_rows(match_id, summary)
    if deals:
        s.execute(insert(Deal), deals)


def load_table_state(s: Session, table: str, match_id: int | None) -> TableState:
    """The live summary of a table: fold over the events of its current match."""
    q = select(EventRow.body).where(EventRow.table_id == table)
    q = (
        q.where(EventRow.match_id == match_id)
        if match_id is not None
        else q.where(EventRow.match_id.is_(None))
    )
    bodies = s.execute(q.order_by(EventRow.seq)).scalars().all()
    return table_state(table, match_id, bodies)


def list_events(s: Session, table: str, after_seq: int, limit: int) -> list[dict[str, Any]]:
    rows = s.execute(
        select(EventRow.body)
        .where(EventRow.table_id == table, EventRow.seq > after_seq)
        .order_by(EventRow.seq)
        .limit(limit)
    ).scalars()
    return list(rows)


# ----------------------------------------------------------------------------- admin


def create_tournament(
    s: Session,
    name: str,
    profile: str,
    lots_seed: int | None,
    format: str = "swiss",
    groups: int | None = None,
    advance: int | None = None,
) -> Tournament:
    """``groups`` / ``advance``: a group stage's groups and the pairs each sends to the
    knockout (``groups_knockout`` only; defaults ``formats.DEFAULT_GROUPS`` / ``_ADVANCE``)."""
    if profile not in PROFILES:
        raise ApiError(
            422, f"unknown profile {profile!r}: use one of {', '.join(PROFILES)} (RULES.md)"
        )
    if format not in formats.FORMATS:
        raise ApiError(422, f"unknown format {format!r}: use one of {', '.join(formats.FORMATS)}")
    if format in formats.GROUP_FORMATS:
        groups = formats.DEFAULT_GROUPS if groups is None else groups
        advance = formats.DEFAULT_ADVANCE if advance is None else advance
        if not 1 <= groups <= 64:
            raise ApiError(422, f"groups {groups}: give 1 to 64 groups (小组数)")
        if not 1 <= advance <= 64:
            raise ApiError(
                422, f"advance {advance}: give 1 to 64 pairs through from each group (出线数)"
            )
    elif groups is not None or advance is not None:
        raise ApiError(
            422,
            f"groups / advance set a group stage: use format {formats.GROUP_FORMATS[0]}, "
            f"or leave them out for {format}",
        )
    seed = lots_seed if lots_seed is not None else secrets.randbits(62)
    t = Tournament(
        name=name, profile=profile, lots_seed=seed, format=format, groups=groups, advance=advance
    )
    s.add(t)
    s.commit()
    return t


def get_tournament(s: Session, tid: int) -> Tournament:
    t = s.get(Tournament, tid)
    if t is None:
        raise ApiError(404, f"no tournament {tid}: list them with GET /api/v1/tournaments")
    return t


def add_pair(
    s: Session, tid: int, name: str, players: str = "", club: str = "", number: int | None = None
) -> Pair:
    get_tournament(s, tid)
    if number is None:
        top = s.execute(select(func.max(Pair.number)).where(Pair.tournament_id == tid)).scalar()
        number = int(top or 0) + 1
    elif s.execute(select(Pair.id).where(Pair.tournament_id == tid, Pair.number == number)).first():
        raise ApiError(409, f"pair number {number} is taken in tournament {tid}: pick another")
    p = Pair(tournament_id=tid, number=number, name=name, players=players, club=club)
    s.add(p)
    s.commit()
    return p


def add_table(s: Session, tid: int, table_id: str, name: str = "") -> tuple[GameTable, str]:
    """A table of tournament ``tid`` whose kiosk's events say ``table: table_id`` (its code,
    unique in the tournament; another tournament may have a table of the same code)."""
    get_tournament(s, tid)
    taken = s.execute(
        select(GameTable.id).where(GameTable.tournament_id == tid, GameTable.code == table_id)
    ).first()
    if taken is not None:
        raise ApiError(
            409,
            f"table {table_id!r} exists already in tournament {tid}: rotate its token instead "
            "(本赛事已有此桌)",
        )
    key = table_id
    if s.get(GameTable, key) is not None:  # another tournament's table of that code
        key = f"{table_id}~{tid}"
        if len(key) > 64 or s.get(GameTable, key) is not None:
            raise ApiError(
                409,
                f"table {table_id!r} is another tournament's and the id is too long to share: "
                "give this table a shorter id (桌号过长)",
            )
    token = new_token()
    pos = s.execute(select(func.count(GameTable.id)).where(GameTable.tournament_id == tid)).scalar()
    gt = GameTable(
        id=key,
        code=table_id,
        tournament_id=tid,
        name=name or table_id,
        position=int(pos or 0) + 1,
        token_hash=hash_token(token),
    )
    s.add(gt)
    s.commit()
    return gt, token


def find_table(s: Session, table_id: str, tid: int | None = None) -> GameTable:
    """A table by its key, or by its code (within tournament ``tid`` when given)."""
    gt = s.get(GameTable, table_id)
    if gt is not None and (tid is None or gt.tournament_id == tid):
        return gt
    q = select(GameTable).where(GameTable.code == table_id)
    if tid is not None:
        q = q.where(GameTable.tournament_id == tid)
    found = list(s.execute(q).scalars())
    if len(found) == 1:
        return found[0]
    if found:
        raise ApiError(
            409,
            f"several tournaments have a table {table_id!r}: name the tournament (--event) "
            f"or use the table's key ({', '.join(g.id for g in found)})",
        )
    raise ApiError(404, f"no table {table_id!r}: create it first (没有此桌)")


def rotate_token(s: Session, table_id: str, tid: int | None = None) -> str:
    gt = find_table(s, table_id, tid)
    token = new_token()
    gt.token_hash = hash_token(token)
    s.commit()
    return token


def _unfinished_of(
    s: Session, tid: int, *, pair: Pair | None = None, table: str | None = None
) -> list[Match]:
    """Unfinished matches (``is_unfinished``) of a pair or a table in tournament ``tid``."""
    q = select(Match).join(Round, Match.round_id == Round.id).where(Round.tournament_id == tid)
    if pair is not None:
        q = q.where((Match.pair_ew_id == pair.id) | (Match.pair_ns_id == pair.id))
    if table is not None:
        q = q.where(Match.table_id == table)
    return [m for m in s.execute(q).scalars() if is_unfinished(m)]


def _refuse_unfinished(matches: list[Match], what: str) -> None:
    if matches:
        ids = ", ".join(str(m.id) for m in matches)
        raise ApiError(
            409,
            f"{what} has unfinished match(es) {ids}: decide them first (forfeit, as played, "
            f"void), then withdraw (有未完成的比赛，请先裁定)",
        )


def edit_pair(
    s: Session,
    tid: int,
    number: int,
    *,
    name: str | None = None,
    players: str | None = None,
    club: str | None = None,
    withdrawn: bool | None = None,
) -> Pair:
    """Change a pair's name, players or club, or withdraw (退赛) / reinstate it. A withdrawn
    pair is paired no more; its results and standing stay. Withdrawing a pair with an
    unfinished match is refused (409): decide the match first."""
    get_tournament(s, tid)
    p = _pairs_by_number(s, tid).get(number)
    if p is None:
        raise ApiError(404, f"no pair {number} in tournament {tid} (没有此参赛对)")
    if name is not None:
        if not name.strip():
            raise ApiError(422, "the pair's name cannot be empty (名称不能为空)")
        p.name = name.strip()[:200]
    if players is not None:
        p.players = players[:400]
    if club is not None:
        p.club = club[:200]
    if withdrawn and not p.withdrawn:
        _refuse_unfinished(_unfinished_of(s, tid, pair=p), f"pair {number}")
        t = get_tournament(s, tid)
        if t.format == "knockout_repechage" and number in _repechage_waiting(s, t):
            raise ApiError(409, _repechage_withdrawal(tid, number, made=False))
    if withdrawn is not None:
        p.withdrawn = withdrawn
    s.commit()
    return p


def edit_table(
    s: Session, tid: int, table_id: str, *, name: str | None = None, withdrawn: bool | None = None
) -> GameTable:
    """Rename a table or withdraw / reinstate it. Its code is what its kiosk's events say and
    does not change. A withdrawn table gets no new matches; its token keeps filing the events
    of its past matches (a kiosk catching up loses nothing). Withdrawing a table with an
    unfinished match is refused (409)."""
    gt = find_table(s, table_id, tid)
    if name is not None:
        gt.name = name.strip()[:200] or gt.code
    if withdrawn and not gt.withdrawn:
        _refuse_unfinished(_unfinished_of(s, tid, table=gt.id), f"table {gt.code!r}")
    if withdrawn is not None:
        gt.withdrawn = withdrawn
    s.commit()
    return gt


def _pairs_by_number(s: Session, tid: int) -> dict[int, Pair]:
    return {p.number: p for p in s.execute(select(Pair).where(Pair.tournament_id == tid)).scalars()}


def create_round(
    s: Session, tid: int, pairings: Sequence[tuple[str | None, int, int | None]] | None
) -> Round:
    """A new open round. ``pairings``: (table, ew, ns); None: made by the tournament's format
    (``swiss_round``, ``round_robin_round``, ``knockout_round``)."""
    t = get_tournament(s, tid)
    open_round = s.execute(
        select(Round.number).where(Round.tournament_id == tid, Round.status == "open")
    ).first()
    if open_round:
        raise ApiError(409, f"round {open_round[0]} is still open: close it first")
    if pairings is None:
        pairings = next_round_pairings(s, t)
    pairs = _pairs_by_number(s, tid)
    # A pairing names a table by its code (as the organiser knows it) or its key.
    keys: dict[str, str] = {}
    out_of_use: set[str] = set()
    for gt in s.execute(select(GameTable).where(GameTable.tournament_id == tid)).scalars():
        keys[gt.id] = gt.id
        keys[gt.code] = gt.id
        if gt.withdrawn:
            out_of_use.add(gt.id)
    pairings = [(keys.get(t, t) if t is not None else None, ew, ns) for t, ew, ns in pairings]
    tables = set(keys.values())
    seen_pairs: set[int] = set()
    seen_tables: set[str] = set()
    for table, ew, ns in pairings:
        for num in (ew, ns):
            if num is None:
                continue
            if num not in pairs:
                raise ApiError(422, f"pairing names pair {num}, which is not in tournament {tid}")
            if pairs[num].withdrawn:
                raise ApiError(
                    422, f"pair {num} has withdrawn: reinstate it first or leave it out (已退赛)"
                )
            if num in seen_pairs:
                raise ApiError(422, f"pair {num} is paired twice in this round")
            seen_pairs.add(num)
        if ns is None and table is not None:
            raise ApiError(422, f"pair {ew} has a bye but a table {table!r}: a bye has no table")
        if ns is not None:
            if table is None:
                raise ApiError(422, f"pairing {ew} v {ns} needs a table")
            if table not in tables:
                raise ApiError(422, f"pairing {ew} v {ns}: no table {table!r} in tournament {tid}")
            if table in seen_tables:
                raise ApiError(422, f"table {table!r} is used twice in this round")
            if table in out_of_use:
                raise ApiError(
                    422, f"table {table!r} is withdrawn: reinstate it or use another (已停用)"
                )
            seen_tables.add(table)
    number = (
        int(
            s.execute(select(func.max(Round.number)).where(Round.tournament_id == tid)).scalar()
            or 0
        )
        + 1
    )
    rnd = Round(tournament_id=tid, number=number, status="open")
    s.add(rnd)
    s.flush()
    created: list[Match] = []
    for table, ew, ns in pairings:
        m = Match(
            round_id=rnd.id,
            table_id=table,
            pair_ew_id=pairs[ew].id,
            pair_ns_id=pairs[ns].id if ns is not None else None,
            status="finished" if ns is None else "pending",
        )
        s.add(m)
        created.append(m)
    s.flush()
    # Events a table sent while no round was open (a kiosk started before the organiser
    # opened the round) belong to the table's match in this round.
    for m in created:
        if m.table_id is None:
            continue
        moved = cast(
            CursorResult[Any],
            s.execute(
                update(EventRow)
                .where(EventRow.table_id == m.table_id, EventRow.match_id.is_(None))
                .values(match_id=m.id)
            ),
        ).rowcount
        if moved:
            rebuild_match(s, m.id)
    s.commit()
    return rnd


def _tables_in_use(s: Session, tid: int) -> list[str]:
    return [
        gt.id
        for gt in s.execute(
            select(GameTable)
            .where(GameTable.tournament_id == tid, GameTable.withdrawn.is_(False))
            .order_by(GameTable.position)
        ).scalars()
    ]


def _on_tables(
    s: Session, t: Tournament, plan: Sequence[Pairing], what: str
) -> list[tuple[str | None, int, int | None]]:
    """Games on the tournament's tables in use, in order (byes keep their place in ``plan``:
    a knockout's bracket order is the order of its matches)."""
    table_ids = _tables_in_use(s, t.id)
    games = [p for p in plan if p.ns is not None]
    if len(games) > len(table_ids):
        raise ApiError(
            422,
            f"{what} needs {len(games)} tables but tournament {t.id} has "
            f"{len(table_ids)} in use: add tables first",
        )
    free = iter(table_ids)
    return [(next(free) if p.ns is not None else None, p.ew, p.ns) for p in plan]


def next_round_pairings(s: Session, t: Tournament) -> list[tuple[str | None, int, int | None]]:
    """The next round's pairings by the tournament's format."""
    if t.format == "round_robin":
        return round_robin_round(s, t)
    if t.format in formats.GROUP_FORMATS:
        return groups_round(s, t)
    if t.format == "knockout_repechage":
        return repechage_round(s, t)
    if t.format in formats.BEST_OF:
        return knockout_round(s, t)
    return swiss_round(s, t)


def _first_round_pairs(s: Session, t: Tournament) -> list[int] | None:
    """The pairs of the tournament's first round (byes included); None before it."""
    first = s.execute(
        select(Round.id).where(Round.tournament_id == t.id).order_by(Round.number).limit(1)
    ).scalar()
    if first is None:
        return None
    numbers = {p.id: p.number for p in _pairs_by_number(s, t.id).values()}
    out: set[int] = set()
    for ew, ns in s.execute(
        select(Match.pair_ew_id, Match.pair_ns_id).where(Match.round_id == first)
    ).all():
        out.add(numbers[ew])
        if ns is not None:
            out.add(numbers[ns])
    return sorted(out)


def _schedule_field(s: Session, t: Tournament, what: str, refuse_late: bool = True) -> list[int]:
    """The pairs a fixed schedule (round robin, groups) is made of: round 1's, before it the
    pairs not withdrawn; a pair added after round 1 is refused (it has no place in it), or
    left out with ``refuse_late=False`` (the pages and standings)."""
    pairs = _pairs_by_number(s, t.id)
    first = _first_round_pairs(s, t)
    field_ = first if first is not None else sorted(n for n, p in pairs.items() if not p.withdrawn)
    late = sorted(n for n, p in pairs.items() if not p.withdrawn and n not in field_)
    if late and refuse_late:
        raise ApiError(
            422,
            f"pair(s) {', '.join(map(str, late))} joined after round 1 of the {what} and "
            "have no place in its schedule: withdraw them (PATCH .../pairs/N "
            '{"withdrawn": true}) or pair the rounds by hand',
        )
    return field_


def _knockout_field(s: Session, t: Tournament) -> list[int]:
    """A knockout with repechage's field: the pairs that played any of its matches and the
    pairs not withdrawn (one of them may sit round 1 out into the repechage; more are refused
    by the replay). A pair that sat round 1 out, played in the repechage and withdrew after
    is still in the field (else round 1 would be replayed as an even round without it)."""
    pairs = _pairs_by_number(s, t.id)
    played = {n for ms in knockout_rounds(s, t) for m in ms for n in (m.ew, m.ns) if n is not None}
    return sorted(played | {n for n, p in pairs.items() if not p.withdrawn})


def _check_through(
    s: Session, t: Tournament, plan: Sequence[Pairing], number: int, what: str
) -> None:
    pairs = _pairs_by_number(s, t.id)
    for p in plan:
        for n in (p.ew, p.ns):
            if n is not None and pairs[n].withdrawn:
                raise ApiError(
                    409,
                    f"pair {n} goes through to round {number} of the {what} but has "
                    "withdrawn: reinstate it, or set its last match's result to its opponent "
                    "(a ruling) so the opponent goes through",
                )


def _repechage_withdrawal(tid: int, number: int, made: bool) -> str:
    """Why a pair in the repechage cannot drop out by withdrawing, and what to do (``made``:
    it has withdrawn already and the next round is being made)."""
    where = (
        f"pair {number} {'has withdrawn but is still' if made else 'is'} in the repechage "
        "(附加赛: it sat a round out into it, or waits there for its next match) with no "
        "result there yet"
    )
    why = (
        "withdrawn, it would drop out of the repechage unrecorded and the repechage would be "
        "made for one pair fewer (002 第三篇 '敗者5對與輪空1對抽簽進入附加賽' draws it in)"
    )
    first = (
        f'reinstate it (PATCH /api/v1/tournaments/{tid}/pairs/{number} {{"withdrawn": false}}) '
        "and make the round"
        if made
        else "keep it in until its next match is made"
    )
    return (
        f"{where}: {why}. To record that it leaves: {first}, then record that match as its "
        'no-show (POST /api/v1/matches/M/override {"result": "ew_no_show" or "ns_no_show"}, '
        "its side) so its opponent goes through, then withdraw it (退赛)"
    )


def _repechage_waiting(s: Session, t: Tournament) -> set[int]:
    """The pairs of a knockout with repechage that are in the repechage (sat a round out into
    it, or wait there for their next match) without a match in play."""
    field_ = _knockout_field(s, t)
    if len(field_) < 2:
        return set()
    st = formats.repechage_state(
        knockout_rounds(s, t), field_, formats.BEST_OF[t.format], strict=False
    )
    if st.phase == "repechage":
        return set(st.pool)
    if st.phase == "main":  # the round a pair sits out into the repechage, not decided yet
        return set(st.bracket.waiting.get(len(st.bracket.ties), []))
    return set()


def repechage_round(s: Session, t: Tournament) -> list[tuple[str | None, int, int | None]]:
    """The next round of a knockout with repechage (``formats.next_repechage_round``, 002
    第三篇): a pair that sits a round out into (or through) the repechage has no match. A
    withdrawn pair still in the repechage, or one that would sit the round out into it, is
    refused (409) naming it: it would drop out unrecorded."""
    rounds = knockout_rounds(s, t)
    field_ = _knockout_field(s, t)
    try:
        plan = formats.next_repechage_round(rounds, field_, t.lots_seed, formats.BEST_OF[t.format])
    except formats.FormatError as exc:
        raise ApiError(exc.status, exc.message) from None
    what = "knockout with repechage"
    pairs = _pairs_by_number(s, t.id)
    for n in sorted(_repechage_waiting(s, t)):
        if pairs[n].withdrawn:
            raise ApiError(409, _repechage_withdrawal(t.id, n, made=True))
    playing = {n for p in plan for n in (p.ew, p.ns) if n is not None}
    st = formats.repechage_state(rounds, field_, formats.BEST_OF[t.format], strict=False)
    if st.phase == "main":
        for n in st.alive:
            if n not in playing and pairs[n].withdrawn:
                raise ApiError(
                    409,
                    f"pair {n} would sit round {len(rounds) + 1} out into the repechage "
                    "(附加赛) but has withdrawn: reinstate it, or set its last match's result "
                    "to its opponent (a ruling) so the opponent goes on in its place",
                )
    _check_through(s, t, plan, len(rounds) + 1, what)
    return _on_tables(s, t, plan, f"round {len(rounds) + 1} of the {what}")


def tournament_groups(s: Session, t: Tournament, refuse_late: bool = True) -> dict[str, list[int]]:
    """A group stage's groups (``formats.assign_groups`` on the schedule's field)."""
    field_ = _schedule_field(s, t, "group stage", refuse_late)
    try:
        groups = formats.assign_groups(field_, t.groups or formats.DEFAULT_GROUPS)
        formats.check_advance(groups, t.advance or formats.DEFAULT_ADVANCE)
    except formats.FormatError as exc:
        raise ApiError(exc.status, exc.message) from None
    return groups


def _group_setup(s: Session, t: Tournament) -> tuple[dict[str, list[int]], int] | None:
    """(groups, rounds of the group stage), or None where no groups can be made yet."""
    try:
        groups = tournament_groups(s, t, refuse_late=False)
    except ApiError:
        return None
    return groups, len(formats.group_schedule(groups))


def group_standings(s: Session, t: Tournament) -> dict[str, list[Standing]]:
    """Each group's standings from its own matches of the group stage, by the round robin's
    chain (大分, 小分, then ``standings.py``'s)."""
    setup = _group_setup(s, t)
    if setup is None:
        return {}
    groups, nrounds = setup
    names = {n: p.name for n, p in _pairs_by_number(s, t.id).items()}
    inputs = [m for m in match_inputs(s, t.id) if m.round <= nrounds]
    out: dict[str, list[Standing]] = {}
    for g, members in groups.items():
        inside = set(members)
        mine = [m for m in inputs if m.ew in inside and (m.ns is None or m.ns in inside)]
        out[g] = rank_pairs(t.profile, [(n, names[n]) for n in members], mine, t.lots_seed)
    return out


def groups_round(s: Session, t: Tournament) -> list[tuple[str | None, int, int | None]]:
    """Group stage then knockout (000 篇11, ``formats``): round r of every group's round robin
    while the group stage lasts; then the knockout drawn from the top ``advance`` of every
    group (every group match must have a result), then the knockout's rounds."""
    groups = tournament_groups(s, t)
    schedule = formats.group_schedule(groups)
    done = _round_numbers(s, t.id)
    pairs = _pairs_by_number(s, t.id)
    if len(done) < len(schedule):
        plan = _without_withdrawn(pairs, [p for _g, p in schedule[len(done)]])
        what = f"round {len(done) + 1} of the group stage"
        return _on_tables(s, t, plan, what)
    ko = knockout_rounds(s, t)[len(schedule) :]
    if not ko:
        mp = match_points(t.profile)
        for m in match_inputs(s, t.id):
            if m.round <= len(schedule) and m.ns is not None and decision(m, mp)[0] is None:
                row = s.execute(
                    select(Match.id)
                    .join(Round, Match.round_id == Round.id)
                    .join(Pair, Match.pair_ew_id == Pair.id)
                    .where(
                        Round.tournament_id == t.id,
                        Round.number == m.round,
                        Pair.number == m.ew,
                    )
                ).scalar()
                raise ApiError(
                    409,
                    f"match {row} (round {m.round}, pairs {m.ew} v {m.ns}) of the group stage "
                    "has no result yet: the knockout is drawn from the final group standings; "
                    "let it finish, or decide it (close the round with a decision, or set a "
                    f"ruling with POST /api/v1/matches/{row}/override) (小组赛未完赛)",
                )
        table = group_standings(s, t)
        advance = t.advance or formats.DEFAULT_ADVANCE
        qualified = [[x.pair for x in table[g][:advance]] for g in groups]
        try:
            plan = formats.knockout_draw(qualified, t.lots_seed)
        except formats.FormatError as exc:
            raise ApiError(exc.status, exc.message) from None
    else:
        try:
            # the winners of adjacent matches, or the 决赛's fourth draw (000 篇11)
            plan = formats.next_group_knockout_round(ko, t.lots_seed, formats.BEST_OF[t.format])
        except formats.FormatError as exc:
            raise ApiError(exc.status, exc.message) from None
    number = len(ko) + 1
    _check_through(s, t, plan, number, "knockout")
    return _on_tables(s, t, plan, f"round {number} of the knockout (round {len(done) + 1})")


def bracket_of(s: Session, t: Tournament) -> formats.Bracket | None:
    """The bracket as the format replays it (not strict: it stops at a match without a
    winner); None for formats without one. A group stage's bracket is its knockout part."""
    if t.format not in formats.BEST_OF:
        return None
    rounds = knockout_rounds(s, t)
    if t.format in formats.GROUP_FORMATS:
        setup = _group_setup(s, t)
        if setup is None:
            return formats.Bracket()
        return formats.bracket_state(rounds[setup[1] :], formats.BEST_OF[t.format], strict=False)
    if t.format == "knockout_repechage":
        field_ = _knockout_field(s, t)
        if len(field_) < 2:
            return formats.Bracket()
        return formats.repechage_state(
            rounds, field_, formats.BEST_OF[t.format], strict=False
        ).bracket
    return formats.bracket_state(rounds, formats.BEST_OF[t.format], strict=False)


def _round_numbers(s: Session, tid: int) -> list[int]:
    return list(
        s.execute(
            select(Round.number).where(Round.tournament_id == tid).order_by(Round.number)
        ).scalars()
    )


def round_robin_round(s: Session, t: Tournament) -> list[tuple[str | None, int, int | None]]:
    """The next round of the round robin (``formats.round_robin_schedule``) on the pairs of
    round 1 (before it: the pairs not withdrawn); a withdrawn pair's opponent has a bye."""
    pairs = _pairs_by_number(s, t.id)
    inputs = match_inputs(s, t.id)
    done = _round_numbers(s, t.id)
    if inputs:
        first = min(m.round for m in inputs)
        field_ = sorted(
            {n for m in inputs if m.round == first for n in (m.ew, m.ns) if n is not None}
        )
    else:
        field_ = sorted(n for n, p in pairs.items() if not p.withdrawn)
    late = sorted(n for n, p in pairs.items() if not p.withdrawn and n not in field_)
    if late:
        raise ApiError(
            422,
            f"pair(s) {', '.join(map(str, late))} joined after round 1 of the round robin and "
            "have no place in its schedule: withdraw them (PATCH .../pairs/N "
            '{"withdrawn": true}) or pair the rounds by hand',
        )
    try:
        schedule = formats.round_robin_schedule(field_)
    except formats.FormatError as exc:
        raise ApiError(exc.status, exc.message) from None
    if len(done) >= len(schedule):
        raise ApiError(
            409,
            f"all {len(schedule)} rounds of the round robin are made (every pair meets every "
            "other once): the event is complete (大循环已全部编排)",
        )
    plan = _without_withdrawn(pairs, schedule[len(done)])
    return _on_tables(s, t, plan, f"round {len(done) + 1} of the round robin")


def _without_withdrawn(pairs: Mapping[int, Pair], round_: Sequence[Pairing]) -> list[Pairing]:
    """A round robin's scheduled round with the withdrawn pairs taken out: a meeting with one
    withdrawn pair is the other's bye, one with both is dropped; byes go last."""
    gone = {n for n, p in pairs.items() if p.withdrawn}
    plan: list[Pairing] = []
    for p in round_:
        ew = p.ew if p.ew not in gone else None
        ns = p.ns if p.ns not in gone else None
        if ew is None and ns is None:
            continue
        if ew is None:
            ew, ns = ns, None
        plan.append(Pairing(int(ew), ns))  # type: ignore[arg-type]
    return [p for p in plan if p.ns is not None] + [p for p in plan if p.ns is None]


def knockout_rounds(s: Session, t: Tournament) -> list[list[formats.KoMatch]]:
    """The knockout's rounds as ``formats`` replays them: matches in bracket order (their
    order in the round), each with the result the standings count."""
    rows = s.execute(
        select(Match, Round.number)
        .join(Round, Match.round_id == Round.id)
        .where(Round.tournament_id == t.id)
        .order_by(Round.number, Match.id)
    ).all()
    numbers = {p.id: p.number for p in _pairs_by_number(s, t.id).values()}
    mp = match_points(t.profile)
    points = deal_points(s, t) if point_table(t.profile) else None
    out: dict[int, list[formats.KoMatch]] = {}
    for m, rnum in rows:
        result, _by = decision(_match_input(m, rnum, numbers, points), mp)
        out.setdefault(rnum, []).append(
            formats.KoMatch(
                match=m.id,
                table=m.table_id,
                ew=numbers[m.pair_ew_id],
                ns=numbers[m.pair_ns_id] if m.pair_ns_id is not None else None,
                result=result,
                round=rnum,
                status=shown_status(m),
            )
        )
    return [out[n] for n in sorted(out)]


def knockout_round(s: Session, t: Tournament) -> list[tuple[str | None, int, int | None]]:
    """Round 1 by draw number with byes (``formats.first_knockout_round``), later rounds from
    the winners (``formats.next_knockout_round``)."""
    pairs = _pairs_by_number(s, t.id)
    rounds = knockout_rounds(s, t)
    redraw = t.format == "knockout_redraw"
    try:
        if not rounds:
            first = formats.first_redraw_round if redraw else formats.first_knockout_round
            plan = first(sorted(n for n, p in pairs.items() if not p.withdrawn))
        else:
            plan = formats.next_knockout_round(
                rounds, formats.BEST_OF[t.format], t.lots_seed if redraw else None
            )
    except formats.FormatError as exc:
        raise ApiError(exc.status, exc.message) from None
    for p in plan:
        for n in (p.ew, p.ns):
            if n is not None and pairs[n].withdrawn:
                raise ApiError(
                    409,
                    f"pair {n} goes through to round {len(rounds) + 1} but has withdrawn: "
                    "reinstate it, or set its last match's result to its opponent (a ruling) "
                    "so the opponent goes through",
                )
    return _on_tables(s, t, plan, f"round {len(rounds) + 1} of the knockout")


def swiss_round(s: Session, t: Tournament) -> list[tuple[str | None, int, int | None]]:
    """Pairings of the next round by the Swiss system, on the tournament's tables in order."""
    table_ids = _tables_in_use(s, t.id)
    inputs = match_inputs(s, t.id)
    first = not inputs
    gone = {p.number for p in _pairs_by_number(s, t.id).values() if p.withdrawn}
    ranked = [st.pair for st in compute_standings(s, t) if st.pair not in gone]
    played = [(m.ew, m.ns) for m in inputs if m.ns is not None]
    had_bye = [m.ew for m in inputs if m.ns is None]
    try:
        plan: list[Pairing] = swiss_pairings(ranked, played, had_bye, first_round=first)
    except StandingsError as exc:
        raise ApiError(422, str(exc)) from None
    games = [p for p in plan if p.ns is not None]
    if len(games) > len(table_ids):
        raise ApiError(
            422,
            f"the Swiss pairing needs {len(games)} tables but tournament {t.id} has "
            f"{len(table_ids)}: add tables first",
        )
    out: list[tuple[str | None, int, int | None]] = []
    for tid, p in zip(table_ids, games, strict=False):
        out.append((tid, p.ew, p.ns))
    out.extend((None, p.ew, None) for p in plan if p.ns is None)
    return out


FINAL_DECISIONS = ("as_played", "forfeit_ew", "forfeit_ns", "void")
DECISION_TEXT = {
    "wait": "wait: the match goes on, its events score it / 等待：比赛继续，按事件计分",
    "as_played": "score as played so far / 按已打成绩计分",
    "forfeit_ew": "East-West forfeits / 东西方弃权判负",
    "forfeit_ns": "North-South forfeits / 南北方弃权判负",
    "void": "void, no result / 作废，不计成绩",
}


def _round_of(s: Session, tid: int, number: int) -> Round:
    get_tournament(s, tid)
    rnd = s.execute(
        select(Round).where(Round.tournament_id == tid, Round.number == number)
    ).scalar_one_or_none()
    if rnd is None:
        raise ApiError(404, f"no round {number} in tournament {tid} (第 {number} 轮不存在)")
    return rnd


def is_unfinished(m: Match) -> bool:
    """A match that still needs its result: a game (not a bye), not finished at the table, no
    admin ruling and no final decision."""
    return (
        m.pair_ns_id is not None
        and m.status != "finished"
        and m.override is None
        and m.decision not in FINAL_DECISIONS
    )


def shown_status(m: Match) -> str:
    """The status the API and pages show: ``decided`` for a game whose result a ruling gives
    (an admin override, or a final decision: as_played, forfeit, void), whatever its events
    did; else the play at the table (``Match.status``, the fold of its events: pending,
    playing, finished)."""
    if m.pair_ns_id is not None and (m.override is not None or m.decision in FINAL_DECISIONS):
        return "decided"
    return m.status


def ruling_of(m: Match, reason: str | None = None) -> dict[str, Any] | None:
    """The ruling that decides a match, for the API and pages: ``by`` (``override``: an admin
    ruling, which wins over a decision; ``decision``: the organiser's on an unfinished match),
    ``kind`` (the override's result or the decision) and ``reason`` (the decision's, as
    typed; an override has none). None when no ruling decides it."""
    if m.pair_ns_id is None:
        return None
    if m.override is not None:
        return {"by": "override", "kind": m.override, "reason": ""}
    if m.decision in FINAL_DECISIONS:
        return {"by": "decision", "kind": m.decision, "reason": reason or ""}
    return None


def decision_reasons(s: Session, match_ids: Iterable[int]) -> dict[int, str]:
    """The reason of the decision in force (the latest ``match_decision`` row) per match."""
    ids = list(match_ids)
    if not ids:
        return {}
    rows = s.execute(
        select(MatchDecision.match_id, MatchDecision.reason)
        .where(MatchDecision.match_id.in_(ids))
        .order_by(MatchDecision.id)
    ).all()
    return {mid: reason for mid, reason in rows}  # the latest row wins


def _unfinished_json(m: Match, numbers: dict[int, int]) -> dict[str, Any]:
    return {
        "match": m.id,
        "table": m.table_id,
        "ew": numbers.get(m.pair_ew_id),
        "ns": numbers.get(m.pair_ns_id) if m.pair_ns_id is not None else None,
        "status": m.status,
        "deals_played": m.deals_played,
        "decision": m.decision,
    }


def decide(s: Session, m: Match, decision: str, reason: str = "") -> MatchDecision:
    """Record an organiser's decision on an unfinished match (a ``match_decision`` row) and put
    it in force (``Match.decision*``). ``as_played`` is scored from the events stored now."""
    if decision not in DECISION_TEXT:
        raise ApiError(
            422, f"decision {decision!r}: choose one of {', '.join(DECISION_TEXT)} (未知的决定)"
        )
    if m.pair_ns_id is None:
        raise ApiError(422, f"match {m.id} is a bye: it needs no decision (轮空无需决定)")
    finished_first = m.status == "finished" and m.decision in (None, "wait")
    if finished_first or m.override is not None:
        how = "its events finished it" if finished_first else "an admin ruling decides it"
        raise ApiError(
            409,
            f"match {m.id} is decided already ({how}): change a result with an override "
            "(ruling), not a decision (比赛已有结果，请用裁定修改)",
        )
    at_seq = s.execute(
        select(func.max(EventRow.seq)).where(EventRow.match_id == m.id)
    ).scalar_one_or_none()
    row = MatchDecision(
        match_id=m.id, decision=decision, reason=reason[:400], at_seq=at_seq, decided_at=utcnow()
    )
    winner = level_ew = level_ns = None
    if decision == "as_played":
        bodies = (
            s.execute(
                select(EventRow.body)
                .where(EventRow.match_id == m.id, EventRow.type.in_(sorted(RESULT_TYPES)))
                .order_by(EventRow.seq)
            )
            .scalars()
            .all()
        )
        summary = match_summary(bodies)
        level_ew, level_ns = summary.levels["EW"], summary.levels["NS"]
        diff = LEVEL_VALUE[level_ew] - LEVEL_VALUE[level_ns]
        t = get_tournament(s, _tid_of(s, m))
        if point_table(t.profile) is not None:  # a deal-points match: the higher points win
            pts = deal_points(s, t, [m.id]).get(m.id, (0, 0))
            diff = pts[0] - pts[1]
        winner = "EW" if diff > 0 else "NS" if diff < 0 else "draw"
    row.winner, row.level_ew, row.level_ns = winner, level_ew, level_ns
    s.add(row)
    m.decision = decision
    m.decision_winner, m.decision_level_ew, m.decision_level_ns = winner, level_ew, level_ns
    return row


def close_round(
    s: Session,
    tid: int,
    number: int,
    decisions: Sequence[tuple[int, str, str]] = (),
    reason: str = "",
) -> Round:
    """Close a round. Every unfinished match needs an explicit decision (``decisions``: (match,
    decision, reason)), else 409 lists them and nothing changes. Recorded as ``match_decision``
    and ``round_change`` rows."""
    rnd = _round_of(s, tid, number)
    if rnd.status == "closed":
        raise ApiError(
            409,
            f"round {number} is closed already; reopen it with a reason first "
            f"(第 {number} 轮已结束)",
        )
    matches = {m.id: m for m in rnd.matches}
    chosen: dict[int, tuple[str, str]] = {}
    for mid, choice, why in decisions:
        if mid not in matches:
            raise ApiError(
                422, f"match {mid} is not in round {number} (第 {mid} 场不属于第 {number} 轮)"
            )
        if mid in chosen:
            raise ApiError(422, f"match {mid} has two decisions: give one (每场只能一个决定)")
        chosen[mid] = (choice, why)
    numbers = {
        p.id: p.number for p in s.execute(select(Pair).where(Pair.tournament_id == tid)).scalars()
    }
    undecided = [
        m
        for m in matches.values()
        if is_unfinished(m) and m.decision is None and m.id not in chosen
    ]
    if undecided:
        listed = ", ".join(f"{m.id} (table {m.table_id}, {m.status})" for m in undecided)
        raise ApiError(
            409,
            {
                "message": f"round {number} has {len(undecided)} unfinished match(es): {listed}. "
                "Nothing was closed. Decide each one: wait (it goes on and its events score "
                "it), as_played (score as played so far), forfeit_ew / forfeit_ns, or void / "
                f"第 {number} 轮有 {len(undecided)} 场比赛未完成，未结束本轮。请逐场决定："
                "等待、按已打成绩、弃权或作废",
                "undecided": [_unfinished_json(m, numbers) for m in undecided],
                "choices": list(DECISION_TEXT),
            },
        )
    for mid, (choice, why) in chosen.items():
        decide(s, matches[mid], choice, why or reason)
    rnd.status = "closed"
    s.add(RoundChange(round_id=rnd.id, action="closed", reason=reason[:400], at=utcnow()))
    s.commit()
    return rnd


def decide_match(s: Session, match_id: int, decision: str, reason: str = "") -> Match:
    """A decision on one unfinished match, whether its round is open or closed (e.g. a match
    left to go on with ``wait`` that never finished)."""
    m = s.get(Match, match_id)
    if m is None:
        raise ApiError(404, f"no match {match_id} (第 {match_id} 场比赛不存在)")
    decide(s, m, decision, reason)
    s.commit()
    return m


def reopen_round(s: Session, tid: int, number: int, reason: str) -> Round:
    """Reopen a closed round (a ``round_change`` row with the reason). Its matches keep their
    decisions; change them with new decisions. Refused while another round is open."""
    if not reason.strip():
        raise ApiError(422, "reopening a round needs a reason (重新开放本轮须说明理由)")
    rnd = _round_of(s, tid, number)
    if rnd.status != "closed":
        raise ApiError(409, f"round {number} is open already (第 {number} 轮仍在进行)")
    other = s.execute(
        select(Round.number).where(Round.tournament_id == tid, Round.status == "open")
    ).first()
    if other:
        raise ApiError(
            409,
            f"round {other[0]} is open: close it before reopening round {number} "
            f"(请先结束第 {other[0]} 轮)",
        )
    rnd.status = "open"
    s.add(RoundChange(round_id=rnd.id, action="reopened", reason=reason[:400], at=utcnow()))
    s.commit()
    return rnd


def round_changes(s: Session, round_id: int) -> list[dict[str, Any]]:
    rows = s.execute(
        select(RoundChange).where(RoundChange.round_id == round_id).order_by(RoundChange.id)
    ).scalars()
    return [{"action": r.action, "reason": r.reason, "at": r.at.isoformat()} for r in rows]


def match_decisions(s: Session, match_id: int) -> list[dict[str, Any]]:
    rows = s.execute(
        select(MatchDecision).where(MatchDecision.match_id == match_id).order_by(MatchDecision.id)
    ).scalars()
    return [
        {
            "decision": r.decision,
            "reason": r.reason,
            "at_seq": r.at_seq,
            "winner": r.winner,
            "level_ew": r.level_ew,
            "level_ns": r.level_ns,
            "at": r.decided_at.isoformat(),
        }
        for r in rows
    ]


def _live(m: Match, rnd: Round) -> bool:
    """Still to be played at its table: unfinished and either in an open round or let go on."""
    return is_unfinished(m) and (rnd.status == "open" or m.decision == "wait")


def assignment(s: Session, table: str) -> dict[str, Any]:
    """The matches a table has to play, earliest round first; ``current`` is the first. A kiosk
    stamps its events with the current match's id (``match_id``)."""
    rows = s.execute(
        select(Match, Round)
        .join(Round, Match.round_id == Round.id)
        .where(Match.table_id == table)
        .order_by(Round.number, Match.id)
    ).all()
    pairs: dict[int, Pair] = {}
    ids = {m.pair_ew_id for m, _ in rows} | {m.pair_ns_id for m, _ in rows if m.pair_ns_id}
    if ids:
        pairs = {p.id: p for p in s.execute(select(Pair).where(Pair.id.in_(ids))).scalars()}

    def side(pid: int | None) -> dict[str, Any] | None:
        p = pairs.get(pid) if pid is not None else None
        return None if p is None else {"number": p.number, "name": p.name, "players": p.players}

    queue = [
        {
            "match_id": m.id,
            "round": rnd.number,
            "tournament": rnd.tournament_id,
            "status": m.status,
            "decision": m.decision,
            "ew": side(m.pair_ew_id),
            "ns": side(m.pair_ns_id),
        }
        for m, rnd in rows
        if _live(m, rnd)
    ]
    return {"table": table, "current": queue[0] if queue else None, "queue": queue}


def set_override(s: Session, match_id: int, result: str | None) -> Match:
    m = s.get(Match, match_id)
    if m is None:
        raise ApiError(404, f"no match {match_id}")
    if m.pair_ns_id is None and result is not None:
        raise ApiError(422, f"match {match_id} is a bye: it has no result to set")
    m.override = result
    s.commit()
    return m


def _tid_of(s: Session, m: Match) -> int:
    return int(s.execute(select(Round.tournament_id).where(Round.id == m.round_id)).scalar_one())


@functools.lru_cache(maxsize=64)
def point_table(profile: str) -> tuple[int, int, int] | None:
    """The deal points (partner 2nd, 3rd, 4th) of a deal-points profile (003 six-deal-points,
    000 篇6), else None."""
    from engine.profiles import load_profile

    return load_profile(profile).deals.point_table if profile in PROFILES else None


def deal_points(
    s: Session, t: Tournament, match_ids: Iterable[int] | None = None
) -> dict[int, tuple[int, int]]:
    """Deal points (EW, NS) of each match of a deal-points tournament from its ended deals
    (the winners' team scores 3 / 2 / 1 as the partner finished 2nd / 3rd / 4th; 003 "同组选手
    获胜并取得1,2名，积3分。1，3名积2分。1，4名积1分"); {} for other profiles."""
    table = point_table(t.profile)
    if table is None:
        return {}
    q = (
        select(Deal.match_id, Deal.finish_order)
        .join(Match, Deal.match_id == Match.id)
        .join(Round, Match.round_id == Round.id)
        .where(Round.tournament_id == t.id, Deal.ended.is_(True))
    )
    if match_ids is not None:
        q = q.where(Deal.match_id.in_(list(match_ids)))
    out: dict[int, list[int]] = {}
    for mid, order in s.execute(q).all():
        pts = out.setdefault(mid, [0, 0])
        seats = list(order or "")
        if len(seats) < 2 or seats[0] not in TEAM_OF:
            continue
        team = TEAM_OF[seats[0]]
        partner = next((i for i, x in enumerate(seats[1:], start=1) if TEAM_OF.get(x) == team), 3)
        pts[0 if team == "EW" else 1] += table[min(partner, 3) - 1]
    return {mid: (p[0], p[1]) for mid, p in out.items()}


def _match_input(
    m: Match,
    round_number: int,
    numbers: dict[int, int],
    points: dict[int, tuple[int, int]] | None = None,
) -> MatchInput:
    """``points``: the tournament's deal points per match (``deal_points``) under a
    deal-points profile; None otherwise."""
    decision = m.decision if m.decision in FINAL_DECISIONS else None
    if decision == "as_played":  # the result of the events stored when it was decided
        winner, level_ew, level_ns = m.decision_winner, m.decision_level_ew, m.decision_level_ns
    else:
        winner = m.winner if m.status == "finished" else None
        level_ew, level_ns = m.level_ew, m.level_ns
    return MatchInput(
        round=round_number,
        ew=numbers[m.pair_ew_id],
        ns=numbers[m.pair_ns_id] if m.pair_ns_id is not None else None,
        winner=winner,
        level_ew=level_ew or "2",
        level_ns=level_ns or "2",
        fouls_ew=m.fouls_ew,
        fouls_ns=m.fouls_ns,
        override=m.override,
        decision=decision,
        points_ew=points.get(m.id, (0, 0))[0] if points is not None else None,
        points_ns=points.get(m.id, (0, 0))[1] if points is not None else None,
    )


def match_inputs(s: Session, tid: int) -> list[MatchInput]:
    rows = s.execute(
        select(Match, Round.number)
        .join(Round, Match.round_id == Round.id)
        .where(Round.tournament_id == tid)
        .order_by(Round.number, Match.id)
    ).all()
    numbers = {
        p.id: p.number for p in s.execute(select(Pair).where(Pair.tournament_id == tid)).scalars()
    }
    t = get_tournament(s, tid)
    points = deal_points(s, t) if point_table(t.profile) else None
    return [_match_input(m, rnum, numbers, points) for m, rnum in rows]


def compute_standings(s: Session, t: Tournament) -> list[Standing]:
    pairs = [
        (p.number, p.name)
        for p in s.execute(select(Pair).where(Pair.tournament_id == t.id)).scalars()
    ]
    ranked = rank_pairs(t.profile, pairs, match_inputs(s, t.id), t.lots_seed)
    b = bracket_of(s, t)
    if b is None:
        return ranked
    below: dict[int, int] | None = None
    if t.format in formats.GROUP_FORMATS:
        # pairs not in the knockout: after it, by their place in their group
        inside = {p for ties in b.ties[:1] for x in ties for p in (x.ew, x.ns) if p is not None}
        below = {
            st.pair: place
            for table in group_standings(s, t).values()
            for place, st in enumerate(table, start=1)
            if st.pair not in inside
        }
        for p, _name in pairs:
            if p not in inside:
                below.setdefault(p, 999)
    return formats.knockout_standings(ranked, [], bracket=b, below=below)


def knockout_places(s: Session, t: Tournament) -> dict[str, int]:
    """A knockout's final places known so far: ``{"1": pair, "2": pair, ...}``."""
    b = bracket_of(s, t)
    if b is None:
        return {}
    return {str(place): pair for pair, place in sorted(b.places.items(), key=lambda x: x[1])}


def groups_json(s: Session, t: Tournament) -> dict[str, Any] | None:
    """A group stage's groups with their standings (None for other formats): each pair's
    row of ``Standing.to_json`` with ``through`` (in the top ``advance`` of its group) and
    ``qualified`` (in the knockout's first round, once it is made)."""
    if t.format not in formats.GROUP_FORMATS:
        return None
    advance = t.advance or formats.DEFAULT_ADVANCE
    setup = _group_setup(s, t)
    b = bracket_of(s, t)
    inside = {
        p for ties in (b.ties[:1] if b else []) for x in ties for p in (x.ew, x.ns) if p is not None
    }
    table = group_standings(s, t)
    groups = []
    for g, rows in table.items():
        out = []
        for st in rows:
            row = st.to_json()
            row["through"] = st.rank <= advance
            row["qualified"] = st.pair in inside
            out.append(row)
        groups.append({"group": g, "standings": out})
    return {
        "groups": t.groups or formats.DEFAULT_GROUPS,
        "advance": advance,
        "group_rounds": setup[1] if setup else None,
        "knockout_started": bool(inside),
        "tie_breaks": ["points (大分)", "level_diff (小分)", "fouls", "by_round", "lot"],
        "table": groups,
    }


def bracket_json(s: Session, t: Tournament) -> list[dict[str, Any]] | None:
    """A knockout's rounds for the bracket view (None for other formats): per bracket round
    its meetings in bracket order, with ``stage`` (final, third_place, semi_final, round),
    ``games`` (match ids, one per game: best of 3 has up to three), ``wins`` per side and the
    ``winner`` once through. A group stage's knockout: ``draw`` per round, the draw that made
    it (000 篇11's third, or fourth with its lots: ``formats.group_knockout_draws``) or null."""
    b = bracket_of(s, t)
    if b is None:
        return None
    draws = (
        formats.group_knockout_draws(b, t.lots_seed) if t.format in formats.GROUP_FORMATS else None
    )
    out: list[dict[str, Any]] = []
    for idx, ties in enumerate(b.ties, start=1):
        games = [x for x in ties if x.ns is not None]
        items = []
        for pos, x in enumerate(ties):
            stage = "round"
            if idx in b.stage_of:
                stage = b.stage_of[idx]
            elif idx == b.final_round:
                stage = "final" if pos == 0 else "third_place"
            elif len(ties) == 1 and x.ns is not None:
                stage = "final"
            elif len(ties) == 2 and len(games) == 2:
                stage = "semi_final"
            state, winner, _loser = formats.tie_outcome(x)
            wins = x.wins()
            last = x.games[-1]
            items.append(
                {
                    "match": last.match,
                    "games": [g.match for g in x.games],
                    "table": last.table,
                    "status": last.status,
                    "ew": x.ew,
                    "ns": x.ns,
                    "wins_ew": wins.get(x.ew, 0),
                    "wins_ns": wins.get(x.ns, 0) if x.ns is not None else None,
                    "result": last.result,
                    "winner": winner if state == "won" else None,
                    "stage": stage,
                }
            )
        for p in b.waiting.get(idx, []):  # sat the round out into the repechage
            items.append(
                {
                    "match": None,
                    "games": [],
                    "table": None,
                    "status": None,
                    "ew": p,
                    "ns": None,
                    "wins_ew": 0,
                    "wins_ns": None,
                    "result": None,
                    "winner": None,
                    "stage": "to_repechage",
                }
            )
        row: dict[str, Any] = {
            "round": idx,
            "best_of": ties[0].best_of if ties else 1,
            "stage": b.stage_of.get(idx, "bracket"),
            "matches": items,
        }
        if draws is not None:
            row["draw"] = draws.get(idx)
        out.append(row)
    return out


def rounds_json(s: Session, tid: int) -> list[dict[str, Any]]:
    numbers = {
        p.id: p.number for p in s.execute(select(Pair).where(Pair.tournament_id == tid)).scalars()
    }
    t = get_tournament(s, tid)
    mp = match_points(t.profile)
    points = deal_points(s, t) if point_table(t.profile) else None
    out = []
    for rnd in s.execute(
        select(Round).where(Round.tournament_id == tid).order_by(Round.number)
    ).scalars():
        matches = list(
            s.execute(select(Match).where(Match.round_id == rnd.id).order_by(Match.id)).scalars()
        )
        reasons = decision_reasons(s, [m.id for m in matches if m.decision in FINAL_DECISIONS])
        out.append(
            {
                "id": rnd.id,
                "number": rnd.number,
                "status": rnd.status,
                "changes": round_changes(s, rnd.id),
                "matches": [
                    match_json(m, rnd.number, numbers, mp, points, reasons.get(m.id))
                    for m in matches
                ],
            }
        )
    return out


def match_json(
    m: Match,
    round_number: int,
    numbers: dict[int, int],
    mp: MatchPoints | None = None,
    points: dict[int, tuple[int, int]] | None = None,
    reason: str | None = None,
) -> dict[str, Any]:
    """A match as the API and pages show it. ``status``: pending, playing, finished (its
    events), or ``decided`` when a ruling gives its result (``ruling``: by, kind, reason, the
    decision's ``reason`` given here); ``play_status`` is always the play at the table.
    ``winner`` is the play at the table; ``result`` and ``decided_by`` are what the standings
    count (fouls and rulings included), when the tournament's match points are given.
    ``points_ew`` / ``points_ns``: deal points, under a deal-points profile (``points`` from
    ``deal_points``), else absent."""
    out: dict[str, Any] = {
        "id": m.id,
        "round": round_number,
        "table": m.table_id,
        "ew": numbers[m.pair_ew_id],
        "ns": numbers[m.pair_ns_id] if m.pair_ns_id is not None else None,
        "status": shown_status(m),
        "play_status": m.status,
        "ruling": ruling_of(m, reason),
        "winner": m.winner,
        "level_ew": m.level_ew,
        "level_ns": m.level_ns,
        "deals_played": m.deals_played,
        "fouls_ew": m.fouls_ew,
        "fouls_ns": m.fouls_ns,
        "override": m.override,
        "decision": m.decision,
        "unfinished": is_unfinished(m),
    }
    if points is not None:
        out["points_ew"], out["points_ns"] = points.get(m.id, (0, 0))
    if mp is not None:
        out["result"], out["decided_by"] = decision(
            _match_input(m, round_number, numbers, points), mp
        )
    return out


def export_json(s: Session, t: Tournament) -> dict[str, Any]:
    pairs = s.execute(
        select(Pair).where(Pair.tournament_id == t.id).order_by(Pair.number)
    ).scalars()
    tables = s.execute(
        select(GameTable).where(GameTable.tournament_id == t.id).order_by(GameTable.position)
    ).scalars()
    rounds = rounds_json(s, t.id)
    bracket_rounds = bracket_json(s, t)
    bracket = (
        None
        if bracket_rounds is None
        else {"rounds": bracket_rounds, "places": knockout_places(s, t)}
    )
    deals = s.execute(
        select(Deal, Match.id)
        .join(Match, Deal.match_id == Match.id)
        .join(Round, Match.round_id == Round.id)
        .where(Round.tournament_id == t.id)
        .order_by(Match.id, Deal.number)
    ).all()
    return {
        "tournament": {
            "id": t.id,
            "name": t.name,
            "profile": t.profile,
            "format": t.format,
            "groups": t.groups,
            "advance": t.advance,
            "lots_seed": t.lots_seed,
        },
        "group_stage": groups_json(s, t),
        "bracket": bracket,
        "pairs": [
            {"number": p.number, "name": p.name, "players": p.players, "club": p.club}
            for p in pairs
        ],
        "tables": [{"id": gt.id, "code": gt.code, "name": gt.name} for gt in tables],
        "rounds": rounds,
        "deals": [
            {
                "match": mid,
                "number": d.number,
                "level": d.level,
                "leader": d.leader,
                "order": d.finish_order,
                "level_ns": d.level_ns,
                "level_ew": d.level_ew,
                "ended": d.ended,
            }
            for d, mid in deals
        ],
        "standings": [st.to_json() for st in compute_standings(s, t)],
    }


def tables_of(s: Session, tid: int) -> list[GameTable]:
    return list(
        s.execute(
            select(GameTable).where(GameTable.tournament_id == tid).order_by(GameTable.position)
        ).scalars()
    )


def table_ids(s: Session, tid: int) -> Iterable[str]:
    return [gt.id for gt in tables_of(s, tid)]
