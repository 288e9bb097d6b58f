"""`guandan hardware camera` and `guandan hardware buttons`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import cv2
import numpy as np
import pytest

from kiosk.cli import main


def test_camera_synthetic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(
        [
            "hardware",
            "camera",
            "--camera",
            "synthetic?size=320x240&fps=10",
            "--frames",
            "7",
            "--save",
            str(tmp_path),
        ]
    )
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["camera"] == "synthetic:bars" and summary["size"] == [320, 240]
    assert summary["frames"] == 7 and summary["last_t"] == pytest.approx(0.6)
    assert summary["gaps"] == []
    assert cv2.imread(str(tmp_path / "last.png")).shape == (240, 320, 3)


def test_camera_file_with_a_damaged_stretch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "v.avi"
    w = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    rng = np.random.default_rng(0)
    for _ in range(30):
        w.write(rng.integers(0, 255, (48, 64, 3), dtype=np.uint8))
    w.release()
    data = bytearray(path.read_bytes())
    starts = [m.start() for m in re.finditer(b"\xff\xd8\xff", bytes(data))]
    for k in (10, 11):
        data[starts[k] : starts[k + 1] - 16] = bytes(starts[k + 1] - 16 - starts[k])
    path.write_bytes(bytes(data))
    assert main(["hardware", "camera", "--camera", f"file:{path}", "--frames", "0"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["frames"] == 28
    assert [(g["first_frame"], g["last_frame"]) for g in summary["gaps"]] == [(10, 11)]
    assert "frames 10-11 (1.00s-1.20s) could not be read" in captured.err


def test_camera_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hardware", "camera", "--camera", "synthetic?frames=0"]) == 1
    assert "delivered no frames" in capsys.readouterr().err
    assert main(["hardware", "camera", "--camera", "file:" + str(tmp_path / "x.mp4")]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["hardware", "camera", "--save", str(tmp_path / "nodir")]) == 2
    assert "not an existing folder" in capsys.readouterr().err


def test_buttons_mock(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hardware", "buttons", "--buttons", "mock", "--seconds", "0.05"]) == 0
    assert "listening to mock" in capsys.readouterr().err
    assert main(["hardware", "buttons", "--buttons", "gpio:1"]) == 2
    assert "unknown buttons" in capsys.readouterr().err
