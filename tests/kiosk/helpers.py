"""Helpers for the kiosk tests: real processes on free ports, a demo scoreboard, sim data."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from functools import lru_cache
from pathlib import Path
from typing import Any

from engine.events import Event
from engine.observations import Observation, dump_observation
from engine.profiles import load_profile
from engine.referee import referee_events
from engine.sim import simulate
from tests.helpers_server import REPO as REPO
from tests.helpers_server import ServerProcess
from tests.helpers_server import free_port as free_port

PROFILE = "swiss-421"


def get_json(url: str, timeout: float = 5.0, headers: dict[str, str] | None = None) -> Any:
    req = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read().decode("utf-8"))


def post_json(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="POST")
    req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read().decode() or "null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read().decode() or "null")


def wait_for(pred: Any, timeout: float, what: str, every: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = pred()
        except (OSError, ValueError):
            last = None
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last: {last!r})")


@lru_cache(maxsize=8)
def sim_observations(deals: int, seed: int, mischief: float = 0.0) -> tuple[Observation, ...]:
    res = simulate(load_profile(PROFILE), deals=deals, seed=seed, mischief=mischief)
    return tuple(res.observations)


def write_observations(path: Path, obs: tuple[Observation, ...]) -> Path:
    path.write_text("".join(dump_observation(o) + "\n" for o in obs), encoding="utf-8")
    return path


def write_misread_straight(path: Path, after: dict[str, object]) -> Path:
    """A deal in which S's straight is read with DA for D7 (the camera's runner-up D7 in
    ``doubts``: the referee re-reads it), then the observation ``after``."""
    lines: list[dict[str, object]] = [
        {"t": 1.0, "type": "deal_start", "first_leader": "S"},
        {
            "t": 3.0,
            "type": "played",
            "seat": "S",
            "cards": ["D3", "C4", "H5", "S6", "DA"],
            "doubts": [{"card": "DA", "or": [["D7", 0.9], [None, 4.0]]}],
        },
        after,
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def expected_events(obs: tuple[Observation, ...], table: str) -> list[Event]:
    return referee_events(load_profile(PROFILE), obs, table=table)


def setup_scoreboard(
    db: Path, tables: list[str], profile: str = PROFILE
) -> tuple[int, dict[str, str]]:
    """A tournament with one pair per two tables... enough pairs and a round; table tokens."""
    from kiosk.scoreboard import service
    from kiosk.scoreboard.db import make_engine, session_factory, upgrade

    engine = make_engine(f"sqlite:///{db}")
    upgrade(engine)
    tokens: dict[str, str] = {}
    with session_factory(engine)() as s:
        t = service.create_tournament(s, "kiosk tests", profile, 1)
        plan = []
        for i, table in enumerate(tables):
            service.add_pair(s, t.id, f"pair {2 * i + 1}", number=2 * i + 1)
            service.add_pair(s, t.id, f"pair {2 * i + 2}", number=2 * i + 2)
            _gt, tokens[table] = service.add_table(s, t.id, table)
            plan.append((table, 2 * i + 2, 2 * i + 1))
        service.create_round(s, t.id, plan)
        tid = t.id
    engine.dispose()
    return tid, tokens


class Proc(ServerProcess):
    """A `python -m kiosk ...` server process on a port, with its log."""

    def __init__(self, args: list[str], port: int, log: Path, health: str) -> None:
        env = {"GUANDAN_SCOREBOARD_PUSH_INTERVAL": "0.1"}
        super().__init__(args, port, log, health, env=env)
        self.name = str(args[:2])


def scoreboard_proc(db: Path, port: int, log: Path) -> Proc:
    args = ["scoreboard", "serve", "--db", str(db), "--port", str(port), "--log-level", "warning"]
    return Proc(args, port, log, "/healthz")


def kiosk_proc(
    db: Path, port: int, log: Path, *, obs: Path, table: str, speed: float, extra: list[str]
) -> Proc:
    args = [
        "table",
        "run",
        "--observations",
        str(obs),
        "--db",
        str(db),
        "--port",
        str(port),
        "--table",
        table,
        "--profile",
        PROFILE,
        "--speed",
        str(speed),
        "--pin",
        "1357",
        *extra,
    ]
    return Proc(args, port, log, "/healthz")
