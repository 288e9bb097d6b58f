"""The kiosk's HTTP API in process (FastAPI TestClient): PIN rate limit, referee mode, screen
passes, the disk-full alarm on the screen's state, the overlay feed and its delay."""

from __future__ import annotations

import errno
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from kiosk.table.app import PinGate, create_app
from kiosk.table.service import build_kiosk

from .helpers import PROFILE


@pytest.fixture()
def client(tmp_path: Path) -> Iterator[TestClient]:
    kiosk = build_kiosk(db=tmp_path / "k.db", table="ta", profile=PROFILE, source=None, pin="4321")
    kiosk.pin.lockout_s = 2.0
    with TestClient(create_app(kiosk)) as c:
        c.kiosk = kiosk  # type: ignore[attr-defined]
        yield c


def _login(c: TestClient) -> dict[str, str]:
    r = c.post("/api/referee/login", json={"pin": "4321"})
    assert r.status_code == 200, r.text
    return {"X-Referee-Token": r.json()["token"]}


def test_pin_brute_force_is_locked_out_and_the_lockout_survives_a_restart(
    client: TestClient, tmp_path: Path
) -> None:
    for i in range(4):
        r = client.post("/api/referee/login", json={"pin": f"000{i}"})
        assert r.status_code == 401
        assert r.json()["tries_left"] == 4 - i
    r = client.post("/api/referee/login", json={"pin": "0009"})
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
    # locked: even the right PIN is refused now
    r = client.post("/api/referee/login", json={"pin": "4321"})
    assert r.status_code == 429 and "locked" in r.json()["detail"]
    # a restarted kiosk (same log) is still locked
    gate = PinGate("4321", client.kiosk.store, lockout_s=2.0)  # type: ignore[attr-defined]
    assert gate.login("4321")[0] == 429
    time.sleep(2.1)
    assert client.post("/api/referee/login", json={"pin": "4321"}).status_code == 200
    # the next lockout is longer (doubling)
    for i in range(5):
        client.post("/api/referee/login", json={"pin": f"111{i}"})
    r = client.post("/api/referee/login", json={"pin": "4321"})
    assert r.status_code == 429 and r.json()["retry_after"] >= 3


def test_referee_mode_needs_the_pin_and_goes_through_the_referee(client: TestClient) -> None:
    assert client.post("/api/referee/deal/start", json={}).status_code == 401
    assert (
        client.post(
            "/api/referee/void", json={"event_id": "x"}, headers={"X-Referee-Token": "forged"}
        ).status_code
        == 401
    )
    h = _login(client)
    r = client.post("/api/referee/deal/start", json={"first_leader": "W"}, headers=h)
    assert r.status_code == 200 and r.json()["events"][0]["type"] == "deal_started"
    # a pass from a device that is not the table's paired screen is refused
    r = client.post("/api/seat/W/pass")
    assert r.status_code == 403 and r.json()["code"] == "err.not_paired"
    r = client.post("/api/referee/pair", json={"name": "table tablet"}, headers=h)
    assert r.status_code == 200, r.text
    paired = {"X-Table-Pairing": r.json()["token"]}
    # W leads from the screen? a lead cannot be a pass: the referee flags it
    r = client.post("/api/seat/W/pass", headers=paired)
    assert r.status_code == 200 and r.json()["events"][0]["kind"] == "illegal_play"
    assert client.post("/api/seat/X/pass", headers=paired).status_code == 422
    r = client.post(
        "/api/referee/foul", json={"kind": "exposed_card", "seat": "N", "cards": "HA"}, headers=h
    )
    foul = r.json()["events"][-1]
    assert foul["type"] == "foul" and foul["kind"] == "exposed_card"
    # a kind with no evidence to record: the referee's ruling, with the profile's penalty
    r = client.post(
        "/api/referee/foul", json={"kind": "slow_play", "seat": "N", "detail": "60 s"}, headers=h
    )
    slow = r.json()["events"][-1]
    assert (slow["type"], slow["kind"], slow["seat"], slow["ruled"]) == (
        "foul",
        "slow_play",
        "N",
        True,
    )
    assert slow["detail"] == "marked by the referee: 60 s"
    r = client.post("/api/referee/foul", json={"kind": "cheating", "seat": "N"}, headers=h)
    assert r.status_code == 422 and "slow_play" in r.json()["detail"]
    r = client.post("/api/referee/foul", json={"kind": "slow_play"}, headers=h)
    assert r.status_code == 422 and "seat" in r.json()["detail"]
    r = client.post(
        "/api/referee/foul", json={"kind": "exposed_card", "seat": "N", "cards": "ZZ"}, headers=h
    )
    assert r.status_code == 422 and "ZZ" in r.json()["detail"]
    # void the foul: a correction event; the state has no foul any more
    r = client.post("/api/referee/void", json={"event_id": foul["id"]}, headers=h)
    assert r.status_code == 200 and r.json()["events"][0]["type"] == "correction"
    st = client.get("/api/state").json()
    assert not [f for f in st["fouls"] if f["kind"] == "exposed_card"]
    assert client.post("/api/referee/void", json={"event_id": "nope"}, headers=h).status_code == 404
    ev = st["recent"][0]["id"]
    assert client.post("/api/referee/confirm", json={"event_id": ev}, headers=h).status_code == 200
    r = client.post(
        "/api/referee/seating", json={"N": "Li", "S": "Wang", "E": "Zhao", "W": "Sun"}, headers=h
    )
    assert r.status_code == 200
    st = client.get("/api/state").json()
    assert st["seating"]["N"] == "Li" and [e for e in st["recent"] if e["id"] == ev][0]["confirmed"]
    # end the deal by a ruling: scored like any deal (swiss-421: NS 1-2 goes up four levels)
    r = client.post("/api/referee/deal/end", json={"order": ["N", "S", "W", "E"]}, headers=h)
    ended = r.json()["events"][-1]
    assert (ended["type"], ended["order"], ended["ruled"]) == (
        "deal_ended",
        ["N", "S", "W", "E"],
        True,
    )
    assert client.get("/api/state").json()["levels"]["NS"] == "6"
    r = client.post("/api/referee/deal/end", json={"order": ["N", "S"]}, headers=h)
    assert r.status_code == 422 and "order" in r.json()["detail"]
    client.post("/api/referee/logout", headers=h)
    assert client.post("/api/referee/deal/start", json={}, headers=h).status_code == 401


