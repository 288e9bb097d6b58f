"""A small live tournament for the public board's tests (pages, disputes, Chromium layout):
five pairs, round 1 on two tables and a bye. T1 is finished (NS wins A:5); T2 is in its second
deal with open disputes (a camera foul under review, a re-read correction, a referee notice)
beside answered ones (a confirmed camera foul, a referee's void)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .helpers import Server, deal_events, ev, match_events

NAMES = ["Team Wang 王队", "Team Zhao 赵队", "Team Chen 陈队", "Team Wu 吴队", "Team Feng 冯队"]
KIOSKS = "T1=http://10.0.0.11:8080,T2=http://10.0.0.12:8080/"


def t2_events() -> list[dict[str, Any]]:
    """T2: deal 1 played, deal 2 under way with disputes (ids T2-<seq>)."""
    out = deal_events("T2", 1, 1, "2", ["S", "N", "E", "W"], {"NS": "3", "EW": "2"})
    seq = len(out) + 1

    def add(typ: str, **fields: Any) -> str:
        nonlocal seq
        out.append(ev("T2", seq, typ, 2, **fields))
        seq += 1
        return f"T2-{seq - 1}"

    add("deal_started", level="3", leader="S")
    add("play", seat="S", cards=["S3"], combo="single")
    # a camera foul flagged for review: open
    add("foul", seat="E", kind="exposed_card", detail="SA exposed by E", review=True)
    # a camera foul the referee confirmed (a ruled foul that confirms it): answered
    flagged = add("foul", seat="W", kind="illegal_play", detail="H5 on S3", review=True)
    add("foul", seat="W", kind="illegal_play", detail="marked", ruled=True, confirms=flagged)
    # a play the referee voided: neither is open
    voided = add("play", seat="E", cards=["S4"], combo="single")
    add("correction", replaces=voided, reason="E did not play (referee Li)", referee="Li")
    # the referee engine's own re-read of a play: open
    reread = add("play", seat="N", cards=["S5"], combo="single")
    add("correction", replaces=reread, reason="second look: S6, not S5")
    # a notice: open
    add("notice", detail="tribute not seen from N")
    return out


OPEN_T2 = {"T2-13": "review", "T2-19": "correction", "T2-20": "notice"}


def start_board(d: Path, env: dict[str, str] | None = None) -> tuple[Server, dict[str, Any]]:
    srv = Server(str(d / "sb.db"), log=d / "server.log")
    srv.env["GUANDAN_SCOREBOARD_KIOSK_URLS"] = KIOSKS
    srv.env.update(env or {})
    srv.start()
    with srv.client() as c:
        r = c.post(
            "/api/v1/tournaments",
            json={"name": "春季杯 Spring Cup", "profile": "swiss-421", "lots_seed": 5},
        )
        assert r.status_code == 201, r.text
        tid = r.json()["id"]
        for name in NAMES:
            assert c.post(f"/api/v1/tournaments/{tid}/pairs", json={"name": name}).is_success
        tokens = {}
        for table in ("T1", "T2"):
            r = c.post(f"/api/v1/tournaments/{tid}/tables", json={"id": table})
            assert r.status_code == 201, r.text
            tokens[table] = r.json()["token"]
        pairings = [
            {"table": "T1", "ew": 1, "ns": 2},
            {"table": "T2", "ew": 3, "ns": 4},
            {"table": None, "ew": 5, "ns": None},
        ]
        r = c.post(f"/api/v1/tournaments/{tid}/rounds", json={"pairings": pairings})
        assert r.status_code == 201, r.text
    for table, evs in (
        ("T1", match_events("T1", "NS", {"NS": "A", "EW": "5"})),
        ("T2", t2_events()),
    ):
        with srv.client(tokens[table]) as c:
            r = c.post("/api/v1/events/batch", json=evs)
            assert r.status_code == 200, r.text
    return srv, {"id": tid, "tokens": tokens}


def board_server(d: Path) -> Iterator[tuple[Server, dict[str, Any]]]:
    srv, info = start_board(d)
    try:
        yield srv, info
    finally:
        srv.stop()
