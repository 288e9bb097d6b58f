"""The review desk's API on a real table kiosk (``guandan table run`` in a subprocess) with real
footage (the demo recording's first 45 s, tests/review/helpers.py): the PIN, the deals, where an
event is in the footage, range requests on segments and clips, a missing segment and a camera
outage as gaps, and rulings as new events."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from tests.helpers_server import ServerProcess

from .helpers import MISSING, OUTAGE, PIN, demo_frame, get, kiosk_server, login, post, request


@pytest.fixture(scope="module")
def desk(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ServerProcess, dict[str, str]]]:
    proc = kiosk_server(tmp_path_factory.mktemp("review-api"))
    try:
        yield proc, login(proc.url)
    finally:
        proc.stop()


def _events(url: str, h: dict[str, str]) -> list[dict[str, Any]]:
    status, d = get(url + "/api/review/deals/1", h)
    assert status == 200, d
    return list(d["events"])


def _play_at(events: list[dict[str, Any]], t: float) -> dict[str, Any]:
    return next(e for e in events if e["t"] == t and e["effective"] and e["type"] != "correction")


def test_wrong_pin_and_no_token_are_refused(desk: tuple[ServerProcess, dict[str, str]]) -> None:
    proc, _h = desk
    status, out = post(proc.url + "/api/referee/login", {"pin": "0000" if PIN != "0000" else "1"})
    assert status == 401 and "wrong PIN" in out["detail"] and out["tries_left"] >= 1
    for path in ("/api/review/deals", "/api/review/footage", "/api/review/locate?t=5"):
        status, out = get(proc.url + path)
        assert status == 401, path
        assert "PIN" in out["detail"] and out["zh"]
        status, _ = get(proc.url + path, {"X-Referee-Token": "not-a-token"})
        assert status == 401, path
    status, _h2, _raw = request(proc.url + "/api/review/clip.webm?t0=0&t1=5&token=nope")
    assert status == 401
    # the page itself loads (it asks for the PIN), in both languages
    status, _h2, raw = request(proc.url + "/review")
    assert status == 200 and "PIN" in raw.decode() and "密码" in raw.decode()


def test_deals_footage_and_gaps(desk: tuple[ServerProcess, dict[str, str]]) -> None:
    proc, h = desk
    status, out = get(proc.url + "/api/review/deals", h)
    assert status == 200, out
    assert [d["deal"] for d in out["deals"]] == [1]
    assert out["deals"][0]["events"] >= 14 and not out["deals"][0]["over"]
    segs = out["footage"]["segments"]
    assert [s["present"] for s in segs] == [True, False, True, True], segs
    assert segs[1]["start_t"] == MISSING[0]
    kinds = {g["kind"]: g for g in out["footage"]["gaps"]}
    assert kinds["missing"]["start_t"] < MISSING[0] + 0.5 and kinds["missing"]["end_t"] >= 29.8
    assert OUTAGE[0] - 0.5 < kinds["outage"]["start_t"] <= OUTAGE[0]
    assert OUTAGE[1] - 0.5 <= kinds["outage"]["end_t"] <= OUTAGE[1] + 0.5
    assert "camera was lost" in kinds["outage"]["en"] and kinds["outage"]["zh"]
    status, _ = get(proc.url + "/api/review/deals/7", h)
    assert status == 404


def test_locate_event_segment_offset_and_gaps(desk: tuple[ServerProcess, dict[str, str]]) -> None:
    proc, h = desk
    evs = _events(proc.url, h)
    bomb = _play_at(evs, 6.6)
    status, loc = get(proc.url + f"/api/review/locate?event={bomb['id']}", h)
    assert status == 200, loc
    assert loc["segment"].endswith(".avi") and loc["offset"] == pytest.approx(6.6, abs=0.01)
    assert loc["frame"] == 33 and loc["video"]["seek"] == pytest.approx(
        6.6 - 3.0 - loc["video"]["t0"]
    )
    in_missing = _play_at(evs, 27.1)
    status, loc = get(proc.url + f"/api/review/locate?event={in_missing['id']}", h)
    assert loc["segment"] is None and loc["gap"]["kind"] == "missing", loc
    assert "missing" in loc["gap"]["en"] and loc["gap"]["zh"]
    in_outage = _play_at(evs, 37.45)
    status, loc = get(proc.url + f"/api/review/locate?event={in_outage['id']}", h)
    assert loc["segment"] is None and loc["gap"]["kind"] == "not_recorded", loc
    status, loc = get(proc.url + "/api/review/locate?event=nope", h)
    assert status == 404 and "nope" in loc["detail"]


def test_segment_range_request_and_missing_segment(
    desk: tuple[ServerProcess, dict[str, str]],
) -> None:
    proc, h = desk
    segs = get(proc.url + "/api/review/footage", h)[1]["segments"]
    first, missing = segs[0], segs[1]
    status, _hd, whole = request(proc.url + f"/api/review/footage/{first['file']}", headers=h)
    assert status == 200 and whole[:4] == b"RIFF" and len(whole) == first["bytes"]
    status, hd, part = request(
        proc.url + f"/api/review/footage/{first['file']}", headers=h | {"Range": "bytes=100-1099"}
    )
    assert status == 206 and part == whole[100:1100]
    assert hd["content-range"] == f"bytes 100-1099/{len(whole)}"
    status, _hd, raw = request(proc.url + f"/api/review/footage/{missing['file']}", headers=h)
    assert status == 404
    assert b"missing" in raw and missing["file"].encode() in raw
    status, _hd, _raw = request(proc.url + "/api/review/footage/..%2Fk.db", headers=h)
    assert status == 404


def test_clip_is_the_recorded_footage_at_the_right_time(
    desk: tuple[ServerProcess, dict[str, str]], tmp_path: Path
) -> None:
    proc, h = desk
    evs = _events(proc.url, h)
    play = _play_at(evs, 9.6)
    video = get(proc.url + f"/api/review/locate?event={play['id']}", h)[1]["video"]
    assert video["t0"] == 0 and video["t1"] == 16
    status, hd, clip = request(proc.url + video["url"])  # the token is in the URL (<video>)
    assert status == 200 and hd["content-type"] == "video/webm" and clip[:4] == b"\x1a\x45\xdf\xa3"
    status, hd, part = request(proc.url + video["url"], headers={"Range": "bytes=1000-1999"})
    assert status == 206 and part == clip[1000:2000]
    path = tmp_path / "clip.webm"
    path.write_bytes(clip)
    cap = cv2.VideoCapture(str(path))
    frames = []
    while True:
        ok, img = cap.read()
        if not ok:
            break
        frames.append(img)
    cap.release()
    assert len(frames) == 16 * 5 + 1  # 0..16 s at the recording's 5 fps
    for t in (0.0, 6.6, 9.6, 14.0):  # clip time x shows session time t0 + x
        got = frames[int(round((t - video["t0"]) * 5))].astype(np.float64)
        want = demo_frame(t).astype(np.float64)
        other = demo_frame(t + 2.0).astype(np.float64)
        err, off = np.abs(got - want).mean(), np.abs(got - other).mean()
        assert err < 6.0 and err < off, (t, err, off)
    # t 15..16 lies in the missing segment: dark frames say so
    assert frames[-1][:100].std() < 3 and frames[0][:100].std() > 3


def test_look_finds_the_cards_in_the_frame(desk: tuple[ServerProcess, dict[str, str]]) -> None:
    proc, h = desk
    status, seen = get(proc.url + "/api/review/look?t=8.0", h)
    assert status == 200, seen
    assert seen["size"] == [1280, 720] and seen["frame_t"] == pytest.approx(8.0, abs=0.11)
    if seen["cards"] is None:
        pytest.skip(f"no detector in this build: {seen['why']}")
    names = {c["card"][1:] for c in seen["cards"]}
    assert "3" in names, seen["cards"]  # S's bomb of 3s lies in its zone
    assert set(seen["zones"]) >= {"N", "E", "S", "W"}
    status, _ = get(proc.url + "/api/review/look?t=20", h)
    assert status == 404
    status, hd, jpg = request(proc.url + "/api/review/frame.jpg?t=8", headers=h)
    assert status == 200 and jpg[:2] == b"\xff\xd8"


def test_rulings_are_new_events_nothing_overwritten(
    desk: tuple[ServerProcess, dict[str, str]],
) -> None:
    proc, h = desk
    url = proc.url
    before = get(url + "/api/events", h)[1]
    # a ruling without a reason or a name is refused, nothing logged
    status, out = post(
        url + "/api/review/ruling",
        {"action": "foul_add", "kind": "slow_play", "seat": "W", "referee": "Li Wei", "reason": ""},
        h,
    )
    assert status == 422
    status, out = post(
        url + "/api/review/ruling",
        {"action": "foul_add", "kind": "late", "seat": "W", "referee": "Li Wei", "reason": "x"},
        h,
    )
    assert status == 422 and "slow_play" in out["detail"]
    assert get(url + "/api/events", h)[1] == before
    # add a foul
    status, out = post(
        url + "/api/review/ruling",
        {
            "action": "foul_add",
            "kind": "slow_play",
            "seat": "W",
            "referee": "Li Wei",
            "reason": "took 40 s",
        },
        h,
    )
    assert status == 200, out
    foul = next(e for e in out["events"] if e["type"] == "foul")
    assert foul["seat"] == "W" and "Li Wei" in foul["detail"] and "took 40 s" in foul["detail"]
    # remove it again: a correction that voids it
    status, out = post(
        url + "/api/review/ruling",
        {
            "event_id": foul["id"],
            "action": "foul_remove",
            "referee": "Zhang San",
            "reason": "the clock was wrong",
        },
        h,
    )
    assert status == 200, out
    corr = out["events"][0]
    assert corr["type"] == "correction" and corr["target"] == foul["id"]
    assert "Zhang San" in corr["reason"] and "the clock was wrong" in corr["reason"]
    # correct E's D7 to D8 with cards
    evs = _events(url, h)
    d7 = _play_at(evs, 34.96)
    status, out = post(
        url + "/api/review/ruling",
        {
            "event_id": d7["id"],
            "action": "correct",
            "seat": "E",
            "cards": ["D8"],
            "referee": "Li Wei",
            "reason": "the video shows D8",
        },
        h,
    )
    assert status == 200, out
    assert out["events"][0]["type"] == "correction"
    replay = [
        e for e in out["events"] if e["type"] == "play" and e["seat"] == "E" and e["t"] == 34.96
    ]
    assert replay and replay[0]["cards"] == ["D8"], [
        (e["type"], e["t"], e.get("seat"), e.get("cards"), e.get("detail")) for e in out["events"]
    ]
    # the voided event is still in the log, unchanged; the desk marks it
    after = get(url + "/api/events", h)[1]
    assert after[: len(before)] == before
    evs = _events(url, h)
    old = next(e for e in evs if e["id"] == d7["id"])
    assert old["effective"] is False and old["rulings"][0]["referee"] == "Li Wei"
    # ruling on a replaced event is refused with what to do
    status, out = post(
        url + "/api/review/ruling",
        {"event_id": d7["id"], "action": "void", "referee": "Li Wei", "reason": "again"},
        h,
    )
    assert status == 409 and "replaced" in out["detail"]
    # confirm: a note with the name (no game change)
    bomb = _play_at(evs, 6.6)
    status, out = post(
        url + "/api/review/ruling",
        {
            "event_id": bomb["id"],
            "action": "confirm",
            "referee": "Wang Wu",
            "reason": "clear on video",
        },
        h,
    )
    assert status == 200 and out["events"] == []
    evs = _events(url, h)
    assert next(e for e in evs if e["id"] == bomb["id"])["confirmed"]
