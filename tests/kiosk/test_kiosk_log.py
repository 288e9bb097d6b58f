"""The kiosk's SQLite log and worker, in process: append-only, transactional, replay on restart,
a full disk, referee actions as observations."""

from __future__ import annotations

import errno
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from engine.deal import fold
from engine.events import dump_event
from engine.profiles import load_profile
from kiosk.table.sources import JsonlSource, SimSource, SourceError
from kiosk.table.store import DiskFull, EventLog, StoreError
from kiosk.table.worker import CONTRACT_TYPES, ActionError, TableWorker

from .helpers import (
    PROFILE,
    expected_events,
    sim_observations,
    wait_for,
    write_misread_straight,
    write_observations,
)

TABLE = "tk"


def _worker(db: Path, obs_file: Path | None, speed: float = 0.0) -> TableWorker:
    profile = load_profile(PROFILE)
    store = EventLog(db, table=TABLE, profile=profile.name)
    src = JsonlSource(obs_file, speed=speed) if obs_file is not None else None
    return TableWorker(store, profile, src, table=TABLE, retry_s=0.05)


def _done(w: TableWorker) -> bool:
    return w.source_done and w._q.empty() and not w.alarms


def test_log_matches_the_referee_and_is_append_only(tmp_path: Path) -> None:
    obs = sim_observations(2, 11)
    f = write_observations(tmp_path / "obs.jsonl", obs)
    w = _worker(tmp_path / "k.db", f)
    w.start()
    try:
        wait_for(lambda: _done(w) and len(w.events) > 0, 60, "the worker to finish")
    finally:
        w.stop()
    want = [dump_event(e) for e in expected_events(obs, TABLE)]
    assert [dump_event(e) for e in w.store.events()] == want
    # state = fold over the log
    st = fold(w.store.events(), load_profile(PROFILE))
    assert st.to_json() == w.referee.state.to_json()
    snap = w.snapshot()
    assert snap["levels"] == st.match.levels and snap["seq"] == len(want)
    conn = sqlite3.connect(tmp_path / "k.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE events SET type = 'pass' WHERE seq = 1")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM events")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM observations")
    # kiosk-only event types stay local in the outbox
    local = {t for (t,) in conn.execute(
        "SELECT e.type FROM outbox o JOIN events e USING(seq) WHERE o.status = 'local'"
    )}  # fmt: skip
    assert local and not (local & CONTRACT_TYPES)


def test_restart_replays_the_log_and_resumes_the_source(tmp_path: Path) -> None:
    obs = sim_observations(2, 12)
    f = write_observations(tmp_path / "obs.jsonl", obs)
    db = tmp_path / "k.db"
    w = _worker(db, f, speed=0.0)
    # stop part-way: a source that blocks after 150 observations
    gate = threading.Event()
    src = w.source
    assert isinstance(src, JsonlSource)
    orig = src.observations

    def first_part(skip: int, stop: threading.Event):  # type: ignore[no-untyped-def]
        for n, o in enumerate(orig(skip, stop)):
            if n == 150:
                gate.set()
                stop.wait()
                return
            yield o

    src.observations = first_part  # type: ignore[method-assign]
    w.start()
    wait_for(gate.is_set, 60, "150 observations")
    wait_for(lambda: w.store.source_count() == 150, 30, "150 logged")
    w.stop()
    before = [dump_event(e) for e in w.store.events()]
    w.store.close()
    # a screen pass and a referee void are part of the log too: add one before restarting
    w2 = _worker(db, f)
    w2.start()
    try:
        wait_for(lambda: _done(w2), 60, "the restarted worker to finish")
        assert w2.replayed >= 150
    finally:
        w2.stop()
    after = [dump_event(e) for e in w2.store.events()]
    assert after[: len(before)] == before
    assert after == [dump_event(e) for e in expected_events(obs, TABLE)]


