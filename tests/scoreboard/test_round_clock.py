"""The round clock of time-limited rounds (issue 42): start, pause, resume, the call of time by
the organiser or by the limit, shown on the scoreboard and the admin page with the profile's rule
for the deal in play. The fold is checked on its own with fixed times; the routes and pages
against a real scoreboard process on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy import text

from kiosk.scoreboard.clock import fold
from kiosk.scoreboard.db import make_engine
from kiosk.scoreboard.settings import normalise_db_url

from .helpers import Server, new_tournament

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_fold() -> None:
    assert fold([], at(5))["state"] == "idle"
    start = [("start", at(0), 40 * 60)]
    c = fold(start, at(10))
    assert c["state"] == "running" and c["elapsed_s"] == 600 and c["remaining_s"] == 1800
    assert c["ends_at"] == at(40).isoformat()
    paused = [*start, ("pause", at(10), None)]
    c = fold(paused, at(25))  # paused 15 minutes: the clock stands
    assert c["state"] == "paused" and c["remaining_s"] == 1800 and c["ends_at"] is None
    resumed = [*paused, ("resume", at(25), None)]
    c = fold(resumed, at(50))
    assert c["state"] == "running" and c["remaining_s"] == 300
    c = fold(resumed, at(56))  # 40 minutes of running time at 55
    assert c["state"] == "time" and c["called"] == "limit" and c["remaining_s"] == 0
    assert c["called_at"] == at(55).isoformat() and c["elapsed_s"] == 2400
    # rows after the limit ran out change nothing
    assert fold([*resumed, ("pause", at(60), None)], at(70))["called_at"] == at(55).isoformat()
    c = fold([*start, ("call", at(12), None)], at(30))
    assert c["state"] == "time" and c["called"] == "organiser" and c["remaining_s"] == 1680
    # out-of-order actions are ignored (the routes refuse them with 409)
    assert fold([("pause", at(1), None), ("resume", at(2), None)], at(3))["state"] == "idle"


def _clock(c: httpx.Client, tid: int, n: int, **body: object) -> httpx.Response:
    return c.post(f"/api/v1/tournaments/{tid}/rounds/{n}/clock", json=body)


def _shift_clock(server: Server, minutes: float) -> None:
    """Move the round clock's rows ``minutes`` into the past (no waiting)."""
    engine = make_engine(normalise_db_url(server.db))
    try:
        with engine.begin() as conn:
            for rid, when in conn.execute(text("SELECT id, at FROM round_clock")).all():
                when = datetime.fromisoformat(when) if isinstance(when, str) else when
                conn.execute(
                    text("UPDATE round_clock SET at = :a WHERE id = :i"),
                    {"a": when - timedelta(minutes=minutes), "i": rid},
                )
    finally:
        engine.dispose()


def test_clock_routes_and_pages(server: Server) -> None:
    t = new_tournament(server, tables=1, pairs=2)  # swiss-421: 40 minutes, equal levels draw
    tid = t["id"]
    with server.client() as c:
        assert c.get(f"/api/v1/tournaments/{tid}/rounds/1/clock").status_code == 404
        assert c.post(f"/api/v1/tournaments/{tid}/rounds", json={}).status_code == 201
        r = c.get(f"/api/v1/tournaments/{tid}/rounds/1/clock")
        assert r.status_code == 200 and r.json()["state"] == "idle"
        assert r.json()["profile_minutes"] == 40 and r.json()["rule"]["tie"] == "draw"
        assert "平局" in r.json()["rule"]["zh"] and "deal in play" in r.json()["rule"]["en"]
        r = _clock(c, tid, 1, action="pause")
        assert r.status_code == 409 and "idle" in r.text
        assert _clock(c, tid, 1, action="start", minutes=0).status_code == 422
        assert _clock(c, tid, 1, action="stop").status_code == 422
        table, token = t["tables"][0], t["tokens"][t["tables"][0]]
        auth = {"Authorization": f"Bearer {token}"}
        assert c.get(f"/api/v1/tables/{table}/assignment", headers=auth).json()["clock"] is None
        r = _clock(c, tid, 1, action="start")
        assert r.status_code == 200 and r.json()["state"] == "running"
        clock = c.get(f"/api/v1/tables/{table}/assignment", headers=auth).json()["clock"]
        assert clock["state"] == "running" and clock["limit_s"] == 2400  # the kiosk learns it
        assert r.json()["limit_s"] == 2400 and 2390 < r.json()["remaining_s"] <= 2400
        assert _clock(c, tid, 1, action="start").status_code == 409

        board = c.get(f"/scoreboard/{tid}").text
        assert 'data-state="running"' in board and ("40:00" in board or "39:5" in board)
        assert "计时中" in board
        assert _clock(c, tid, 1, action="pause").json()["state"] == "paused"
        admin = c.get(f"/admin/{tid}").text
        assert 'value="resume"' in admin and 'value="call"' in admin and "已暂停" in admin
        r = c.post(f"/admin/{tid}/rounds/1/clock", data={"action": "resume"})
        assert r.status_code == 303
        # 41 minutes later the limit has called time by itself
        _shift_clock(server, 41)
        r = c.get(f"/api/v1/tournaments/{tid}/rounds/1/clock").json()
        assert r["state"] == "time" and r["called"] == "limit" and r["remaining_s"] == 0
        board = c.get(f"/scoreboard/{tid}").text
        assert "时间到" in board and "到时打完当前一副" in board
        r = _clock(c, tid, 1, action="call")
        assert r.status_code == 409 and "time" in r.text

        # a profile without a limit needs the minutes; the organiser calls time early
        t2 = new_tournament(server, tables=1, pairs=2, profile="standard")
        tid2 = t2["id"]
        assert c.post(f"/api/v1/tournaments/{tid2}/rounds", json={}).status_code == 201
        r = _clock(c, tid2, 1, action="start")
        assert r.status_code == 422 and "minutes" in r.text and "无限时" in r.text
        r = c.post(f"/admin/{tid2}/rounds/1/clock", data={"action": "start", "minutes": "x"})
        assert r.status_code == 422 and "whole number" in r.text
        r = c.post(f"/admin/{tid2}/rounds/1/clock", data={"action": "start", "minutes": "35"})
        assert r.status_code == 303
        assert c.get(f"/api/v1/tournaments/{tid2}/rounds/1/clock").json()["limit_s"] == 35 * 60
        assert c.get(f"/api/v1/tournaments/{tid2}/rounds/1/clock").json()["state"] == "running"
        r = _clock(c, tid2, 1, action="call")
        assert r.json()["state"] == "time" and r.json()["called"] == "organiser"
        assert "裁判长叫停" in c.get(f"/scoreboard/{tid2}").text

        # a closed round's clock cannot change
        m = c.get(f"/api/v1/tournaments/{tid2}/rounds").json()[0]["matches"][0]
        r = c.post(
            f"/api/v1/tournaments/{tid2}/rounds/1/close",
            json={"decisions": [{"match": m["id"], "decision": "as_played"}]},
        )
        assert r.status_code == 200, r.text
        r = _clock(c, tid2, 1, action="resume")
        assert r.status_code == 409 and "closed" in r.text
