"""Real processes: the kiosk (`guandan table run`) and the scoreboard (`guandan scoreboard
serve`) under uvicorn on free ports. kill -9 of the kiosk mid-deal, a network cut (the
scoreboard stopped, then restarted), a wrong token, seqs the centre lost: after recovery every
event is at the centre exactly once and the kiosk's log is intact."""

from __future__ import annotations

import json
import sqlite3
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.events import dump_event, parse_event
from kiosk.scoreboard.schemas import EVENT_TYPES

from .helpers import (
    Proc,
    expected_events,
    free_port,
    get_json,
    kiosk_proc,
    scoreboard_proc,
    setup_scoreboard,
    sim_observations,
    wait_for,
    write_observations,
)

ACCEPTED = frozenset(EVENT_TYPES)  # what the centre accepts: every one must arrive


@pytest.fixture(scope="module")
def central(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Proc, dict[str, str]]]:
    d = tmp_path_factory.mktemp("central")
    _tid, tokens = setup_scoreboard(d / "sb.db", ["tkill", "tbad", "tgap", "trej"])
    sb = scoreboard_proc(d / "sb.db", free_port(), d / "sb.log").start()
    try:
        yield sb, tokens
    finally:
        sb.stop()


def _central_ids(sb_url: str, table: str) -> list[str]:
    return [e["id"] for e in get_json(f"{sb_url}/api/v1/tables/{table}/events?limit=5000")]


