"""Group commit (PostgreSQL) and the fast ingest path.

The GroupWriter is driven in-process against a real PostgreSQL schema (so two requests are
known to share one transaction); the HTTP tests run against real servers on SQLite and
PostgreSQL like the rest of tests/scoreboard."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import psycopg
import pytest
from pydantic import TypeAdapter
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from kiosk.scoreboard import service
from kiosk.scoreboard.db import make_engine, session_factory, upgrade
from kiosk.scoreboard.groupcommit import FallBack, GroupWriter
from kiosk.scoreboard.models import Deal, EventRow, Match
from kiosk.scoreboard.schemas import Event
from kiosk.scoreboard.service import ApiError, IngestOutcome
from kiosk.scoreboard.settings import normalise_db_url

from .conftest import PG_BASE
from .helpers import Server, ev, match_events, new_tournament

EVENT = TypeAdapter(Event)


@pytest.fixture(scope="module")
def pg(pg_schema_url: str) -> Iterator[tuple[Engine, sessionmaker[Session]]]:
    engine = make_engine(normalise_db_url(pg_schema_url))
    upgrade(engine)
    try:
        yield engine, session_factory(engine)
    finally:
        engine.dispose()


def _setup(sf: sessionmaker[Session], tables: int) -> tuple[service.Directory, list[str]]:
    """A tournament with ``tables`` tables and an open round (a match per table)."""
    with sf() as s:
        t = service.create_tournament(s, "group commit", "swiss-421", 7)
        ids = []
        for i in range(tables):
            gt, _token = service.add_table(s, t.id, f"G{t.id}-{i}")
            ids.append(gt.id)
        for i in range(2 * tables):
            service.add_pair(s, t.id, f"P{i}")
        service.create_round(s, t.id, None)
    return service.Directory(sf), ids


def _rows(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return service.prepare_rows([EVENT.validate_python(e) for e in events])


def _writer(engine: Engine, directory: service.Directory, workers: int = 2) -> GroupWriter:
    """Two workers by default here: their table/id exclusion is exercised too."""
    return GroupWriter.for_engine(engine, directory, workers)


async def _submit_together(
    writer: GroupWriter, requests: list[tuple[str, dict[str, dict[str, Any]]]]
) -> list[IngestOutcome | BaseException]:
    """Submit all requests in one go: the workers see them pending together."""
    return await asyncio.gather(
        *(writer.submit(t, rows) for t, rows in requests), return_exceptions=True
    )


def _stored(sf: sessionmaker[Session], table: str) -> list[tuple[int, str]]:
    with sf() as s:
        return [
            (seq, eid)
            for seq, eid in s.execute(
                select(EventRow.seq, EventRow.id)
                .where(EventRow.table_id == table)
                .order_by(EventRow.seq)
            ).all()
        ]


def test_one_table_conflicting_never_fails_the_others_in_its_group(
    pg: tuple[Engine, sessionmaker[Session]],
) -> None:
    engine, sf = pg
    directory, (a, b, c) = _setup(sf, 3)

    async def main() -> None:
        writer = _writer(engine, directory)
        await writer.start()
        try:
            first = await _submit_together(
                writer,
                [
                    (b, _rows([ev(b, 1, "pass", seat="S")])),
                    (c, _rows([ev(c, 1, "pass", seat="S")])),
                ],
            )
            assert all(isinstance(x, IngestOutcome) for x in first), first
            groups = writer.groups
            out = await _submit_together(
                writer,
                [
                    # a: new events, fine
                    (
                        a,
                        _rows(
                            [
                                ev(a, 1, "deal_started", level="2", leader="S"),
                                ev(a, 2, "pass", seat="E"),
                            ]
                        ),
                    ),
                    # b: seq 1 is taken by another id, and a new event with it: all of b refused
                    (
                        b,
                        _rows(
                            [
                                dict(ev(b, 1, "pass", seat="S"), id="other"),
                                ev(b, 2, "pass", seat="E"),
                            ]
                        ),
                    ),
                    # c: same id, other content
                    (c, _rows([ev(c, 1, "pass", seat="N")])),
                ],
            )
            assert writer.groups == groups + 1, "the three requests were not stored as one group"
            assert writer.fallbacks == 0
        finally:
            await writer.close()
        ok, conflict_b, conflict_c = out
        assert isinstance(ok, IngestOutcome)
        assert ok.result.accepted == [f"{a}-1", f"{a}-2"] and ok.result.missing == []
        assert ok.result.max_seq == 2 and ok.result.missing_count == 0
        assert ok.rebuilt_matches and ok.tournament is not None
        assert isinstance(conflict_b, ApiError) and conflict_b.status == 409
        assert conflict_b.detail["conflicts"] == [
            {"id": "other", "reason": f"seq 1 of table {b!r} is event '{b}-1'"}
        ]
        assert isinstance(conflict_c, ApiError) and conflict_c.status == 409
        assert conflict_c.detail["conflicts"] == [
            {"id": f"{c}-1", "reason": "already stored with different content"}
        ]

    asyncio.run(main())
    assert _stored(sf, a) == [(1, f"{a}-1"), (2, f"{a}-2")]
    assert _stored(sf, b) == [(1, f"{b}-1")]  # b-2 was not stored: all or nothing
    assert _stored(sf, c) == [(1, f"{c}-1")]


def test_gaps_duplicates_and_the_match_rebuilt_like_the_per_request_path(
    pg: tuple[Engine, sessionmaker[Session]],
) -> None:
    engine, sf = pg
    directory, (a, b) = _setup(sf, 2)
    evs = match_events(a, "NS", {"NS": "5", "EW": "3"}, deals=2, fouls=["E"])
    # the same match for table b, stored one request at a time by the per-request path
    for e in match_events(b, "NS", {"NS": "5", "EW": "3"}, deals=2, fouls=["E"]):
        service.store_rows(sf, directory, b, _rows([e]))

    async def main() -> list[Any]:
        writer = _writer(engine, directory)
        await writer.start()
        try:
            answers = []
            # seqs 1, 2 and 5..7 first: 3 and 4 are missing
            answers.append(await writer.submit(a, _rows(evs[0:2] + evs[4:7])))
            answers.append(await writer.submit(a, _rows(evs[2:3])))  # 3 arrives
            # a retry of what is stored plus 4: duplicates and the gap closed
            answers.append(await writer.submit(a, _rows(evs[0:4])))
            answers.append(await writer.submit(a, _rows(evs[7:])))
            assert writer.fallbacks == 0
            return answers
        finally:
            await writer.close()

    first, second, third, last = asyncio.run(main())
    assert first.result.missing == [3, 4] and first.result.missing_count == 2
    assert first.result.max_seq == 7
    assert second.result.missing == [4] and second.result.missing_count == 1
    assert third.result.accepted == [evs[3]["id"]]
    assert third.result.duplicates == [e["id"] for e in evs[0:3]]
    assert third.result.missing == [] and third.result.max_seq == 7
    assert last.result.missing == [] and last.result.max_seq == len(evs)
    assert [b["seq"] for b in last.new_bodies] == list(range(8, len(evs) + 1))

    def derived(table: str) -> tuple[Any, list[Any]]:
        with sf() as s:
            m = s.execute(select(Match).where(Match.table_id == table)).scalar_one()
            deals = s.execute(
                select(
                    Deal.number,
                    Deal.level,
                    Deal.leader,
                    Deal.finish_order,
                    Deal.level_ns,
                    Deal.level_ew,
                    Deal.ended,
                )
                .where(Deal.match_id == m.id)
                .order_by(Deal.number)
            ).all()
            cols = (
                m.status,
                m.winner,
                m.level_ns,
                m.level_ew,
                m.deals_played,
                m.fouls_ns,
                m.fouls_ew,
            )
            return cols, [tuple(d) for d in deals]

    assert derived(a) == derived(b)
    assert derived(a)[0] == ("finished", "NS", "5", "3", 2, 0, 1)


def test_a_row_another_writer_stores_meanwhile_is_a_conflict_and_stores_nothing(
    pg: tuple[Engine, sessionmaker[Session]], pg_schema_url: str
) -> None:
    """Another writer (another process, or the per-request path) inserts an id of a pending
    request after the group statement's snapshot: the statement waits for it, must not store
    the rest of that request, and the retried group answers 409 for it alone."""
    engine, sf = pg
    directory, (a, b) = _setup(sf, 2)
    schema = pg_schema_url.split("search_path%3D", 1)[1]
    other = psycopg.connect(PG_BASE, options=f"-csearch_path={schema}")
    other.execute(
        "INSERT INTO event (id, table_id, seq, deal, t, type, match_id, body, digest, "
        "received_at) VALUES (%s, %s, 1, 1, 1.0, 'pass', NULL, '{}', 'not the same', now())",
        (f"{b}-1", b),
    )  # not committed yet: the group's snapshot does not see it

    async def main() -> list[Any]:
        writer = _writer(engine, directory)
        await writer.start()
        try:
            task = asyncio.ensure_future(
                _submit_together(
                    writer,
                    [
                        (a, _rows([ev(a, 1, "pass", seat="S")])),
                        (b, _rows([ev(b, 1, "pass", seat="S"), ev(b, 2, "pass", seat="E")])),
                    ],
                )
            )
            await asyncio.sleep(1.0)  # the statement now waits for the other insert
            assert not task.done()
            other.commit()
            out = await task
            assert writer.fallbacks == 0 and writer.groups == 1
            return out
        finally:
            await writer.close()
            other.close()

    ok, conflict = asyncio.run(main())
    assert isinstance(ok, IngestOutcome) and ok.result.accepted == [f"{a}-1"]
    assert isinstance(conflict, ApiError) and conflict.status == 409
    assert conflict.detail["conflicts"] == [
        {"id": f"{b}-1", "reason": "already stored with different content"}
    ]
    assert _stored(sf, a) == [(1, f"{a}-1")]
    assert _stored(sf, b) == [(1, f"{b}-1")]  # the other writer's row, and not b-2


def test_a_tables_requests_are_stored_in_order_across_workers(
    pg: tuple[Engine, sessionmaker[Session]],
) -> None:
    """Two requests of one table pending together: the second waits for the first one's group
    (never two groups of a table in flight), so its answer counts the first one's seqs."""
    engine, sf = pg
    directory, (a, b) = _setup(sf, 2)

    async def main() -> list[Any]:
        writer = _writer(engine, directory, workers=2)
        await writer.start()
        try:
            out = await _submit_together(
                writer,
                [
                    (a, _rows([ev(a, s, "pass", seat="S") for s in (1, 2, 3)])),
                    (a, _rows([ev(a, s, "pass", seat="S") for s in (4, 5)])),
                    (b, _rows([ev(b, 1, "pass", seat="S")])),
                    (a, _rows([ev(a, 6, "pass", seat="S")])),
                ],
            )
            assert writer.groups == 3 and writer.fallbacks == 0
            return out
        finally:
            await writer.close()

    first, second, other, third = asyncio.run(main())
    assert (first.result.max_seq, first.result.missing) == (3, [])
    assert (second.result.max_seq, second.result.missing) == (5, [])
    assert (third.result.max_seq, third.result.missing) == (6, [])
    assert other.result.accepted == [f"{b}-1"]
    assert [seq for seq, _ in _stored(sf, a)] == [1, 2, 3, 4, 5, 6]


