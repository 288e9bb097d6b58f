"""Test helpers: a real uvicorn scoreboard process and hand-built events (CONTRACT.md)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx

from tests.helpers_server import REPO as REPO
from tests.helpers_server import ServerProcess
from tests.helpers_server import free_port as free_port


class Server(ServerProcess):
    """``guandan scoreboard serve`` in a subprocess on a free loopback port."""

    name = "scoreboard"

    def __init__(self, db: str, admin_key: str | None = None, log: Path | None = None) -> None:
        super().__init__(
            [], free_port(), log, "/healthz", env={"GUANDAN_SCOREBOARD_PUSH_INTERVAL": "0.05"}
        )
        self.db = db
        self.admin_key = admin_key

    def command(self) -> list[str]:
        cmd = ["scoreboard", "serve", "--db", self.db, "--port", str(self.port)]
        cmd += ["--log-level", "warning"]
        if self.admin_key:
            cmd += ["--admin-key", self.admin_key]
        return cmd

    def start(self, timeout: float = 90.0) -> Server:
        return super().start(timeout)

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30.0)


def ev(
    table: str, seq: int, typ: str, deal: int = 1, t: float | None = None, **fields: Any
) -> dict[str, Any]:
    """One event of CONTRACT.md with an id derived from table and seq."""
    body: dict[str, Any] = {
        "v": 1,
        "id": f"{table}-{seq}",
        "table": table,
        "deal": deal,
        "seq": seq,
        "t": float(seq) if t is None else t,
        "type": typ,
    }
    body.update(fields)
    return body


def deal_events(
    table: str,
    start_seq: int,
    deal: int,
    level: str,
    order: list[str],
    levels: dict[str, str],
    fouls: list[str] = (),  # type: ignore[assignment]
) -> list[dict[str, Any]]:
    """A short but well-formed deal: start, a few plays and passes, seats out, end."""
    seq = start_seq
    out = [ev(table, seq, "deal_started", deal, level=level, leader=order[0])]
    seq += 1
    out.append(
        ev(
            table,
            seq,
            "play",
            deal,
            seat=order[0],
            cards=["S3", "S4", "S5", "S6", "S7"],
            combo="straight",
        )
    )
    seq += 1
    for seat in order[1:]:
        out.append(ev(table, seq, "pass", deal, seat=seat))
        seq += 1
    for seat in fouls:
        out.append(ev(table, seq, "foul", deal, seat=seat, kind="slow_play", detail="45 s"))
        seq += 1
    for place, seat in enumerate(order, start=1):
        out.append(ev(table, seq, "seat_out", deal, seat=seat, place=place))
        seq += 1
    out.append(ev(table, seq, "deal_ended", deal, order=order, levels=levels))
    return out


def match_events(
    table: str, winner: str, final: dict[str, str], deals: int = 2, fouls: list[str] = ()
) -> list[dict[str, Any]]:  # type: ignore[assignment]
    """``deals`` deals then ``match_ended``; the last deal leaves levels at ``final``."""
    out: list[dict[str, Any]] = []
    seq = 1
    win_order = ["S", "N", "E", "W"] if winner != "EW" else ["E", "W", "S", "N"]
    for d in range(1, deals + 1):
        levels = final if d == deals else {"NS": "2", "EW": "2"}
        evs = deal_events(table, seq, d, "2", win_order, levels, fouls if d == 1 else [])
        out.extend(evs)
        seq += len(evs)
    out.append(ev(table, seq, "match_ended", deals, winner=None if winner == "draw" else winner))
    return out


def new_tournament(
    srv: Server,
    tables: int = 1,
    pairs: int = 0,
    profile: str = "swiss-421",
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A tournament with ``tables`` tables (unique ids) and ``pairs`` pairs; returns ids/tokens."""
    with srv.client() as c:
        if headers:
            c.headers.update(headers)
        r = c.post(
            "/api/v1/tournaments",
            json={"name": "Test cup 测试杯", "profile": profile, "lots_seed": 42},
        )
        assert r.status_code == 201, r.text
        tid = r.json()["id"]
        tag = uuid.uuid4().hex[:6]
        tokens: dict[str, str] = {}
        for i in range(1, tables + 1):
            r = c.post(f"/api/v1/tournaments/{tid}/tables", json={"id": f"T{i}-{tag}"})
            assert r.status_code == 201, r.text
            tokens[r.json()["id"]] = r.json()["token"]
        for i in range(1, pairs + 1):
            r = c.post(f"/api/v1/tournaments/{tid}/pairs", json={"name": f"Pair {i}"})
            assert r.status_code == 201, r.text
    return {"id": tid, "tokens": tokens, "tables": list(tokens)}