def _log_events(db: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [b for (b,) in conn.execute("SELECT body FROM events ORDER BY seq")]
    finally:
        conn.close()


def _sse_first(url: str, name: str) -> Any:
    """The data of the first ``name`` event on an SSE stream."""
    with urllib.request.urlopen(url, timeout=10) as resp:
        event = None
        for raw in resp:
            line = raw.decode("utf-8").rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == name:
                return json.loads(line[6:])
    raise AssertionError(f"no {name} event on {url}")


def _finished(k: Proc) -> Any:
    st = get_json(k.url + "/api/state")
    ob = st["outbox"]
    return st if st["source"]["done"] and ob["pending"] == 0 and ob["connected"] else None


def test_kill9_mid_deal_then_restart(central: tuple[Proc, dict[str, str]], tmp_path: Path) -> None:
    sb, tokens = central
    obs = sim_observations(2, 21)
    f = write_observations(tmp_path / "obs.jsonl", obs)
    want = [dump_event(e) for e in expected_events(obs, "tkill")]
    db = tmp_path / "kiosk.db"
    port = free_port()
    extra = ["--scoreboard", sb.url, "--token", tokens["tkill"], "--max-backoff", "1"]
    k = kiosk_proc(db, port, tmp_path / "k.log", obs=f, table="tkill", speed=60, extra=extra)
    k.start()
    try:
        st = wait_for(
            lambda: (s := get_json(k.url + "/api/state"))["events"] > 60 and s["deal"] and s,
            90,
            "the kiosk to be mid-deal",
        )
        assert not st["deal"]["over"]
        k.kill9()
    finally:
        k.stop()
    logged = _log_events(db)
    assert 0 < len(logged) < len(want)
    assert logged == want[: len(logged)]  # intact: whole steps, gapless, as the referee says
    k2 = kiosk_proc(db, port, tmp_path / "k2.log", obs=f, table="tkill", speed=0, extra=extra)
    k2.start()
    try:
        wait_for(lambda: _finished(k2), 120, "the restarted kiosk to finish and catch up")
    finally:
        k2.stop()
    assert _log_events(db) == want
    ids = _central_ids(sb.url, "tkill")
    deliverable = [parse_event(b).id for b in want if parse_event(b).type in ACCEPTED]
    assert len(ids) == len(set(ids))  # exactly once
    assert sorted(ids) == sorted(deliverable)


def test_network_cut_then_catch_up(tmp_path: Path) -> None:
    _tid, tokens = setup_scoreboard(tmp_path / "sb.db", ["tcut"])
    sb_port = free_port()
    sb = scoreboard_proc(tmp_path / "sb.db", sb_port, tmp_path / "sb.log").start()
    obs = sim_observations(1, 22)
    f = write_observations(tmp_path / "obs.jsonl", obs)
    want = expected_events(obs, "tcut")
    extra = ["--scoreboard", sb.url, "--token", tokens["tcut"], "--max-backoff", "1"]
    k = kiosk_proc(
        tmp_path / "kiosk.db", free_port(), tmp_path / "k.log", obs=f, table="tcut",
        speed=40, extra=extra,
    )  # fmt: skip
    k.start()
    try:
        wait_for(lambda: get_json(k.url + "/api/state")["outbox"]["sent"] > 10, 60, "first sends")
        sb.kill9()  # cut mid-ingest: the kiosk keeps refereeing and logging
        before = get_json(k.url + "/api/state")["events"]
        st = wait_for(
            lambda: (
                (s := get_json(k.url + "/api/state"))["events"] > before + 20
                and any(a["kind"] == "network" for a in s["alarms"])
                and s
            ),
            60,
            "the kiosk to keep working offline with a network alarm",
        )
        assert st["outbox"]["pending"] > 0 and not st["outbox"]["connected"]
        time.sleep(2)
        sb = scoreboard_proc(tmp_path / "sb.db", sb_port, tmp_path / "sb2.log").start()
        st = wait_for(lambda: _finished(k), 120, "the kiosk to catch up")
        assert not [a for a in st["alarms"] if a["kind"] == "network"]
    finally:
        k.stop()
        sb.stop()
    sb = scoreboard_proc(tmp_path / "sb.db", sb_port, tmp_path / "sb3.log").start()
    try:
        ids = _central_ids(sb.url, "tcut")
    finally:
        sb.stop()
    deliverable = [e.id for e in want if e.type in ACCEPTED]
    assert len(ids) == len(set(ids)) and sorted(ids) == sorted(deliverable)


def test_wrong_token_is_an_alarm_and_nothing_is_lost(
    central: tuple[Proc, dict[str, str]], tmp_path: Path
) -> None:
    sb, _tokens = central
    obs = sim_observations(1, 23)
    f = write_observations(tmp_path / "obs.jsonl", obs)
    extra = ["--scoreboard", sb.url, "--token", "not-the-token", "--max-backoff", "1"]
    k = kiosk_proc(
        tmp_path / "kiosk.db", free_port(), tmp_path / "k.log", obs=f, table="tbad",
        speed=0, extra=extra,
    )  # fmt: skip
    k.start()
    try:
        st = wait_for(
            lambda: (
                (s := get_json(k.url + "/api/state"))["source"]["done"]
                and any(a["kind"] == "scoreboard" for a in s["alarms"])
                and s
            ),
            60,
            "the token alarm",
        )
        # the live feeds start with the full state on every connect
        first = _sse_first(k.url + "/api/stream", "state")
        assert first["seq"] == st["seq"] and first["levels"] == st["levels"]
        over = _sse_first(k.url + "/overlay/stream?delay=0", "state")
        assert over["seq"] == st["seq"] and "outbox" not in over
    finally:
        k.stop()
    alarm = next(a for a in st["alarms"] if a["kind"] == "scoreboard")
    assert "401" in alarm["en"] and "token" in alarm["en"]
    assert st["outbox"]["sent"] == 0 and st["outbox"]["pending"] > 0
    assert _central_ids(sb.url, "tbad") == []


def test_seqs_the_centre_lacks_are_sent_again(
    central: tuple[Proc, dict[str, str]], tmp_path: Path
) -> None:
    """Events marked sent whose answer was lost (or a centre restored from a backup): the
    outbox finds them with GET /missing and sends them again."""
    from engine.profiles import load_profile
    from kiosk.table.outbox import Outbox
    from kiosk.table.sources import JsonlSource
    from kiosk.table.store import EventLog
    from kiosk.table.worker import TableWorker

    sb, tokens = central
    obs = sim_observations(1, 24)
    f = write_observations(tmp_path / "obs.jsonl", obs)
    prof = load_profile("swiss-421")
    store = EventLog(tmp_path / "k.db", table="tgap", profile=prof.name)
    w = TableWorker(store, prof, JsonlSource(f, speed=0), table="tgap")
    w.start()
    wait_for(lambda: w.source_done and w._q.empty(), 60, "the log")
    w.stop()
    pending = [s for s, _b in store.outbox_pending(10_000)]
    lost = pending[5:40:3] + pending[-3:]
    store.outbox_mark(lost, "sent")  # pretend: sent, but the centre never stored them
    want = [e.id for e in w.events if e.type in ACCEPTED]
    ob = Outbox(store, sb.url, tokens["tgap"], table="tgap", gap_check_s=0.5, max_s=1)
    ob.start()
    try:
        wait_for(
            lambda: len(_central_ids(sb.url, "tgap")) == len(want),
            60,
            "the lost seqs to be resent",
        )
    finally:
        ob.stop()
    ids = _central_ids(sb.url, "tgap")
    assert len(ids) == len(set(ids)) and sorted(ids) == sorted(want)
    assert store.outbox_counts()["pending"] == 0


def test_an_event_the_centre_refuses_is_kept_and_flagged_the_rest_flows(
    central: tuple[Proc, dict[str, str]], tmp_path: Path
) -> None:
    """The centre already holds a different event under the id of the kiosk's first event
    (e.g. restored from a wrong backup): it answers 409 for that one. The kiosk keeps it,
    marks it rejected with the reason, raises an alarm, and the events after it are delivered."""
    import json
    import urllib.request

    from engine.profiles import load_profile
    from kiosk.table.outbox import Outbox
    from kiosk.table.store import EventLog
    from kiosk.table.worker import TableWorker

    sb, tokens = central
    prof = load_profile("standard")
    store = EventLog(tmp_path / "k.db", table="trej", profile=prof.name)
    w = TableWorker(store, prof, None, table="trej")
    ob = Outbox(store, sb.url, tokens["trej"], table="trej", worker=w, max_s=1)
    w.on_events = lambda _e: ob.wake()
    w.start()
    try:
        w.submit("referee", {"type": "deal_start", "first_leader": "N"})
        wait_for(lambda: len(w.events) >= 1, 30, "the first event")
        clash = json.loads(dump_event(w.events[0]))
        clash["t"] = clash["t"] + 99.0  # same id, different content
        req = urllib.request.Request(
            sb.url + "/api/v1/events",
            data=json.dumps(clash).encode(),
            headers={
                "Authorization": f"Bearer {tokens['trej']}",
                "Content-Type": "application/json",
            },
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert resp.status == 200
        ob.start()
        w.submit("referee", {"type": "played", "seat": "N", "cards": ["S3"]})
        wait_for(lambda: store.outbox_counts()["pending"] == 0, 30, "the outbox to settle")
        rejected = store.outbox_rejected()
        assert [s for s, _e in rejected] == [1]
        assert "409" in rejected[0][1]
        assert "rejected" in w.alarms and "refused" in w.alarms["rejected"].en
        ids = _central_ids(sb.url, "trej")
        assert sorted(ids) == sorted(e.id for e in w.events if e.type in ACCEPTED)
    finally:
        ob.stop()
        w.stop()