def test_disk_full_alarm_is_on_the_screen_state(client: TestClient) -> None:
    kiosk = client.kiosk  # type: ignore[attr-defined]

    def full(_what: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    h = _login(client)
    kiosk.store.fault = full
    r = client.post("/api/referee/deal/start", json={}, headers=h)
    assert r.status_code == 422 and "disk full" in r.json()["detail"]
    st = client.get("/api/state").json()
    assert st["recording"] is False
    assert st["alarms"][0]["kind"] == "disk" and "磁盘已满" in st["alarms"][0]["zh"]
    assert kiosk.store.event_count() == 0
    r = client.post("/api/seat/N/pass", headers=h)  # referee mode may press too
    assert r.status_code == 422 and "disk full" in r.json()["detail"]
    assert "磁盘已满" in r.json()["detail_zh"]
    kiosk.store.fault = None  # room again: the next action records and clears the alarm
    r = client.post("/api/referee/deal/start", json={}, headers=h)
    assert r.status_code == 200, r.text
    st = client.get("/api/state").json()
    assert st["recording"] is True and not st["alarms"] and st["deal_no"] == 1


def test_overlay_feed_applies_the_delay(client: TestClient) -> None:
    h = _login(client)
    assert client.get("/overlay/table").status_code == 200
    assert "GDOverlay.ticker" in client.get("/overlay/ticker").text
    client.post("/api/referee/deal/start", json={"first_leader": "N"}, headers=h)
    now = client.get("/overlay/state?delay=0").json()["state"]
    assert now["deal_no"] == 1 and now["deal"]["turn"] == "N"
    late = client.get("/overlay/state?delay=60").json()["state"]
    assert late is None or late["deal_no"] == 0  # the overlay lags: not shown yet
    assert "recent" not in now and "outbox" not in now  # no referee detail on air
    assert client.get("/overlay/state?delay=-1").status_code == 422


def test_seat_pass_buttons_feed_pass_observations(client: TestClient) -> None:
    from kiosk.table.service import attach_buttons

    kiosk = client.kiosk  # type: ignore[attr-defined]
    buttons = attach_buttons(kiosk, "mock")
    h = _login(client)
    client.post("/api/referee/deal/start", json={"first_leader": "S"}, headers=h)
    kiosk.worker.submit("referee", {"type": "played", "seat": "S", "cards": ["D5"]})
    turn = kiosk.worker.referee.state.deal.turn
    buttons.press(turn)
    buttons.press(turn)  # a bounce: recorded by the buttons, not delivered
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any(e.type == "pass" for e in kiosk.worker.events):
        time.sleep(0.05)
    passes = [e for e in kiosk.worker.events if e.type == "pass"]
    assert [e["seat"] for e in passes] == [turn]
    assert [lo.origin for lo in kiosk.store.observations()][-1] == "button"
    assert [p.accepted for p in buttons.history] == [True, False]
    buttons.close()


def test_confirming_a_camera_foul_makes_it_count_once(client: TestClient) -> None:
    """A foul on a camera reading is flagged for review and does not count; the referee's
    one-tap confirm marks it (it counts, the penalty is not applied again); a second confirm
    does not count it twice."""
    h = _login(client)
    client.post("/api/referee/deal/start", json={"first_leader": "S"}, headers=h)
    w = client.kiosk.worker  # type: ignore[attr-defined]
    cam = {"type": "played", "seat": "N", "cards": ["D9"], "doubts": [{"card": "D9", "or": []}]}
    (flagged,) = [e for e in w.submit("source", cam) if e.type == "foul"]
    assert flagged.data["review"] is True and flagged.data["kind"] == "out_of_turn"
    deal = w.referee.state.deal
    st = client.get("/api/state").json()
    assert st["team_fouls"]["NS"] == 0 and deal.turn == "S" and deal.barred == {"N"}
    (item,) = [e for e in st["recent"] if e["id"] == flagged.id]
    assert "camera: confirm to count it" in item["summary"]
    # the trick is played out (N barred), S leads the next one; then the referee confirms
    w.submit("source", {"type": "played", "seat": "S", "cards": ["D3"]})
    for seat in ("E", "W"):
        w.submit("button", {"type": "pass", "seat": seat})
    deal = w.referee.state.deal
    assert deal.turn == "S" and deal.top is None and not deal.barred
    r = client.post("/api/referee/confirm", json={"event_id": flagged.id}, headers=h)
    assert r.status_code == 200, r.text
    (mark,) = r.json()["events"]
    assert mark["type"] == "foul" and mark["confirms"] == flagged.id and mark["seat"] == "N"
    assert "review" not in mark and "confirmed" in mark["detail"]
    deal = w.referee.state.deal
    assert client.get("/api/state").json()["team_fouls"]["NS"] == 1
    assert deal.turn == "S" and not deal.barred  # the trick it cost was the earlier one
    r = client.post("/api/referee/confirm", json={"event_id": flagged.id}, headers=h)
    assert r.status_code == 200 and "events" not in r.json()
    assert client.get("/api/state").json()["team_fouls"]["NS"] == 1
