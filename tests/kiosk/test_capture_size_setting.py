"""The live camera's capture size as a setting (issue 44, "Resolution"): ``--capture-size WxH``,
``$GUANDAN_CAPTURE_SIZE``, the camera spec asking for it, the pipeline detecting a larger frame
on a reduced copy, and calibrations made at another size of the same view."""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path
from typing import Any

import pytest

from hardware.camera import SyntheticCamera
from kiosk.cli import main
from kiosk.table.sources import LiveSource, SourceError, capture_size, with_capture_size
from vision.table import calibrate

from .helpers import wait_for


class NoCards:
    """A detector that never sees a card."""

    name = "none"

    def detect_frame(self, index: int, image: Any, roi: Any = None) -> list[Any]:
        return []


def test_the_capture_size_goes_into_a_live_camera_spec() -> None:
    size = (2304, 1296)
    assert with_capture_size("picamera2", size) == "picamera2?size=2304x1296"
    assert with_capture_size("picamera2:1?fps=30", size) == "picamera2:1?fps=30&size=2304x1296"
    assert with_capture_size("device:0", size) == "device:0?size=2304x1296"
    assert with_capture_size("picamera2?size=2304x1296", size) == "picamera2?size=2304x1296"
    assert with_capture_size("picamera2", None) == "picamera2"
    # a video file is read at whatever size it was recorded
    assert with_capture_size("file:game.mp4", size) == "file:game.mp4"
    assert with_capture_size("game.mp4", size) == "game.mp4"
    for spec in ("picamera2?size=1280x720", "device:0?width=1920&height=1080"):
        with pytest.raises(SourceError, match="give the size once"):
            with_capture_size(spec, size)
    assert capture_size("2304x1296") == size and capture_size(None) is None
    assert capture_size("  ") is None
    with pytest.raises(SourceError, match=r"\$GUANDAN_CAPTURE_SIZE '2304' is not WIDTHxHEIGHT"):
        capture_size("2304", "$GUANDAN_CAPTURE_SIZE")


def _run_frames(src: LiveSource, frames: int) -> None:
    stop = threading.Event()
    th = threading.Thread(target=lambda: list(src.observations(0, stop)), daemon=True)
    th.start()
    try:
        wait_for(lambda: src.frames >= frames, 60, f"{frames} frames")
    finally:
        stop.set()
        th.join(20)
    assert not th.is_alive()


def test_a_live_camera_captures_at_the_size_set_and_detects_on_a_reduced_copy() -> None:
    src = LiveSource("synthetic:table?fps=10", detector=NoCards(), capture_size=(2304, 1296))
    assert src.spec == "synthetic:table?fps=10&size=2304x1296"
    assert src.size == (2304, 1296) and "2304x1296" in src.description
    _run_frames(src, 4)
    status = src.status()
    assert status["size"] == [2304, 1296] and status["calibrated"] is True
    assert math.isclose(status["detect_scale"], 720 / 1296, abs_tol=1e-4)
    assert src.report.frame_size == (2304, 1296)


def test_a_calibration_made_at_another_size_of_the_same_view(tmp_path: Path) -> None:
    """A calibration file made at 1280x720 serves the same view at 2304x1296 (scaled); one made
    with another aspect ratio (another camera mode crops the view) stops the kiosk at start,
    saying what to do."""
    small = SyntheticCamera("table", size=(1280, 720)).read()
    assert small is not None
    cal = tmp_path / "cal.json"
    calibrate(small.image).save(cal)
    src = LiveSource(
        "synthetic:table?fps=10",
        detector=NoCards(),
        calibration=str(cal),
        capture_size=(2304, 1296),
    )
    _run_frames(src, 3)
    assert src.status()["calibrated"] and src.report.calibration == "file"
    with pytest.raises(SourceError, match=r"made at 1280x720, but the camera gives 1280x960"):
        LiveSource(
            "synthetic:table", detector=NoCards(), calibration=str(cal), capture_size=(1280, 960)
        )


def test_table_calibrate_and_check_at_a_capture_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "cal.json"
    args = ["table", "calibrate", "--camera", "synthetic:table", "--frames", "2", "--out", str(out)]
    assert main([*args, "--capture-size", "2304x1296"]) == 0
    assert json.loads(capsys.readouterr().out)["image_size"] == [2304, 1296]
    # the Pi service's check runs with the environment's size; a calibration made at another
    # size of the same view fits
    monkeypatch.setenv("GUANDAN_CAPTURE_SIZE", "1280x720")
    check = ["table", "check", "--calibration", str(out), "--camera", "synthetic:table"]
    assert main(check) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "ok"
    monkeypatch.setenv("GUANDAN_CAPTURE_SIZE", "1280 by 720")
    assert main(check) == 2
    err = capsys.readouterr().err
    assert "$GUANDAN_CAPTURE_SIZE '1280 by 720' is not WIDTHxHEIGHT" in err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(
    ("env", "args", "message"),
    [
        (None, ["--camera", "synthetic:table", "--capture-size", "2304"], "--capture-size '2304'"),
        (None, ["--simulate", "1", "--capture-size", "2304x0"], "--capture-size '2304x0': width"),
        ("2304*1296", ["--camera", "synthetic:table"], "$GUANDAN_CAPTURE_SIZE '2304*1296'"),
        (
            None,
            ["--camera", "synthetic:table?size=1280x720", "--capture-size", "2304x1296"],
            "give the size once",
        ),
    ],
)
def test_table_run_with_a_wrong_capture_size_is_one_line_exit_2(
    env: str | None,
    args: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if env is not None:
        monkeypatch.setenv("GUANDAN_CAPTURE_SIZE", env)
    else:
        monkeypatch.delenv("GUANDAN_CAPTURE_SIZE", raising=False)
    db = tmp_path / "k.db"
    base = ["table", "run", "--db", str(db), "--pin", "1234", "--port", "1"]
    assert main([*base, *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not db.exists()