def test_a_failed_group_hands_each_request_back(
    pg: tuple[Engine, sessionmaker[Session]],
) -> None:
    engine, sf = pg
    directory, (a, b) = _setup(sf, 2)

    class Failing(GroupWriter):
        async def _store(self, conn: Any, group: Any) -> Any:
            raise psycopg.errors.DeadlockDetected("as if PostgreSQL had cancelled the group")

    async def main() -> list[Any]:
        writer = Failing.for_engine(engine, directory)
        await writer.start()
        try:
            out = await _submit_together(
                writer,
                [
                    (a, _rows([ev(a, 1, "pass", seat="S")])),
                    (b, _rows([ev(b, 1, "pass", seat="S")])),
                ],
            )
            assert writer.fallbacks == 1 and writer.groups == 0
            return out
        finally:
            await writer.close()

    out = asyncio.run(main())
    assert all(isinstance(x, FallBack) for x in out), out
    assert _stored(sf, a) == [] and _stored(sf, b) == []


# ------------------------------------------------------------------ over HTTP


def test_many_tables_at_once_one_conflicting(server: Server) -> None:
    t = new_tournament(server, tables=12)
    tables = t["tables"]
    bad = tables[5]
    with server.client(t["tokens"][bad]) as c:
        assert c.post("/api/v1/events", json=ev(bad, 1, "pass", seat="S")).status_code == 200

    def post(table: str) -> httpx.Response:
        with server.client(t["tokens"][table]) as c:
            if table == bad:
                return c.post(
                    "/api/v1/events/batch",
                    json=[ev(bad, 1, "pass", seat="N"), ev(bad, 2, "pass", seat="E")],
                )
            return c.post(
                "/api/v1/events/batch", json=[ev(table, s, "pass", seat="S") for s in (1, 2, 3)]
            )

    for _round in range(3):  # concurrent posts land in shared groups on PostgreSQL
        with ThreadPoolExecutor(len(tables)) as pool:
            answers = dict(zip(tables, pool.map(post, tables), strict=True))
        for table, r in answers.items():
            if table == bad:
                assert r.status_code == 409, r.text
                assert r.json()["detail"]["conflicts"][0]["id"] == f"{bad}-1"
            else:
                assert r.status_code == 200, r.text
                body = r.json()
                assert body["max_seq"] == 3 and body["missing"] == []
                assert sorted(body["accepted"] + body["duplicates"]) == [
                    f"{table}-{s}" for s in (1, 2, 3)
                ]
    with server.client(t["tokens"][bad]) as c:
        stored = c.get(f"/api/v1/tables/{bad}/events").json()
    assert [(e["seq"], e["seat"]) for e in stored] == [(1, "S")]
    health = httpx.get(server.url + "/healthz").json()
    if health["db"] == "postgresql":
        assert health["group_commit"]["groups"] > 0
        assert health["group_commit"]["fallbacks"] == 0


