"""LiveSource and FootageRecorder in process: a camera that fails, reopen with backoff, the
session clock, footage segments cut at an outage, and the footage's disk reserve."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hardware.camera import CameraError, SyntheticCamera
from kiosk.table.footage import FootageRecorder
from kiosk.table.sources import LiveSource, SourceError, is_live_spec

from .helpers import wait_for


class NoCards:
    """A detector that never sees a card."""

    name = "none"

    def detect_frame(self, index: int, image: Any, roi: Any = None) -> list[Any]:
        return []


class FlakyOpener:
    """Opens 1 and 4+: a synthetic camera (the first ends after ``first`` frames, as a camera
    that is unplugged); opens 2 and 3 fail."""

    def __init__(self, first: int = 8) -> None:
        self.first = first
        self.opens = 0
        self.at: list[float] = []

    def __call__(self, spec: str) -> SyntheticCamera:
        self.opens += 1
        self.at.append(time.monotonic())
        if self.opens in (2, 3):
            raise CameraError(f"camera {spec} is not there (open {self.opens})")
        frames = self.first if self.opens == 1 else None
        return SyntheticCamera("table", frames=frames, fps=20.0, size=(320, 240))


def test_bad_specs_and_which_are_live() -> None:
    assert is_live_spec("device:0") and is_live_spec("picamera2:1") and is_live_spec("synthetic")
    assert not is_live_spec("file:game.mp4") and not is_live_spec("game.mp4")
    with pytest.raises(CameraError, match="unknown camera"):
        is_live_spec("nosuch")
    with pytest.raises(SourceError, match="--camera device:97: cannot open the camera"):
        LiveSource("device:97", detector=NoCards())


def test_lost_camera_alarms_notes_reopens_with_backoff_and_goes_on(tmp_path: Path) -> None:
    opener = FlakyOpener()
    footage = FootageRecorder(tmp_path / "footage", segment_s=600, reserve_mb=0)
    src = LiveSource(
        "flaky", detector=NoCards(), footage=footage, opener=opener, retry_s=0.1, max_retry_s=1.0
    )
    alarms: list[tuple[str, str | None]] = []
    notes: list[dict[str, Any]] = []
    src.attach(
        alarm=lambda kind, en, zh: alarms.append((kind, en)),
        note=notes.append,
        start_t=100.0,
        paused=lambda: False,
    )
    assert src.clock() is not None and 100.0 <= src.clock() < 101.0  # type: ignore[operator]
    stop = threading.Event()
    out: list[Any] = []
    th = threading.Thread(target=lambda: out.extend(src.observations(999, stop)), daemon=True)
    th.start()
    try:
        wait_for(lambda: src.outages == 1, 20, "the camera to be lost")
        wait_for(lambda: src.status()["state"] == "live" and src.frames >= 30, 30, "frames back")
    finally:
        stop.set()
        th.join(10)
    assert not th.is_alive()
    assert out == []  # nothing on the table to read

    camera = [(k, en is not None) for k, en in alarms if k == "camera"]
    assert camera == [("camera", True), ("camera", False)]
    lost_text = next(en for k, en in alarms if k == "camera" and en)
    assert "CAMERA LOST (flaky)" in lost_text and "ended its stream" in lost_text
    assert [n["event"] for n in notes] == ["lost", "restored"]
    assert notes[0]["t"] >= 100.0 and notes[1]["t"] > notes[0]["t"]
    # backoff: 0.1 s, 0.2 s, 0.4 s between the reopen attempts
    assert opener.opens == 4 and src.reopen_tries == 3
    waits = [b - a for a, b in zip(opener.at[1:], opener.at[2:], strict=False)]
    assert waits[0] >= 0.19 and waits[1] >= 0.39
    assert "open 3" in (src.last_error or "")

    # footage: cut at the outage; session times go on from the log's 100 s, never backwards
    assert footage.closed and not footage.status()["recording"]
    index = [
        json.loads(x) for x in (tmp_path / "footage" / "segments.jsonl").read_text().splitlines()
    ]
    assert len(index) == 2 and index[0]["frames"] == 8
    assert 100.0 < index[0]["start_t"] <= index[0]["end_t"] < index[1]["start_t"]
    assert index[1]["start_t"] - index[0]["end_t"] >= 0.6  # the outage
    assert sum(s["frames"] for s in index) == src.frames
    # bars without markers would alarm; the table pattern calibrates
    assert src.status()["calibrated"] is True
    assert "markers" not in {k for k, _ in alarms}


def test_no_markers_alarm(tmp_path: Path) -> None:
    src = LiveSource(
        "bars",
        detector=NoCards(),
        markers_s=0.2,
        opener=lambda spec: SyntheticCamera("bars", fps=20.0, size=(160, 120)),
    )
    alarms: list[tuple[str, str | None]] = []
    src.attach(alarm=lambda kind, en, zh: alarms.append((kind, en)))
    stop = threading.Event()
    th = threading.Thread(target=lambda: list(src.observations(0, stop)), daemon=True)
    th.start()
    try:
        wait_for(lambda: any(k == "markers" for k, _ in alarms), 20, "the markers alarm")
    finally:
        stop.set()
        th.join(10)
    text = next(en for k, en in alarms if k == "markers")
    assert text is not None and "four corner markers" in text


def test_footage_reserve_stops_and_resumes_recording(tmp_path: Path) -> None:
    alarms: list[tuple[str, str | None]] = []
    rec = FootageRecorder(
        tmp_path / "f",
        table="t7",
        segment_s=1.0,
        reserve_mb=1e12,
        check_s=0.0,
        alarm=lambda kind, en, zh: alarms.append((kind, en)),
    )
    image = np.zeros((48, 64, 3), np.uint8)
    assert rec.write(0.0, image, 10.0) is False  # no room: nothing written, the alarm
    assert alarms[-1][0] == "footage" and "only" in (alarms[-1][1] or "")
    assert not (tmp_path / "f").exists()
    rec.reserve_mb = 0.0  # room again: a segment starts, the alarm clears
    for i in range(25):
        assert rec.write(0.1 * i, image, 10.0)
    assert alarms[-1] == ("footage", None)
    paused = True
    rec.paused = lambda: paused  # the event log's disk is full: footage stops too
    assert rec.write(2.6, image, 10.0) is False
    assert "event log's disk is full" in (alarms[-1][1] or "")
    rec.close()
    index = [json.loads(x) for x in (tmp_path / "f" / "segments.jsonl").read_text().splitlines()]
    assert [s["frames"] for s in index] == [10, 10, 5]  # a new file every second of session
    assert all(s["file"].startswith("t7-") and s["file"].endswith(".avi") for s in index)
    assert rec.status()["frames"] == 25 and rec.status()["recording"] is False


def test_a_bad_deck_profile_stops_the_source_before_it_starts(tmp_path: Path) -> None:
    """``table run --deck FILE``: a file that is not a deck profile is refused at start,
    naming it, for the live camera and for a recorded video alike."""
    from kiosk.table.sources import VideoSource

    bad = tmp_path / "deck.json"
    bad.write_text("{}")
    with pytest.raises(SourceError, match=f"--deck {bad}: not a deck profile"):
        LiveSource("synthetic", detector=NoCards(), deck=str(bad))
    video = tmp_path / "game.mp4"
    video.write_bytes(b"\0" * 16)
    with pytest.raises(SourceError, match="--deck .*missing.json: deck profile not found"):
        VideoSource(f"file:{video}", deck=str(tmp_path / "missing.json"))
