"""``guandan table run`` on live cameras, as real server processes.

* the bundled game served as a live camera (``tests/kiosk/livecam.py``, a ``replay:`` backend
  loaded through ``GUANDAN_CAMERA_PLUGINS``) that is unplugged mid-deal: the events before the
  cut stay, the ``camera`` alarm shows, the kiosk reconnects with backoff, the pipeline carries
  on; footage is recorded in segments; the outage is in the log's notes;
* the ``synthetic:table`` spec runs live through the same pipeline; a disk below the footage
  reserve stops the footage (alarm), not the event log;
* cameras that cannot be opened: one line naming the spec, exit 2, no event log written.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import cv2
import pytest

from engine.observations import parse_observation
from engine.profiles import load_profile
from engine.referee import referee_events
from kiosk.table.store import EventLog
from tests.helpers_server import ServerProcess

from .helpers import REPO, free_port, get_json, post_json, wait_for

GAME = REPO / "datasets" / "demo" / "game.mp4"
ORACLE = REPO / "datasets" / "demo" / "game.mp4.oracle.jsonl.gz"
TRUTH = REPO / "datasets" / "demo" / "game.mp4.truth.jsonl"
PLUGIN = {"GUANDAN_CAMERA_PLUGINS": "tests.kiosk.livecam"}


def _kiosk(tmp_path: Path, camera: str, extra: list[str], env: dict[str, str]) -> ServerProcess:
    port = free_port()
    args = [
        "table", "run", "--camera", camera, "--db", str(tmp_path / "k.db"), "--port", str(port),
        "--pin", "1357", "--table", "t1", "--log-level", "warning", *extra,
    ]  # fmt: skip
    proc = ServerProcess(args, port, tmp_path / "kiosk.log", env=env)
    proc.name = "kiosk"
    return proc


def _plays(state: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    return [(p["type"], p["seat"], sorted(p["cards"])) for p in state["plays"]]


def _expected() -> list[tuple[str, str | None, list[str]]]:
    obs = [parse_observation(line) for line in TRUTH.read_text().splitlines() if line.strip()]
    events = referee_events(load_profile("standard"), obs, table="t1")
    return [(e.type, e.data.get("seat"), sorted(e.data.get("cards", []))) for e in events]


def test_live_camera_unplugged_mid_deal_alarms_reconnects_and_goes_on(tmp_path: Path) -> None:
    # 45 frames = 9 s of the game: the deal has started and S has played; E plays at 9.6 s
    camera = f"replay:{GAME}?fail_after=45&down=2"
    kiosk = _kiosk(
        tmp_path,
        camera,
        ["--detector", str(ORACLE), "--profile", "standard", "--footage-segment", "0.1"],
        PLUGIN,
    )
    kiosk.start()
    url = kiosk.url
    try:
        st = get_json(url + "/api/state")
        assert (
            st["source"]["kind"] == "camera"
            and "live camera replay:" in st["source"]["description"]
        )
        assert st["camera"]["state"] == "live" and st["camera"]["size"] == [1280, 720]

        before = wait_for(
            lambda: (s := get_json(url + "/api/state"))["plays"] and s, 60, "S's first play"
        )
        assert _plays(before)[0] == ("play", "S", ["C3", "D3", "H3", "S3"])

        # the camera is unplugged: the alarm is on the screen's state, the kiosk still serves
        lost = wait_for(
            lambda: (s := get_json(url + "/api/state"))["camera"]["state"] == "lost" and s,
            60,
            "the camera to be reported lost",
        )
        alarm = next(a for a in lost["alarms"] if a["kind"] == "camera")
        assert "CAMERA LOST" in alarm["en"] and camera in alarm["en"] and "摄像头" in alarm["zh"]
        assert lost["recording"] is True and kiosk.healthy()
        # the referee's entries still work while the camera is away
        code, body = post_json(url + "/api/referee/login", {"pin": "1357"})
        assert code == 200, body
        code, body = post_json(
            url + "/api/referee/seating",
            {"N": "Ning", "E": "Emma", "S": "Sun", "W": "Wei"},
            headers={"X-Referee-Token": body["token"]},
        )
        assert code == 200, body

        # two reopenings fail (backoff 1 s, 2 s), the third brings the frames back
        back = wait_for(
            lambda: (s := get_json(url + "/api/state"))["camera"]["state"] == "live" and s,
            60,
            "the camera to come back",
        )
        assert not any(a["kind"] == "camera" for a in back["alarms"])
        assert back["camera"]["outages"] == 1 and back["camera"]["reopen_tries"] == 3
        assert "open 2" in back["camera"]["last_error"]

        # the pipeline goes on where the table is: E's and N's plays come after the outage
        after = wait_for(
            lambda: len(_plays(s := get_json(url + "/api/state"))) >= 4 and s, 90, "N's play"
        )
        frames = after["camera"]["frames"]
    finally:
        kiosk.stop()
    # a clean shutdown (uvicorn re-raises the SIGTERM it handled)
    assert kiosk.proc is not None and kiosk.proc.returncode in (0, -15), kiosk.log_tail()

    assert _plays(after)[:3] == [
        ("play", "S", ["C3", "D3", "H3", "S3"]),
        ("play", "E", ["D4", "H4", "H4", "S4"]),
        ("play", "N", ["C8", "C8", "D8", "H8", "H8"]),
    ]
    assert after["seating"]["E"] == "Emma"

    # the local log holds what the screen showed, in the referee's order for the game
    log = EventLog(tmp_path / "k.db", table="t1", profile="standard")
    try:
        events = log.events()
        notes = [b for _at, _k, b in log.notes("camera")]
    finally:
        log.close()
    source_events = [
        (e.type, e.data.get("seat"), sorted(e.data.get("cards", [])))
        for e in events
        if e.type in ("deal_started", "play")
    ]
    want = [e for e in _expected() if e[0] in ("deal_started", "play")]
    assert source_events[:4] == want[:4]
    ts = [e.t for e in events]
    assert ts == sorted(ts) and ts[0] > 0
    assert [n["event"] for n in notes] == ["lost", "restored"]
    assert notes[1]["down_s"] >= 2.5 and notes[1]["t"] > notes[0]["t"]

    # footage: segments of about 6 s, readable, at the camera's size; the index has them all
    folder = tmp_path / "k-footage"
    index = [json.loads(x) for x in (folder / "segments.jsonl").read_text().splitlines()]
    assert len(index) >= 3
    assert sum(seg["frames"] for seg in index) >= frames
    for seg in index:
        cap = cv2.VideoCapture(str(folder / seg["file"]))
        try:
            assert cap.isOpened()
            assert int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)) == 1280
            ok, image = cap.read()
            assert ok and image.shape == (720, 1280, 3)
        finally:
            cap.release()
        assert seg["end_t"] - seg["start_t"] <= 6.5
    # the outage is a hole between two segments' times, not hidden
    gaps = [b["start_t"] - a["end_t"] for a, b in zip(index, index[1:], strict=False)]
    assert max(gaps) >= 2.5


def test_synthetic_camera_runs_live_and_a_full_disk_stops_only_the_footage(
    tmp_path: Path,
) -> None:
    none = tmp_path / "none.oracle.jsonl.gz"  # a detector that sees no cards
    gzip.open(none, "wt").close()
    kiosk = _kiosk(
        tmp_path,
        "synthetic:table?fps=5&size=640x480",
        ["--detector", str(none), "--footage-reserve", "1e12", "--speed", "3"],
        {},
    )
    kiosk.start()
    url = kiosk.url
    try:
        st = wait_for(
            lambda: (s := get_json(url + "/api/state"))["camera"]["frames"] >= 15 and s,
            60,
            "15 frames",
        )
        cam = st["camera"]
        assert cam["spec"] == "synthetic:table?fps=5&size=640x480" and cam["state"] == "live"
        assert cam["calibrated"] is True and cam["calibration"].startswith("from the video")
        footage = next(a for a in st["alarms"] if a["kind"] == "footage")
        assert (
            "FOOTAGE RECORDING STOPPED" in footage["en"] and "event log is intact" in footage["en"]
        )
        assert cam["footage"]["recording"] is False and st["recording"] is True
        wall = time.monotonic()
        more = wait_for(
            lambda: (
                (s := get_json(url + "/api/state"))["camera"]["frames"] >= cam["frames"] + 5 and s
            ),
            30,
            "more frames",
        )
        wall = time.monotonic() - wall
        # live: session time runs with the wall clock (--speed is ignored), not 3x faster
        assert 0 < more["now_t"] - st["now_t"] <= wall + 0.5
        assert "markers" not in {a["kind"] for a in more["alarms"]}
    finally:
        kiosk.stop()
    assert "--speed is ignored for a live camera" in kiosk.log_tail()
    assert not list((tmp_path / "k-footage").glob("*.avi"))


@pytest.mark.parametrize(
    ("camera", "message"),
    [
        ("device:97", "no camera device /dev/video97: check it is plugged in"),
        ("picamera2", "sudo apt install python3-picamera2"),
        ("nosuch:1", "unknown camera"),
        ("synthetic?frames=0", "delivered no frame"),
        ("device:0?widht=3", "unknown option 'widht'"),
    ],
)
def test_a_camera_that_cannot_be_opened_is_one_line_exit_2(
    camera: str, message: str, tmp_path: Path
) -> None:
    none = tmp_path / "none.oracle.jsonl.gz"
    gzip.open(none, "wt").close()
    out = subprocess.run(
        [
            sys.executable, "-m", "kiosk", "table", "run", "--camera", camera,
            "--db", str(tmp_path / "k.db"), "--pin", "1234", "--port", str(free_port()),
            "--detector", str(none),
        ],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and f"--camera {camera}" in lines[0] and message in lines[0], lines
    assert not (tmp_path / "k.db").exists()  # nothing written
    assert not (tmp_path / "k-footage").exists()


def test_the_pi_service_environment_names_the_camera_and_calibration(tmp_path: Path) -> None:
    """hardware/pi/guandan-kiosk.service runs a bare `guandan table run` with $GUANDAN_CAMERA
    and $GUANDAN_CALIBRATION set."""
    base = [
        sys.executable, "-m", "kiosk", "table", "run", "--db", str(tmp_path / "k.db"),
        "--pin", "1234", "--port", str(free_port()),
    ]  # fmt: skip
    env = dict(os.environ, GUANDAN_CAMERA="device:96")
    env.pop("GUANDAN_CALIBRATION", None)
    out = subprocess.run(base, cwd=REPO, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 2 and "--camera device:96: cannot open the camera" in out.stderr
    env["GUANDAN_CALIBRATION"] = str(tmp_path / "nowhere.json")
    out = subprocess.run(base, cwd=REPO, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 2, out.stderr
    assert f"$GUANDAN_CALIBRATION={tmp_path / 'nowhere.json'}: file not found" in out.stderr
    assert not (tmp_path / "k.db").exists()
