"""Group commit of ingest requests on PostgreSQL (the hot path of ``POST /api/v1/events``).

Every ingest request of a PostgreSQL scoreboard hands its prepared rows (``service.prepare_rows``)
to the :class:`GroupWriter`. The writer takes whatever requests are pending — at most one per
table, never two with an event id in common — and stores them together on its own asyncio
psycopg connection, with statements whose SQL text never changes (prepared once, generic plans):

1. one statement checks every row for conflicts (an id stored with other content, a seq taken by
   another id), inserts the rows of every request without a conflict, reads each table's seq
   count/max and the stored result events of the matches the group touches (one snapshot);
2. when a result-bearing event was stored, its match is re-derived (``fold.match_summary``) and
   the match columns and deals are written in the same transaction, pipelined with the COMMIT;
   otherwise the one statement is the whole (autocommit) transaction;
3. the stored seqs of the tables with a gap, for the ``missing`` list (rare).

Each request keeps its own all-or-nothing answer: a request with a conflict gets its 409 and
none of its rows are inserted, while the others in the group are stored. A row that another
writer (another process, or the per-request path) inserted after the statement's snapshot makes
the statement fail as a whole (nothing stored) and the group is tried again, when the row is
seen as a duplicate or a conflict. Any other database error rolls the group back and every
request of it is handled on its own by the per-request path (``service.store_rows``), so one bad
request never fails its neighbours.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg.pq import TransactionStatus

from kiosk.scoreboard.fold import RESULT_TYPES, match_summary
from kiosk.scoreboard.schemas import IngestResult
from kiosk.scoreboard.service import (
    ApiError,
    Directory,
    IngestOutcome,
    _conflict_detail,
    body_text,
    deal_rows,
    gaps,
    match_values,
)

log = logging.getLogger("guandan.scoreboard.groupcommit")

#: Most events stored by one group (a batch request is never split).
MAX_GROUP_EVENTS = 4000
_INT32 = 2**31

_RESULT_IN = "(" + ", ".join(f"'{t}'" for t in sorted(RESULT_TYPES)) + ")"

#: What the statement fails with when a row was neither stored nor found (another writer
#: inserted it after the statement's snapshot): the failed cast aborts the whole statement, so
#: nothing of the group is stored even in autocommit, and the group is tried again.
_RACE = "concurrent write of"

#: One JSON array of rows ``[g, id, table, seq, deal, t, type, match_id, body text, digest]``
#: (one parameter: dumping ten arrays element by element cost more than the whole statement),
#: and per request ``[table, M]`` with seqs 1..M known to be stored. Returns rows
#: ``(kind, key, why, other, num, seq)``: ``i`` inserted id, ``d`` duplicate id, ``c`` conflict
#: (id, why, other id, request), ``a`` seq count/max of a table, ``r`` a stored result event
#: (body, match, seq) of a match this group may re-derive.
_STORE = f"""
WITH v AS (
  SELECT (r->>0)::int AS g, r->>1 AS id, r->>2 AS table_id, (r->>3)::bigint AS seq,
         (r->>4)::int AS deal, (r->>5)::float8 AS t, r->>6 AS type, (r->>7)::int AS match_id,
         r->>8 AS body, r->>9 AS digest
    FROM json_array_elements(%(rows)s::json) AS r
),
clash AS (
  SELECT v.g, v.id, 'content'::text AS why, x.other FROM v CROSS JOIN LATERAL (
    SELECT e.id::text AS other FROM event e
     WHERE e.table_id = v.table_id AND e.id = v.id AND e.digest <> v.digest LIMIT 1
  ) x
  UNION ALL
  SELECT v.g, v.id, 'seq'::text, x.other FROM v CROSS JOIN LATERAL (
    SELECT e.id::text AS other FROM event e
     WHERE e.table_id = v.table_id AND e.seq = v.seq AND e.id <> v.id LIMIT 1
  ) x
),
dup AS (
  SELECT v.id FROM v CROSS JOIN LATERAL (
    SELECT 1 FROM event e
     WHERE e.table_id = v.table_id AND e.id = v.id AND e.digest = v.digest LIMIT 1
  ) x
),
ins AS (
  INSERT INTO event (id, table_id, seq, deal, t, type, match_id, body, digest, received_at)
  SELECT id, table_id, seq, deal, t, type, match_id, body::json, digest, now() FROM v
   WHERE NOT EXISTS (SELECT 1 FROM clash WHERE clash.g = v.g)
  ON CONFLICT DO NOTHING RETURNING id
),
k AS (
  SELECT k->>0 AS table_id, (k->>1)::bigint AS known
    FROM json_array_elements(%(known)s::json) AS k
),
agg AS (
  SELECT k.table_id, k.known + a.c AS c, greatest(k.known, a.m) AS m FROM k
   CROSS JOIN LATERAL (
     SELECT count(e.seq) AS c, max(e.seq) AS m FROM event e
      WHERE e.table_id = k.table_id AND e.seq > k.known AND e.seq >= 1
   ) a
),
rb AS (
  SELECT m.match_id, x.seq, x.body FROM (
    SELECT DISTINCT v.match_id FROM v
     WHERE v.type IN {_RESULT_IN} AND v.match_id IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM clash WHERE clash.g = v.g)
  ) m CROSS JOIN LATERAL (
    SELECT e.seq, e.body::text AS body FROM event e
     WHERE e.match_id = m.match_id AND e.type IN {_RESULT_IN} OFFSET 0
  ) x
),
race AS (
  SELECT v.id FROM v
   WHERE NOT EXISTS (SELECT 1 FROM clash WHERE clash.g = v.g)
     AND NOT EXISTS (SELECT 1 FROM ins WHERE ins.id = v.id)
     AND NOT EXISTS (SELECT 1 FROM dup WHERE dup.id = v.id)
   LIMIT 1
)
SELECT 'i'::text, id::text, NULL::text, NULL::text, NULL::bigint, NULL::bigint FROM ins
UNION ALL SELECT 'd', id, NULL, NULL, NULL, NULL FROM dup
UNION ALL SELECT 'c', id, why, other, g, NULL FROM clash
UNION ALL SELECT 'a', table_id, NULL, c::text, m, NULL FROM agg
UNION ALL SELECT 'r', body, NULL, NULL, match_id, seq FROM rb
UNION ALL SELECT 'x', NULL, NULL, NULL, ('{_RACE} ' || id)::bigint, NULL FROM race
"""

_ROUNDS = """
SELECT m.table_id, r.number, m.id FROM match m JOIN round r ON m.round_id = r.id
 WHERE m.table_id = ANY(%(tables)s::text[]) AND r.number = ANY(%(numbers)s::int[])