def test_full_disk_stops_recording_keeps_the_log_and_resumes(tmp_path: Path) -> None:
    obs = sim_observations(1, 13)
    f = write_observations(tmp_path / "obs.jsonl", obs)
    w = _worker(tmp_path / "k.db", f)
    full = threading.Event()

    def fault(what: str) -> None:
        if full.is_set() and "observation" in what:
            raise OSError(errno.ENOSPC, "No space left on device")

    w.store.fault = fault
    full.set()
    w.start()
    try:
        wait_for(lambda: "disk" in w.alarms, 30, "the disk-full alarm")
        n = w.store.event_count()
        time.sleep(0.3)
        snap = w.snapshot()
        assert snap["recording"] is False
        assert any(a["kind"] == "disk" and "DISK FULL" in a["en"] for a in snap["alarms"])
        assert w.store.event_count() == n  # nothing half-written, nothing more written
        with pytest.raises(ActionError, match="disk full"):
            w.submit("screen", {"type": "pass", "seat": "N"})
        full.clear()  # room again: recording resumes by itself
        wait_for(lambda: _done(w), 60, "the worker to finish after the disk was freed")
    finally:
        w.stop()
    assert [dump_event(e) for e in w.store.events()] == [
        dump_event(e) for e in expected_events(obs, TABLE)
    ]
    assert w.snapshot()["recording"] is True


