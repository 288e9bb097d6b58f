"""Several `guandan scoreboard serve` processes on one PostgreSQL act as one scoreboard (issue 42,
"past one process"): two real processes on two ports, a fresh schema of their own. Events stored
through one reach the live stream of the other (LISTEN/NOTIFY), a token made or rotated through
one (or by the CLI) counts on the other at once, standings agree. Skipped without PostgreSQL."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import pg_schema
from .helpers import REPO, Server, match_events, new_tournament

#: what the issue asks: a page served by one process shows another's events within a second
LIVE_WITHIN_S = 1.0


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    yield from pg_schema("gd_multi")


@pytest.fixture(scope="module")
def two(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Server]]:
    logs = tmp_path_factory.mktemp("multi")
    a = Server(pg_url, log=Path(logs) / "a.log").start()
    try:
        b = Server(pg_url, log=Path(logs) / "b.log").start()  # migrations already done by a
        try:
            yield a, b
        finally:
            b.stop()
    finally:
        a.stop()


class Stream(threading.Thread):
    """A live stream read in the background: (arrival time, kind, data) on ``items``."""

    def __init__(self, srv: Server, tournament: int) -> None:
        super().__init__(daemon=True)
        self.srv, self.tournament = srv, tournament
        self.items: queue.Queue[tuple[float, str, Any]] = queue.Queue()

    def run(self) -> None:
        try:
            self._read()
        except httpx.HTTPError:  # the server stopped at the end of the module
            pass

    def _read(self) -> None:
        with (
            httpx.Client(base_url=self.srv.url, timeout=60) as c,
            c.stream("GET", "/api/v1/stream", params={"tournament": self.tournament}) as resp,
        ):
            kind = None
            for line in resp.iter_lines():
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: ") and kind:
                    self.items.put((time.monotonic(), kind, json.loads(line[6:])))

    def wait_for(self, kind: str, pred: Any, timeout: float = 10.0) -> tuple[float, Any]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {kind!r} on the stream of {self.srv.url} in {timeout}s")
            try:
                at, k, data = self.items.get(timeout=left)
            except queue.Empty:
                continue
            if k == kind and pred(data):
                return at, data


def _setup(srv: Server, tables: int = 1, pairs: int = 2) -> dict[str, Any]:
    t = new_tournament(srv, tables=tables, pairs=pairs)
    with srv.client() as c:
        assert c.post(f"/api/v1/tournaments/{t['id']}/rounds", json={}).status_code == 201
    return t


def test_events_stored_by_one_process_reach_the_others_stream(two: tuple[Server, Server]) -> None:
    a, b = two
    t = _setup(a)
    tid, table = t["id"], t["tables"][0]
    token = t["tokens"][table]
    evs = match_events(table, "NS", {"NS": "6", "EW": "2"}, deals=2)
    stream = Stream(b, tid)
    stream.start()
    _, snap = stream.wait_for("snapshot", lambda d: True)
    assert snap["tables"][0]["last_seq"] == 0
    # A few events through a (their bodies travel in the notification).
    start = time.monotonic()
    with a.client(token) as k:
        assert k.post("/api/v1/events/batch", json=evs[:3]).status_code == 200
    at, data = stream.wait_for("table", lambda d: d["last_seq"] == 3)
    assert at - start < LIVE_WITHIN_S, f"b showed a's events after {at - start:.3f}s"
    assert data["table"] == table and data["deal"] == 1
    # The rest in one batch with padding: too big for a notification, so b re-reads the table.
    rest = [dict(e, note="x" * 400) for e in evs[3:]]
    assert len(json.dumps(rest)) > 8000
    start = time.monotonic()
    with a.client(token) as k:
        assert k.post("/api/v1/events/batch", json=rest).status_code == 200
    at, data = stream.wait_for("table", lambda d: d["last_seq"] == len(evs))
    assert at - start < LIVE_WITHIN_S, f"b showed a's events after {at - start:.3f}s"
    assert data["match_over"] and data["winner"] == "NS"
    # The result changed: b pushes the standings it reads from the shared database.
    _, st = stream.wait_for("standings", lambda d: d["standings"][0]["points"] == 2)
    with a.client() as ca, b.client() as cb:
        sa = ca.get(f"/api/v1/tournaments/{tid}/standings").json()["standings"]
        sb = cb.get(f"/api/v1/tournaments/{tid}/standings").json()["standings"]
        assert sa == sb == st["standings"]
        assert sa[0]["level_diff"] == 4
        # b's own summary of the table (its cache kept up by the notifications)
        assert cb.get(f"/api/v1/tables/{table}/state").json()["last_seq"] == len(evs)
        peers = cb.get("/healthz").json()["peers"]
        assert peers["received"] >= 2 and peers["dropped"] == 0


def test_a_table_ingesting_through_both_processes(two: tuple[Server, Server]) -> None:
    """A kiosk behind a proxy may reach either process: both streams see every event."""
    a, b = two
    t = _setup(a)
    tid, table = t["id"], t["tables"][0]
    token = t["tokens"][table]
    evs = match_events(table, "EW", {"NS": "2", "EW": "4"}, deals=1)
    sa, sb = Stream(a, tid), Stream(b, tid)
    sa.start()
    sb.start()
    sa.wait_for("snapshot", lambda d: True)
    sb.wait_for("snapshot", lambda d: True)
    for i, e in enumerate(evs):
        with (a if i % 2 else b).client(token) as k:
            assert k.post("/api/v1/events", json=e).status_code == 200
    for s in (sa, sb):
        _, data = s.wait_for("table", lambda d: d["last_seq"] == len(evs) and d["match_over"])
        assert data["winner"] == "EW"
    with a.client(token) as k:
        assert k.get(f"/api/v1/tables/{table}/missing").json()["missing"] == []


def test_tokens_made_or_rotated_through_one_count_on_the_other(
    two: tuple[Server, Server],
) -> None:
    a, b = two
    t = _setup(a)
    tid = t["id"]
    # A table added through a: its token works on b straight away.
    with a.client() as c:
        r = c.post(f"/api/v1/tournaments/{tid}/tables", json={"id": f"N-{uuid.uuid4().hex[:6]}"})
        assert r.status_code == 201
        new, token = r.json()["id"], r.json()["token"]
    evs = match_events(new, "NS", {"NS": "3", "EW": "2"}, deals=1)
    with b.client(token) as k:
        r = k.post("/api/v1/events/batch", json=evs[:2])
        assert r.status_code == 200, r.text
    # Rotated through b: the old token is refused on a at once (a's copy is fresh: it was
    # just used there, so only the notification can tell a), the new one works.
    with a.client(token) as k:
        assert k.post("/api/v1/events", json=evs[2]).status_code == 200
    with b.client() as c:
        fresh = c.post(f"/api/v1/tables/{new}/token").json()["token"]
    with a.client(token) as k:
        r = k.post("/api/v1/events", json=evs[3])
        assert r.status_code == 401, r.text
        assert "invalid table token" in r.json()["detail"]
    with a.client(fresh) as k:
        assert k.post("/api/v1/events", json=evs[3]).status_code == 200
    # Rotated by the CLI (a third process on the database): both servers follow at once.
    with b.client(fresh) as k:
        assert k.post("/api/v1/events", json=evs[4]).status_code == 200
    out = subprocess.run(
        [sys.executable, "-m", "kiosk", "scoreboard", "rotate-token", "--db", a.db, "--table", new],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    cli_token = out.stdout.strip().splitlines()[-1].split()[-1]
    for srv in (a, b):
        with srv.client(fresh) as k:
            assert k.post("/api/v1/events", json=evs[5]).status_code == 401
    with b.client(cli_token) as k:
        assert k.post("/api/v1/events", json=evs[5]).status_code == 200
    # Nothing lost or doubled whichever process stored what.
    with a.client(cli_token) as k:
        got = k.get(f"/api/v1/tables/{new}/events", params={"after_seq": 0}).json()
    seqs = [e["seq"] for e in got]
    assert seqs == list(range(1, 7))


def test_match_decisions_through_one_route_events_on_the_other(
    two: tuple[Server, Server],
) -> None:
    """The current match of a table (for events without match_id) follows a round opened
    through the other process at once."""
    a, b = two
    t = _setup(a, tables=2, pairs=4)
    tid, table, other = t["id"], t["tables"][0], t["tables"][1]
    token = t["tokens"][table]
    with b.client(token) as k:
        first = k.get(f"/api/v1/tables/{table}/assignment").json()["current"]["match_id"]
    with b.client(t["tokens"][other]) as k:
        first_other = k.get(f"/api/v1/tables/{other}/assignment").json()["current"]["match_id"]
    with a.client() as c:
        r = c.post(
            f"/api/v1/tournaments/{tid}/rounds/1/close",
            json={
                "decisions": [
                    {"match": first, "decision": "void"},
                    {"match": first_other, "decision": "void"},
                ]
            },
        )
        assert r.status_code == 200, r.text
        assert c.post(f"/api/v1/tournaments/{tid}/rounds", json={}).status_code == 201
    evs = match_events(table, "NS", {"NS": "3", "EW": "2"}, deals=1)
    with b.client(token) as k:
        assert k.post("/api/v1/events/batch", json=evs[:2]).status_code == 200
        second = k.get(f"/api/v1/tables/{table}/assignment").json()["current"]["match_id"]
    assert second != first
    with a.client() as c:
        rounds = c.get(f"/api/v1/tournaments/{tid}/rounds").json()
    by_id = {m["id"]: m for rnd in rounds for m in rnd["matches"]}
    assert by_id[first]["decision"] == "void"
    assert by_id[second]["status"] == "playing" and by_id[first]["play_status"] == "pending"
    assert by_id[first]["status"] == "decided" and by_id[first]["ruling"]["kind"] == "void"