"""

_UPDATE_MATCHES = """
UPDATE match AS m SET status = u.status, winner = u.winner, level_ns = u.level_ns,
       level_ew = u.level_ew, deals_played = u.deals_played, fouls_ns = u.fouls_ns,
       fouls_ew = u.fouls_ew
  FROM unnest(%(id)s::int[], %(status)s::text[], %(winner)s::text[], %(level_ns)s::text[],
              %(level_ew)s::text[], %(deals_played)s::int[], %(fouls_ns)s::int[],
              %(fouls_ew)s::int[])
    AS u(id, status, winner, level_ns, level_ew, deals_played, fouls_ns, fouls_ew)
 WHERE m.id = u.id
"""

_DELETE_DEALS = "DELETE FROM deal WHERE match_id = ANY(%(matches)s::int[])"

_INSERT_DEALS = """
INSERT INTO deal (match_id, number, level, leader, finish_order, level_ns, level_ew, ended)
SELECT * FROM unnest(%(match_id)s::int[], %(number)s::int[], %(level)s::text[],
                     %(leader)s::text[], %(finish_order)s::text[], %(level_ns)s::text[],
                     %(level_ew)s::text[], %(ended)s::bool[])
"""

_SEQS = """
SELECT table_id, seq FROM event WHERE table_id = ANY(%(tables)s::text[]) AND seq >= 1
 ORDER BY table_id, seq