def test_store_refuses_a_partial_write_and_another_tables_log(tmp_path: Path) -> None:
    profile = load_profile(PROFILE)
    store = EventLog(tmp_path / "k.db", table=TABLE, profile=profile.name)
    obs = sim_observations(1, 14)
    from engine.referee import Referee

    ref = Referee(profile, table=TABLE)
    evs = ref.feed(obs[0])

    def boom(_what: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    store.fault = boom
    with pytest.raises(DiskFull):
        store.append("source", obs[0], evs, deliverable=set(CONTRACT_TYPES))
    store.fault = None
    assert store.event_count() == 0 and store.source_count() == 0
    store.append("source", obs[0], evs, deliverable=set(CONTRACT_TYPES))
    assert store.event_count() == len(evs)
    with pytest.raises(StoreError, match="table 'tk', not 'other'"):
        EventLog(tmp_path / "k.db", table="other", profile=profile.name)
    with pytest.raises(StoreError, match="profile"):
        EventLog(tmp_path / "k.db", table=TABLE, profile="huaian")
    with pytest.raises(StoreError, match="does not exist"):
        EventLog(tmp_path / "nope" / "k.db", table=TABLE, profile=profile.name)
    with pytest.raises(SourceError, match="not found"):
        JsonlSource(tmp_path / "missing.jsonl")


def test_referee_actions_are_observations_through_the_referee(tmp_path: Path) -> None:
    w = _worker(tmp_path / "k.db", None)
    w.start()
    try:
        evs = w.submit("referee", {"type": "deal_start", "first_leader": "S"})
        assert [e.type for e in evs] == ["deal_started"]
        play = w.submit("referee", {"type": "played", "seat": "S", "cards": ["S3"]})
        assert play[0].type == "play"
        nxt = w.referee.state.deal.turn  # type: ignore[union-attr]
        assert w.submit("screen", {"type": "pass", "seat": nxt})[0].type == "pass"
        # correct the play: it was a pair of threes
        fix = w.submit(
            "referee",
            {
                "type": "correction",
                "replaces": play[0].id,
                "with": {"type": "played", "seat": "S", "cards": ["S3", "H3"]},
            },
        )
        assert fix[0].type == "correction" and fix[0].data["replaces"] == play[0].id
        assert w.referee.state.deal is not None and w.referee.state.deal.counts["S"] == 25
        # void it: S leads again with 27 cards
        cur = next(e for e in reversed(w.events) if e.type == "play")
        w.submit("referee", {"type": "correction", "replaces": cur.id})
        assert w.referee.state.deal is not None and w.referee.state.deal.counts["S"] == 27
        # an exposed card is a foul the referee engine applies
        ex = w.submit("referee", {"type": "exposed", "seat": "E", "cards": ["HA"]})
        assert any(e.type == "foul" and e["kind"] == "exposed_card" for e in ex)
    finally:
        w.stop()
    # nothing was edited in place: the log replays to the same state
    st = fold(w.store.events(), load_profile(PROFILE))
    assert st.to_json() == w.referee.state.to_json()
    origins = [lo.origin for lo in w.store.observations()]
    assert origins.count("referee") == 5 and origins.count("screen") == 1


def test_sim_source_plays_one_whole_match() -> None:
    src = SimSource(load_profile(PROFILE), seed=7, speed=0.0, table=TABLE)
    items = list(src.observations(0, threading.Event()))
    evs = expected_events(tuple(items), TABLE)
    assert evs[-1].type in ("match_ended", "series_ended") or any(
        e.type == "match_ended" for e in evs[-3:]
    )
    assert "seed 7" in src.description


def test_an_alarm_cleared_from_another_thread_stays_cleared_on_the_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The outbox raises and clears the network alarm from its own thread while the worker
    publishes; the snapshot stored last must be built after the last change (stop 8's CI run
    ended with a cleared alarm still on the screen). The worker's thread is slowed down between
    building a snapshot and storing it, so that the two threads overlap."""
    main = threading.get_ident()

    class LateLock:
        """The worker's snapshot lock, taken 2 ms late by the worker's own thread."""

        def __init__(self) -> None:
            self.lock = threading.Lock()

        def __enter__(self) -> None:
            if threading.get_ident() != main:
                time.sleep(0.002)
            self.lock.acquire()

        def __exit__(self, *exc: object) -> None:
            self.lock.release()

    w = _worker(tmp_path / "k.db", None)
    monkeypatch.setattr(w, "_lock", LateLock())
    stop = threading.Event()
    errors: list[BaseException] = []

    def publisher() -> None:
        try:
            while not stop.is_set():
                w._publish()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    thread = threading.Thread(target=publisher)
    thread.start()
    try:
        for i in range(200):
            w.set_alarm("network", f"scoreboard unreachable, try {i}", "无法连接计分中心")
            time.sleep(0.001)
            w.set_alarm("network", None)
            time.sleep(0.003)
            assert [a for a in w.snapshot()["alarms"] if a["kind"] == "network"] == [], i
    finally:
        stop.set()
        thread.join()
    assert errors == []
    assert w.snapshot()["alarms"] == []


def test_a_re_read_camera_play_is_logged_and_rebuilt_the_same(tmp_path: Path) -> None:
    """A camera play with runner-up readings (``doubts``) goes through the log as observed; the
    referee's re-read is in the event, and a restarted kiosk rebuilds the same events."""
    f = write_misread_straight(tmp_path / "obs.jsonl", {"t": 5.0, "type": "pass", "seat": "E"})
    db = tmp_path / "k.db"
    w = _worker(db, f)
    w.start()
    try:
        wait_for(lambda: _done(w) and any(e.type == "pass" for e in w.events), 30, "the plays")
    finally:
        w.stop()
    play = next(e for e in w.store.events() if e.type == "play")
    assert sorted(play["cards"]) == sorted(["D3", "C4", "H5", "S6", "D7"])
    assert play["camera"] == ["D3", "C4", "H5", "S6", "DA"] and play["legal"] is True
    assert "(re-read; camera saw D3 C4 H5 S6 DA)" in str(w.snapshot())
    before = [dump_event(e) for e in w.store.events()]
    w.store.close()
    w2 = _worker(db, None)  # rebuilds the referee from the logged observations
    w2.start()
    try:
        assert [dump_event(e) for e in w2.store.events()] == before
        assert w2.referee.state.to_json() == fold(w2.store.events(), w2.profile).to_json()
    finally:
        w2.stop()
