"""A 10-minute network cut (the issue: "simulated by stopping the scoreboard: after recovery every
event is at the centre exactly once").

Real processes: the scoreboard (`guandan scoreboard serve`, SQLite) and a table kiosk (`guandan
table run`) replaying the bundled rendered game ``datasets/demo/game.mp4`` through the whole table
pipeline (oracle corner labels, the recorded calibration, profile ``standard``) at 0.55x real
time, so its 302 s of video (105 events) stretch over most of the cut. Once the centre holds the
first events the scoreboard is killed (-9) and stays down for 600 s of wall clock while the kiosk
keeps refereeing and logging; then it is started again on the same database and port.

The replay ends a little before the scoreboard returns: a new event makes the outbox try at once,
so with no new events the catch-up time measures the outbox's retry timer alone (exponential
backoff capped at ``--max-backoff``, 30 s by default). Takes about 11 minutes; the figures are
printed as one JSON line (``pytest -s``).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kiosk.scoreboard.schemas import EVENT_TYPES

from .helpers import (
    REPO,
    Proc,
    free_port,
    get_json,
    scoreboard_proc,
    setup_scoreboard,
    wait_for,
)

VIDEO = REPO / "datasets" / "demo" / "game.mp4"
CALIBRATION = REPO / "datasets" / "demo" / "game.mp4.calibration.json"
DEMO_PROFILE = "standard"  # the profile the demo deal was simulated with (datasets/demo/README)
TABLE = "tcut10"
SPEED = 0.55  # 302 s of video in about 550 s of wall clock
CUT_S = 600.0  # the scoreboard is down this long (wall clock)
POLL_S = 5.0
DEFAULT_MAX_BACKOFF = 30.0  # `guandan table run --max-backoff` default
CATCH_UP_LIMIT_S = 60.0
ACCEPTED = frozenset(EVENT_TYPES)  # what the centre accepts; the rest stays local at the kiosk


def test_outbox_backoff_is_capped(tmp_path: Path) -> None:
    """The retry wait doubles from 0.5 s and stops at ``--max-backoff`` (default 30 s) however
    many attempts fail (a 10-minute cut is hundreds); a cap beyond 300 s is refused."""
    from kiosk.cli import build_parser
    from kiosk.table.outbox import MAX_BACKOFF_LIMIT, Outbox
    from kiosk.table.store import EventLog

    args = build_parser().parse_args(["table", "run", "--simulate", "1"])
    assert args.max_backoff == DEFAULT_MAX_BACKOFF
    store = EventLog(tmp_path / "k.db", table="t", profile=DEMO_PROFILE)
    ob = Outbox(store, "http://127.0.0.1:9", "token", table="t", max_s=args.max_backoff)
    waits = []
    for failures in range(1, 2001):
        ob.failures = failures
        waits.append(ob._delay())
    assert waits[:6] == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0]
    assert max(waits) == DEFAULT_MAX_BACKOFF and set(waits[5:]) == {DEFAULT_MAX_BACKOFF}
    assert ob.status()["retry_in"] == DEFAULT_MAX_BACKOFF
    assert MAX_BACKOFF_LIMIT == 300.0
    for bad in (0.0, -1.0, 0.1, MAX_BACKOFF_LIMIT + 1, 1e9):
        with pytest.raises(ValueError, match="--max-backoff"):
            Outbox(store, "http://127.0.0.1:9", "token", table="t", max_s=bad)


def _kiosk(db: Path, port: int, log: Path, scoreboard: str, token: str) -> Proc:
    args = [
        "table",
        "run",
        "--camera",
        f"file:{VIDEO}",
        "--calibration",
        str(CALIBRATION),
        "--detector",
        "oracle",
        "--db",
        str(db),
        "--port",
        str(port),
        "--table",
        TABLE,
        "--profile",
        DEMO_PROFILE,
        "--speed",
        str(SPEED),
        "--pin",
        "1357",
        "--scoreboard",
        scoreboard,
        "--token",
        token,
    ]  # no --max-backoff: the default cap is what is tested
    return Proc(args, port, log, "/healthz")


def _kiosk_log(db: Path) -> tuple[list[tuple[int, str, str]], dict[int, str]]:
    """(seq, id, type) of every logged event, and the outbox status per seq (read-only)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        events = [
            (int(seq), str(eid), str(ty))
            for seq, eid, ty in conn.execute("SELECT seq, id, type FROM events ORDER BY seq")
        ]
        status = {int(s): str(st) for s, st in conn.execute("SELECT seq, status FROM outbox")}
    finally:
        conn.close()
    return events, status


def _central(url: str) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = get_json(f"{url}/api/v1/tables/{TABLE}/events?limit=5000")
    return got


