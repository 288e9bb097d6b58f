"""`guandan table calibrate` and `guandan table check`."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from table_helpers import BASE, cover, frame, project

from kiosk.cli import main
from vision.table import Calibration, TableGeometry


def _png(tmp_path: Path, image: np.ndarray, name: str = "frame.png") -> str:
    path = tmp_path / name
    assert cv2.imwrite(str(path), image)
    return str(path)


def test_calibrate_from_an_image(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    image, true_h = frame(BASE, seed=1)
    out = tmp_path / "calibration.json"
    preview = tmp_path / "zones.png"
    rc = main(
        [
            "table",
            "calibrate",
            "--image",
            _png(tmp_path, image),
            "--out",
            str(out),
            "--preview",
            str(preview),
        ]
    )
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["out"] == str(out) and summary["estimated"] == []
    assert summary["image_size"] == [1280, 720] and summary["table_mm"] == [900.0, 900.0]
    cal = Calibration.load(out)
    pts = np.array([(450.0, 450.0), (80.0, 820.0)])
    assert np.linalg.norm(cal.to_table(project(true_h, pts)) - pts, axis=1).max() < 3
    drawn = cv2.imread(str(preview))
    assert drawn.shape == image.shape and not np.array_equal(drawn, image)


def test_calibrate_with_table_size_and_marker_options(tmp_path: Path) -> None:
    g = TableGeometry(width_mm=1000, height_mm=800, marker_mm=50, marker_offset_mm=40)
    corners = np.array([(300.0, 90.0), (1000.0, 90.0), (1000.0, 650.0), (300.0, 650.0)])
    image, true_h = frame(corners, g, seed=2)
    out = tmp_path / "c.json"
    rc = main(
        [
            "table",
            "calibrate",
            "--image",
            _png(tmp_path, image),
            "--out",
            str(out),
            "--table-size",
            "1000x800",
            "--marker-size",
            "50",
            "--marker-offset",
            "40",
        ]
    )
    assert rc == 0
    cal = Calibration.load(out)
    assert cal.geometry == g
    pts = np.array([(500.0, 400.0), (950.0, 50.0)])
    assert np.linalg.norm(cal.to_table(project(true_h, pts)) - pts, axis=1).max() < 3


def test_calibrate_from_a_camera_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "c.json"
    rc = main(
        [
            "table",
            "calibrate",
            "--camera",
            "synthetic:table?frames=3&size=960x540",
            "--frames",
            "3",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    assert json.loads(capsys.readouterr().out)["frames"] == 3
    assert Calibration.load(out).image_size == (960, 540)


def test_calibrate_from_a_video_file(tmp_path: Path) -> None:
    video = tmp_path / "table.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (1280, 720))
    for i in range(4):
        writer.write(frame(BASE, seed=i)[0])
    writer.release()
    out = tmp_path / "c.json"
    assert main(["table", "calibrate", "--camera", f"file:{video}", "--out", str(out)]) == 0
    assert Calibration.load(out).estimated == ()


def test_covered_marker_then_previous(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    image, true_h = frame(BASE, seed=1)
    first = tmp_path / "first.json"
    assert main(["table", "calibrate", "--image", _png(tmp_path, image), "--out", str(first)]) == 0
    capsys.readouterr()
    marker = project(true_h, [TableGeometry().marker_positions()[3]])[0]
    covered = _png(tmp_path, cover(frame(BASE, seed=2)[0], marker), "covered.png")
    second = tmp_path / "second.json"
    rc = main(["table", "calibrate", "--image", covered, "--out", str(second)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "marker 3 (SW" in err and "--previous" in err and err.count("\n") == 1
    assert not second.exists()
    rc = main(
        ["table", "calibrate", "--image", covered, "--out", str(second), "--previous", str(first)]
    )
    captured = capsys.readouterr()
    assert rc == 0
    assert json.loads(captured.out)["estimated"] == [3]
    assert "estimated from the previous calibration" in captured.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--image", "missing.png"], "image missing.png not found"),
        (["--image", "{notimage}"], "cannot read image"),
        (["--image", "{blank}"], "found no corner markers"),
        (["--camera", "nonsense"], "unknown camera 'nonsense'"),
        (["--camera", "file:gone.mp4"], "video file gone.mp4 not found"),
        (["--image", "{blank}", "--previous", "{notimage}"], "not a calibration file"),
        (["--image", "{blank}", "--table-size", "huge"], "WIDTHxHEIGHT"),
        (["--camera", "synthetic", "--frames", "0"], "--frames must be at least 1"),
    ],
)
def test_calibrate_bad_input_exits_2_with_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notimage.png").write_bytes(b"\x00\xffnot a png")
    blank = _png(tmp_path, np.full((720, 1280, 3), 90, np.uint8), "blank.png")
    args = [a.format(notimage=tmp_path / "notimage.png", blank=blank) for a in args]
    rc = main(["table", "calibrate", *args, "--out", str(tmp_path / "c.json")])
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err
    assert err.startswith("guandan table: ") and err.count("\n") == 1


def test_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cal_path = tmp_path / "c.json"
    image, _ = frame(BASE, seed=1)
    assert (
        main(["table", "calibrate", "--image", _png(tmp_path, image), "--out", str(cal_path)]) == 0
    )
    capsys.readouterr()
    steady = _png(tmp_path, frame(BASE, seed=3)[0], "steady.png")
    assert main(["table", "check", "--calibration", str(cal_path), "--image", steady]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "ok"
    moved = _png(tmp_path, frame(BASE + np.array([30.0, 0.0]), seed=4)[0], "moved.png")
    assert main(["table", "check", "--calibration", str(cal_path), "--image", moved]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["status"] == "moved"
    assert "camera moved" in captured.err
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "guandan-table-calibration", "version": 2}')
    assert main(["table", "check", "--calibration", str(bad), "--image", steady]) == 2
    assert "key 'version'" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["table", "calibrate", "--out", "x.json"])
    assert exc.value.code == 2
    assert "--image" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["table", "calibrate", "--image", "a.png", "--camera", "synthetic", "--out", "x"])
    assert exc.value.code == 2