"""

_MATCH_COLS = ("status", "winner", "level_ns", "level_ew", "deals_played", "fouls_ns", "fouls_ew")
_DEAL_COLS = (
    "match_id",
    "number",
    "level",
    "leader",
    "finish_order",
    "level_ns",
    "level_ew",
    "ended",
)


class FallBack(Exception):
    """The group could not be stored as a whole: handle this request on its own."""


class _Race(Exception):
    """A row was skipped by a writer outside this group: roll back and retry the group."""


@dataclass
class _Request:
    table: str
    rows: dict[str, dict[str, Any]]
    future: asyncio.Future[IngestOutcome]
    tournament: int | None = None
    ordered: list[dict[str, Any]] = field(default_factory=list)


class GroupWriter:
    """``workers`` asyncio tasks, each with its own connection, storing the pending ingest
    requests of many tables per transaction. With more than one, two groups in flight never
    share a table or an event id, so a table's requests are still stored one after the other,
    in arrival order. One is the default: at 1000 tables a second worker made the groups
    smaller (more commits, more PostgreSQL CPU per event) and the latency no better."""

    def __init__(
        self, connect_kwargs: dict[str, Any], directory: Directory, workers: int = 1
    ) -> None:
        self._connect_kwargs = connect_kwargs
        self._directory = directory
        self._workers = workers
        self._pending: list[_Request] = []
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._conns: list[psycopg.AsyncConnection[Any] | None] = [None] * workers
        self._busy_tables: set[str] = set()
        self._busy_ids: set[str] = set()
        #: table -> M where seqs 1..M are known to be stored. The event log is append-only (no
        #: route deletes an event), so this stays true, whoever else writes; the seq count of a
        #: table then reads only the rows above M instead of all of them.
        self._gapless: dict[str, int] = {}
        #: groups stored, requests in them, groups handed back to the per-request path
        self.groups = 0
        self.requests = 0
        self.fallbacks = 0

    @classmethod
    def for_engine(cls, engine: Any, directory: Directory, workers: int = 1) -> GroupWriter:
        """A writer connecting like ``engine`` (a SQLAlchemy PostgreSQL engine) does."""
        _args, kwargs = engine.dialect.create_connect_args(engine.url)
        kwargs.pop("context", None)  # SQLAlchemy's adapters; the writer uses psycopg's own
        return cls(kwargs, directory, workers)

    def stats(self) -> dict[str, int]:
        return {"groups": self.groups, "requests": self.requests, "fallbacks": self.fallbacks}

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._run(i)) for i in range(self._workers)]

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            try:
                await task
            except asyncio.CancelledError:
                pass
        self._tasks = []
        for req in self._pending:
            if not req.future.done():
                req.future.set_exception(FallBack("the scoreboard is shutting down"))
        self._pending.clear()
        for i, conn in enumerate(self._conns):
            if conn is not None:
                await conn.close()
            self._conns[i] = None

    async def submit(self, table: str, rows: dict[str, dict[str, Any]]) -> IngestOutcome:
        """Store ``rows`` (one table's, from ``prepare_rows``) with the next group. Raises
        ApiError (409) for a conflict, FallBack when the request must go the per-request way."""
        if not self._tasks or any(t.done() for t in self._tasks):
            raise FallBack("the group writer is not running")
        future: asyncio.Future[IngestOutcome] = asyncio.get_running_loop().create_future()
        self._pending.append(_Request(table, rows, future))
        self._wake.set()
        return await future

    # ------------------------------------------------------------------ the writer tasks

    async def _run(self, worker: int) -> None:
        while True:
            group = self._take()
            if not group:
                # Nothing storable now (no awaits since _take: no wake-up is lost).
                self._wake.clear()
                await self._wake.wait()
                continue
            tables = {req.table for req in group}
            ids = {eid for req in group for eid in req.rows}
            self._busy_tables |= tables
            self._busy_ids |= ids
            try:
                await self._store_group(worker, group)
            except asyncio.CancelledError:  # shutting down: the requests go their own way
                for req in group:
                    if not req.future.done():
                        req.future.set_exception(FallBack("the scoreboard is shutting down"))
                raise
            finally:
                self._busy_tables -= tables
                self._busy_ids -= ids
                if self._pending:
                    self._wake.set()  # requests that waited for these tables may go now

    def _take(self) -> list[_Request]:
        """The pending requests that can share a transaction, in arrival order: one per table
        and none of a table in another group in flight (a table's later request waits for the
        next group), no event id twice, at most MAX_GROUP_EVENTS events."""
        group: list[_Request] = []
        rest: list[_Request] = []
        tables = set(self._busy_tables)
        ids = set(self._busy_ids)
        events = 0
        for req in self._pending:
            if req.future.done():
                continue
            if (
                req.table in tables
                or (group and events + len(req.rows) > MAX_GROUP_EVENTS)
                or not ids.isdisjoint(req.rows)
            ):
                rest.append(req)
                tables.add(req.table)  # keep the table's order: its later requests wait too
                continue
            group.append(req)
            tables.add(req.table)
            ids.update(req.rows)
            events += len(req.rows)
        self._pending = rest
        return group

    async def _connection(self, worker: int) -> psycopg.AsyncConnection[Any]:
        conn = self._conns[worker]
        if conn is None or conn.closed or conn.broken:
            if conn is not None:
                await conn.close()
            conn = await psycopg.AsyncConnection.connect(autocommit=True, **self._connect_kwargs)
            # The statements are prepared once (fixed text) and run with their generic plan (no
            # planning per group). Every lookup they make is a per-row LATERAL probe of an index;
            # with sequential scans off, a plan made while the event table was still small
            # cannot stay a sequential scan as the table grows.
            await conn.execute("SET plan_cache_mode = force_generic_plan")
            await conn.execute("SET enable_seqscan = off")
            self._conns[worker] = conn
        return conn

    async def _store_group(self, worker: int, group: list[_Request]) -> None:
        for attempt in range(3):
            conn: psycopg.AsyncConnection[Any] | None = None
            try:
                conn = await self._connection(worker)
                outcomes, gapless = await self._store(conn, group)
            except Exception as exc:  # noqa: BLE001 - each request then goes its own way
                if conn is not None and not conn.broken and not conn.closed:
                    try:
                        if conn.info.transaction_status != TransactionStatus.IDLE:
                            await conn.execute("ROLLBACK")
                    except psycopg.Error:
                        await conn.close()
                if isinstance(exc, _Race) or _RACE in str(exc):
                    log.info("group of %d met another writer (try %d)", len(group), attempt)
                    continue
                log.warning(
                    "group of %d requests failed (%s: %s); storing them one by one",
                    len(group),
                    type(exc).__name__,
                    exc,
                )
                break
            self._gapless.update(gapless)
            self.groups += 1
            self.requests += len(group)
            for req, outcome in zip(group, outcomes, strict=True):
                if req.future.done():
                    continue
                if isinstance(outcome, ApiError):
                    req.future.set_exception(outcome)
                else:
                    req.future.set_result(outcome)
            return
        self.fallbacks += 1
        for req in group:
            if not req.future.done():
                req.future.set_exception(FallBack("group commit failed"))

    async def _store(
        self, conn: psycopg.AsyncConnection[Any], group: list[_Request]
    ) -> tuple[list[IngestOutcome | ApiError], dict[str, int]]:
        """Without a match to re-derive: the combined statement alone (autocommit, atomic by
        itself), one round trip. With one: a transaction in two round trips, BEGIN + the
        combined statement, then the derived writes and COMMIT. The seqs of tables with a gap
        are read before the answers are made (rare: a kiosk sends in seq order)."""
        directory = self._directory
        # Which match each row belongs to: the match the event names (``match_id``, checked
        # against the table before), else the table's current match, or the match of the round
        # the event names (looked up before the transaction, as store_rows does).
        explicit: dict[tuple[str, int], int] = {}
        wanted = {
            (req.table, r["_round"])
            for req in group
            for r in req.rows.values()
            if r["_match"] is None and r["_round"] is not None and -_INT32 <= r["_round"] < _INT32
        }
        if wanted:
            cur = await conn.execute(
                _ROUNDS,
                {
                    "tables": sorted({t for t, _ in wanted}),
                    "numbers": sorted({n for _, n in wanted}),
                },
            )
            for table_id, number, match_id in await cur.fetchall():
                explicit[(table_id, number)] = match_id
        rows: list[list[Any]] = []
        for g, req in enumerate(group):
            default_match = directory.match_for(req.table)
            req.tournament = directory.tournament_of.get(req.table)
            req.ordered = sorted(req.rows.values(), key=lambda r: r["seq"])
            for r in req.ordered:
                rnd = r["_round"]
                if r["_match"] is not None:  # the match the event names (check_matches)
                    r["match_id"] = r["_match"]
                else:
                    r["match_id"] = default_match if rnd is None else explicit.get((req.table, rnd))
                rows.append(
                    [
                        g,
                        r["id"],
                        r["table_id"],
                        r["seq"],
                        r["deal"],
                        r["t"],
                        r["type"],
                        r["match_id"],
                        r["_text"],
                        r["digest"],
                    ]
                )
        params = {
            "rows": json.dumps(rows, ensure_ascii=False, allow_nan=False),
            "known": json.dumps([[req.table, self._gapless.get(req.table, 0)] for req in group]),
        }
        # A transaction only when a match is re-derived (its writes go with the insert); else
        # the one statement, atomic by itself, in autocommit: one round trip.
        needs_tx = any(
            r["match_id"] is not None and r["type"] in RESULT_TYPES
            for req in group
            for r in req.ordered
        )
        async with conn.pipeline() if needs_tx else contextlib.nullcontext():
            if needs_tx:
                await conn.execute("BEGIN")
            cur = await conn.execute(_STORE, params)
            result_rows = await cur.fetchall()
            inserted: set[str] = set()
            duplicates: set[str] = set()
            clashes: dict[int, list[dict[str, Any]]] = defaultdict(list)
            counted: dict[str, tuple[int, int]] = {}
            stored_results: dict[int, list[tuple[int, str]]] = defaultdict(list)
            for kind, key, why, other, num, seq in result_rows:
                if kind == "i":
                    inserted.add(key)
                elif kind == "d":
                    duplicates.add(key)
                elif kind == "c":
                    req = group[num]
                    if why == "content":
                        reason = "already stored with different content"
                    else:
                        reason = (
                            f"seq {req.rows[key]['seq']} of table {req.table!r} is event {other!r}"
                        )
                    clashes[num].append({"id": key, "reason": reason})
                elif kind == "a":
                    counted[key] = (int(other or 0), int(num or 0))
                else:
                    stored_results[num].append((seq, key))
            # A match is re-derived when this group stored a result-bearing event of it: its
            # result events are the snapshot's (rb) and the ones just inserted.
            rebuilt: dict[int, set[int]] = {}
            new_results: dict[int, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
            for g, req in enumerate(group):
                if g in clashes:
                    continue
                if any(eid not in inserted and eid not in duplicates for eid in req.rows):
                    raise _Race
                mids: set[int] = set()
                for r in req.ordered:
                    mid = r["match_id"]
                    if r["id"] in inserted and mid is not None and r["type"] in RESULT_TYPES:
                        mids.add(mid)
                        new_results[mid].append((r["seq"], r["body"]))
                rebuilt[g] = mids
            if new_results:
                assert needs_tx
                await self._rebuild(conn, new_results, stored_results)
            # Seq count/max after this group: the snapshot's plus what this group stored.
            tops: dict[int, tuple[int, int]] = {}
            gap_tables: list[str] = []
            for g, req in enumerate(group):
                if g in clashes:
                    continue
                count, top = counted.get(req.table, (0, 0))
                for r in req.ordered:
                    if r["id"] in inserted and r["seq"] >= 1:
                        count += 1
                        top = max(top, r["seq"])
                tops[g] = (count, top)
                if count < top:
                    gap_tables.append(req.table)
            seqs: dict[str, list[int]] = defaultdict(list)
            seq_cur = None
            if gap_tables:
                seq_cur = await conn.execute(_SEQS, {"tables": gap_tables})
            if needs_tx:
                await conn.execute("COMMIT")
            if seq_cur is not None:
                for table_id, seq in await seq_cur.fetchall():
                    seqs[table_id].append(seq)
        out: list[IngestOutcome | ApiError] = []
        gapless: dict[str, int] = {}
        for g, req in enumerate(group):
            if g in clashes:
                out.append(ApiError(409, _conflict_detail(clashes[g])))
                continue
            count, top = tops[g]
            missing = gaps(seqs[req.table]) if count < top else []
            gapless[req.table] = missing[0] - 1 if missing else top
            result = IngestResult(
                table=req.table,
                accepted=[eid for eid in req.rows if eid in inserted],
                duplicates=[eid for eid in req.rows if eid in duplicates],
                max_seq=top,
                missing=missing,
                missing_count=top - count,
            )
            new = [r for r in req.ordered if r["id"] in inserted]
            out.append(
                IngestOutcome(
                    result=result,
                    new_bodies=[dict(r["body"], _match=r["match_id"]) for r in new],
                    rebuilt_matches=rebuilt[g],
                    tournament=req.tournament,
                    new_texts=[body_text(r) for r in new],
                )
            )
        return out, gapless

    @staticmethod
    async def _rebuild(
        conn: psycopg.AsyncConnection[Any],
        new_results: dict[int, list[tuple[int, dict[str, Any]]]],
        stored_results: dict[int, list[tuple[int, str]]],
    ) -> None:
        """``service.rebuild_match`` for every match in ``new_results``, queued on the
        pipeline (the writes go with the COMMIT)."""
        matches = sorted(new_results)
        upd: dict[str, list[Any]] = {c: [] for c in ("id", *_MATCH_COLS)}
        deals: dict[str, list[Any]] = {c: [] for c in _DEAL_COLS}
        for match_id in matches:
            events = [(seq, json.loads(text)) for seq, text in stored_results.get(match_id, ())]
            events.extend(new_results[match_id])
            events.sort(key=lambda x: x[0])
            summary = match_summary([body for _, body in events])
            upd["id"].append(match_id)
            for c, v in match_values(summary).items():
                upd[c].append(v)
            for d in deal_rows(match_id, summary):
                for c in _DEAL_COLS:
                    deals[c].append(d[c])
        await conn.execute(_UPDATE_MATCHES, upd)
        await conn.execute(_DELETE_DEALS, {"matches": matches})
        if deals["match_id"]:
            await conn.execute(_INSERT_DEALS, deals)