def test_ten_minute_network_cut(tmp_path: Path) -> None:
    assert VIDEO.is_file() and CALIBRATION.is_file(), "the bundled demo game is missing"
    began = time.monotonic()
    _tid, tokens = setup_scoreboard(tmp_path / "sb.db", [TABLE], profile=DEMO_PROFILE)
    sb_port = free_port()
    sb = scoreboard_proc(tmp_path / "sb.db", sb_port, tmp_path / "sb1.log").start()
    k = _kiosk(tmp_path / "kiosk.db", free_port(), tmp_path / "k.log", sb.url, tokens[TABLE])
    samples: list[dict[str, Any]] = []
    try:
        k.start()
        wait_for(
            lambda: get_json(k.url + "/api/state")["outbox"]["sent"] >= 3,
            120,
            "the first events at the centre",
        )
        # ---- the cut
        sb.kill9()
        cut_at = time.monotonic()
        at_cut = get_json(k.url + "/api/state")
        while (elapsed := time.monotonic() - cut_at) < CUT_S:
            assert k.running, "the kiosk died during the cut: " + k.log_tail()
            assert not sb.healthy(), "the scoreboard answers during the cut"
            st = get_json(k.url + "/api/state", timeout=10)
            ob = st["outbox"]
            samples.append(
                {
                    "at": round(elapsed, 1),
                    "events": st["events"],
                    "pending": ob["pending"],
                    "connected": ob["connected"],
                    "retry_in": ob["retry_in"],
                    "network_alarm": any(a["kind"] == "network" for a in st["alarms"]),
                    "done": st["source"]["done"],
                }
            )
            time.sleep(min(POLL_S, max(0.0, CUT_S - (time.monotonic() - cut_at))))
        # ---- recovery: the same database, the same port
        restart_at = time.monotonic()
        cut_s = restart_at - cut_at
        at_restart = get_json(k.url + "/api/state")
        logged, _status = _kiosk_log(tmp_path / "kiosk.db")
        owed = {eid for _s, eid, ty in logged if ty in ACCEPTED}
        sb = scoreboard_proc(tmp_path / "sb.db", sb_port, tmp_path / "sb2.log").start()
        ready_at = time.monotonic()
        wait_for(
            lambda: owed <= {e["id"] for e in _central(sb.url)},
            CATCH_UP_LIMIT_S + 60,
            "the centre to hold every event logged before the restart",
            every=0.25,
        )
        catch_up_s = time.monotonic() - ready_at
        final = wait_for(
            lambda: (
                (s := get_json(k.url + "/api/state"))["source"]["done"]
                and s["outbox"]["pending"] == 0
                and s["outbox"]["connected"]
                and s
            ),
            300,
            "the replay to end and the outbox to drain",
        )
        central = _central(sb.url)
        missing = get_json(f"{sb.url}/api/v1/tables/{TABLE}/missing")
    finally:
        k.stop()
        sb.stop()
    logged, status = _kiosk_log(tmp_path / "kiosk.db")
    deliverable = [(s, eid) for s, eid, ty in logged if ty in ACCEPTED]
    local = [s for s, _eid, ty in logged if ty not in ACCEPTED]

    # Every event the kiosk logged is at the centre exactly once, and the seqs are complete.
    counts = Counter(e["id"] for e in central)
    assert [i for i, n in counts.items() if n != 1] == []
    assert set(counts) == {eid for _s, eid in deliverable}
    assert sorted(e["seq"] for e in central) == sorted(s for s, _eid in deliverable)
    assert sorted([e["seq"] for e in central] + local) == list(range(1, len(logged) + 1))
    assert missing["max_seq"] == max(s for s, _eid in deliverable)
    assert missing["stored"] == len(deliverable)
    assert missing["missing"] == [s for s in local if s < missing["max_seq"]]
    assert {e["table"] for e in central} == {TABLE}
    assert {status[s] for s, _eid in deliverable} == {"sent"}
    assert {status[s] for s in local} <= {"local"}

    # The whole bundled deal was refereed (datasets/demo/README: S N W E, NS 5 EW 2).
    assert final["last_deal"]["order"] == ["S", "N", "W", "E"]
    assert final["last_deal"]["levels"] == {"NS": "5", "EW": "2"}
    assert not [a for a in final["alarms"] if a["kind"] in ("network", "scoreboard")]

    # The kiosk kept recording through the cut, with the events waiting in its outbox.
    assert cut_s >= CUT_S
    new = at_restart["events"] - at_cut["events"]
    assert new >= 60, f"only {new} events logged during the cut"
    grew = [
        b["at"] for a, b in zip(samples, samples[1:], strict=False) if b["events"] > a["events"]
    ]
    assert grew and grew[-1] - grew[0] >= 420, f"recording stalled during the cut: {grew}"
    last = samples[-1]
    assert not last["connected"] and last["network_alarm"]
    assert last["pending"] >= new - len(local)
    # The retry wait grew to the cap and stayed there: it never exceeds 30 s.
    waits = [s["retry_in"] for s in samples]
    assert max(waits) == DEFAULT_MAX_BACKOFF, waits
    assert catch_up_s < CATCH_UP_LIMIT_S

    print(
        json.dumps(
            {
                "network_cut_10min": {
                    "cut_s": round(cut_s, 1),
                    "catch_up_s": round(catch_up_s, 2),
                    "owed_at_restart": len(owed),
                    "events_logged": len(logged),
                    "events_at_centre": len(central),
                    "local_only": len(local),
                    "logged_during_cut": new,
                    "pending_at_restart": at_restart["outbox"]["pending"],
                    "max_retry_in_s": max(waits),
                    "replay_done_before_restart": bool(at_restart["source"]["done"]),
                    "test_s": round(time.monotonic() - began, 1),
                }
            }
        )
    )