def test_fast_path_and_routes_answer_alike(server: Server) -> None:
    """application/json is answered by the fast path; +json content types and bodies the fast
    path does not take go through the FastAPI routes: same stored events, same answers."""
    t = new_tournament(server)
    table = t["tables"][0]
    token = t["tokens"][table]
    headers = {"Authorization": f"Bearer {token}"}
    e1 = ev(table, 1, "pass", seat="S")
    e2 = ev(table, 2, "pass", seat="E")
    fast = httpx.post(
        server.url + "/api/v1/events",
        content=json.dumps(e1),
        headers={**headers, "Content-Type": "application/json; charset=utf-8"},
    )
    routed = httpx.post(
        server.url + "/api/v1/events",
        content=json.dumps(e2),
        headers={**headers, "Content-Type": "application/vnd.guandan+json"},
    )
    assert fast.status_code == routed.status_code == 200
    assert fast.headers["content-type"] == routed.headers["content-type"] == "application/json"
    assert fast.json() == {
        "table": table,
        "accepted": [e1["id"]],
        "duplicates": [],
        "max_seq": 1,
        "missing": [],
        "missing_count": 0,
    }
    assert routed.json() == {
        "table": table,
        "accepted": [e2["id"]],
        "duplicates": [],
        "max_seq": 2,
        "missing": [],
        "missing_count": 0,
    }
    # the same retry both ways: same answer, byte for byte
    again = [
        httpx.post(
            server.url + "/api/v1/events/batch",
            content=json.dumps([e1, e2]),
            headers={**headers, "Content-Type": ctype},
        )
        for ctype in ("application/json", "application/vnd.guandan+json")
    ]
    assert again[0].status_code == again[1].status_code == 200
    assert again[0].content == again[1].content
    # errors the fast path leaves to the routes keep their shape
    r = httpx.post(
        server.url + "/api/v1/events",
        content=b"{not json",
        headers={**headers, "Content-Type": "application/json"},
    )
    assert r.status_code == 422 and "message" in r.json()
    r = httpx.post(server.url + "/api/v1/events", json=dict(e1, seq=-1), headers=headers)
    assert r.status_code == 422 and "field 'seq'" in r.json()["message"]
    r = httpx.post(server.url + "/api/v1/events", json=e1, headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Basic")
    r = httpx.post(server.url + "/api/v1/events", json=dict(e1, seat="N"), headers=headers)
    assert r.status_code == 409 and r.json()["detail"]["conflicts"][0]["id"] == e1["id"]


def test_the_open_rounds_matches_are_known_without_a_lookup_per_table(
    pg: tuple[Engine, sessionmaker[Session]],
) -> None:
    """At a round's start every table's first event names a match made since the last reload.
    The directory's reload learns the open matches' tables, so those events need no query of
    their own (1,000 such queries queued at once gave the load bench's round a 1.4 s p99)."""
    _engine, sf = pg
    directory, ids = _setup(sf, 4)
    first = [
        EVENT.validate_python(dict(e, match_id=directory.match_for(t)))
        for t in ids
        for e in match_events(directory.code(t), "NS", {"NS": "3", "EW": "2"})[:1]
    ]
    assert all(e.match_id is not None for e in first)
    assert not service.needs_match_lookup(directory, first)
    for t, e in zip(ids, first, strict=True):
        service.check_matches(directory, t, [e])  # no 409: each is its own table's match
    with pytest.raises(ApiError) as err:
        service.check_matches(directory, ids[0], [first[1]])
    assert err.value.status == 409
