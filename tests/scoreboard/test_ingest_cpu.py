"""What the ingest path's CPU cuts (issue 42's load target) must keep: unstorable text is still
refused with the field named, the stored text and digest are unchanged, and a finished match
reloads the token directory only when it can change its table's current match."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from kiosk.scoreboard import service
from kiosk.scoreboard.db import make_engine, session_factory, upgrade
from kiosk.scoreboard.fold import TableState
from kiosk.scoreboard.live import LiveHub
from kiosk.scoreboard.schemas import Event, event_body
from kiosk.scoreboard.service import ApiError, prepare_rows

from .conftest import pg_schema
from .helpers import Server, ev, match_events, new_tournament

EVENT = TypeAdapter(Event)


def _rows(*events: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return prepare_rows([EVENT.validate_python(e) for e in events], "T1")


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"note": "a\u0000b"}, "event.note"),
        ({"extra": {"deep": ["ok", "x\u0000"]}}, "event.extra.deep[1]"),
        ({"extra": {"k\u0000": 1}}, "event.extra.<key>"),
        ({"note": "half \ud800 a pair"}, "event.note"),
        ({"extra": {"deep": ["\udc00"]}}, "event.extra.deep[0]"),
    ],
)
def test_unstorable_text_is_refused_naming_the_field(fields: dict[str, Any], where: str) -> None:
    with pytest.raises(ApiError) as exc:
        _rows(ev("T1", 1, "pass", seat="S", **fields))
    assert exc.value.status == 422
    assert f"field {where} " in str(exc.value.detail) and "'T1-1'" in str(exc.value.detail)


def test_text_that_only_looks_like_a_nul_is_stored() -> None:
    """A backslash and "u0000" typed as text is storable (its canonical text has \\\\u0000)."""
    rows = _rows(ev("T1", 1, "pass", seat="S", note="C:\\u0000 path", who="王"))
    row = rows["T1-1"]
    assert json.loads(row["_text"])["note"] == "C:\\u0000 path"


def test_stored_text_and_digest_are_the_canonical_ones() -> None:
    e = ev("T1", 3, "play", seat="N", cards=["h2", "♠3"], combo="pair", note="王 x")
    row = _rows(e)["T1-3"]
    body = event_body(EVENT.validate_python(e))
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert row["_text"] == text and row["body"] == body
    assert row["digest"] == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert body["cards"] == ["H2", "S3"]


def test_a_finished_match_moves_the_current_match_only_when_let_go_on(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'sb.db'}")
    upgrade(engine)
    sf = session_factory(engine)
    try:
        with sf() as s:
            t = service.create_tournament(s, "directory", "swiss-421", 7)
            for table in ("D1", "D2"):
                service.add_table(s, t.id, table)
            for i in range(4):
                service.add_pair(s, t.id, f"P{i}")
            r1 = service.create_round(s, t.id, None)
            m1, m2 = (m.id for m in r1.matches if m.pair_ns_id is not None)
            tid = t.id
        d = service.Directory(sf)
        assert d.match_for("D1") == m1
        # Open round: a match that ends stays its table's current match.
        assert not d.moves_current([m1])
        assert not d.moves_current([m1, m2])
        assert d.moves_current([None])  # unknown match: reload to be safe
        assert d.moves_current([m1, 999999])
        # Round 1 closed with D1's match let go on (wait), round 2 opened: D1's current match
        # is still the round-1 one, and its end moves D1 on to its round-2 match.
        with sf() as s:
            service.close_round(s, tid, 1, [(m1, "wait", ""), (m2, "void", "")])
            r2 = service.create_round(s, tid, None)
            later = {m.table_id: m.id for m in r2.matches if m.table_id}
        d.invalidate()
        assert d.match_for("D1") == m1 and d.match_for("D2") == later["D2"]
        assert d.moves_current([m1])
        assert not d.moves_current([later["D1"], later["D2"]])
    finally:
        engine.dispose()


def test_a_summary_never_skips_a_seq() -> None:
    """An event whose seq is not the next one (stored by a process that did not know this one
    yet, or a resent gap) makes the hub re-read the table instead of skipping a seq."""
    loads: list[tuple[str, int | None]] = []

    async def load(table: str, match_id: int | None) -> TableState:
        loads.append((table, match_id))
        state = TableState(table=table, match_id=match_id)
        state.last_seq = 9  # what the database holds
        return state

    async def standings(_t: int) -> dict[str, Any]:
        return {}

    async def run() -> None:
        hub = LiveHub(load, standings, 0.0)
        hub.subscribe(None)
        state = TableState(table="T1", match_id=7)
        state.last_seq = 3
        hub.tables["T1"] = state

        def body(seq: int) -> dict[str, Any]:
            return dict(ev("T1", seq, "pass", seat="S"), _match=7)

        await hub.apply(1, "T1", [body(4)], False)  # the next seq: applied
        assert hub.tables["T1"] is state and state.last_seq == 4 and loads == []
        await hub.apply(1, "T1", [body(6)], False)  # 5 skipped: re-read
        assert loads == [("T1", 7)] and hub.tables["T1"].last_seq == 9

    asyncio.run(run())


def test_a_process_alone_notifies_nobody_until_another_starts(tmp_path: Path) -> None:
    """A serve process alone on its PostgreSQL sends no live notifications (it would only
    notify itself); once a second process says hello, both know each other and events go out."""
    schema = pg_schema("gd_alone")
    url = next(schema)
    try:
        a = Server(url, log=tmp_path / "a.log").start()
        try:
            t = new_tournament(a, tables=1, pairs=2)
            table, token = t["tables"][0], t["tokens"][t["tables"][0]]
            with a.client() as c:
                assert c.post(f"/api/v1/tournaments/{t['id']}/rounds", json={}).is_success
            evs = match_events(table, "NS", {"NS": "3", "EW": "2"}, deals=1)
            with a.client(token) as k:
                assert k.post("/api/v1/events/batch", json=evs[:3]).status_code == 200
            with a.client() as c:
                peers = c.get("/healthz").json()["peers"]
            assert (peers["sent"], peers["others"]) == (0, 0), peers
            b = Server(url, log=tmp_path / "b.log").start()
            try:
                with a.client() as ca, b.client() as cb:
                    for _ in range(100):
                        pa = ca.get("/healthz").json()["peers"]
                        pb = cb.get("/healthz").json()["peers"]
                        if pa["others"] and pb["others"]:
                            break
                        time.sleep(0.05)
                    assert (pa["others"], pb["others"]) == (1, 1), (pa, pb)
                    # b's summary of the table, cached: only a's notification moves it on
                    assert cb.get(f"/api/v1/tables/{table}/state").json()["last_seq"] == 3
                    with a.client(token) as k:
                        assert k.post("/api/v1/events/batch", json=evs[3:6]).status_code == 200
                    for _ in range(100):
                        state = cb.get(f"/api/v1/tables/{table}/state").json()
                        if state["last_seq"] == 6:
                            break
                        time.sleep(0.05)
                    assert state["last_seq"] == 6, state
                    assert ca.get("/healthz").json()["peers"]["sent"] >= 1
            finally:
                b.stop()
        finally:
            a.stop()
    finally:
        schema.close()
