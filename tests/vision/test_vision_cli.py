"""``guandan vision detect``: JSON lines as CONTRACT.md says, and one error line per bad input."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

from engine import parse_card
from kiosk.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = sorted((ROOT / "datasets" / "samples").glob("*.jpg"))[0]


def test_one_json_line_per_image(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "copy.png"
    cv2.imwrite(str(png), cv2.imread(str(SAMPLE)))
    rc = main(["vision", "detect", str(SAMPLE), str(png), "--conf", "0.1"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    lines = [json.loads(x) for x in out.out.splitlines()]
    assert [x["image"] for x in lines] == [str(SAMPLE), str(png)]
    h, w = cv2.imread(str(SAMPLE)).shape[:2]
    for line in lines:
        assert set(line) == {"image", "cards"}
        assert line["cards"], "the sample scene has visible cards"
        for c in line["cards"]:
            assert set(c) == {"card", "box", "score"}
            assert str(parse_card(c["card"])) == c["card"]
            x1, y1, x2, y2 = c["box"]
            assert 0 <= x1 < x2 <= w and 0 <= y1 < y2 <= h
            assert 0 < c["score"] <= 1
    assert lines[0]["cards"] == lines[1]["cards"]  # lossless PNG copy of a decoded JPEG


def test_bad_images_reported_and_others_processed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "readme.txt"
    text.write_text("hello")
    rc = main(["vision", "detect", str(tmp_path / "gone.jpg"), str(SAMPLE), str(text)])
    out = capsys.readouterr()
    assert rc == 2
    assert [json.loads(x)["image"] for x in out.out.splitlines()] == [str(SAMPLE)]
    err = out.err.strip().splitlines()
    assert len(err) == 2
    assert "gone.jpg: no such image file" in err[0]
    assert "readme.txt: not a readable image" in err[1]


def test_model_not_ours(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_text("nope")
    rc = main(["vision", "detect", str(SAMPLE), "--model", str(fake)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "model.onnx" in err[0]
    cls = ROOT / "models" / "card-classes.onnx"
    rc = main(["vision", "detect", str(SAMPLE), "--model", str(cls)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and "not a guandan detector model" in err[0]


def test_bad_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vision", "detect", str(SAMPLE), "--conf", "1.5"]) == 2
    assert "--conf" in capsys.readouterr().err
    assert main(["vision", "detect", str(SAMPLE), "--pyramid", "1,half"]) == 2
    assert "--pyramid" in capsys.readouterr().err
    assert main(["vision", "detect", str(SAMPLE), "--zoom-limit", "5"]) == 2
    assert "--zoom-limit" in capsys.readouterr().err
    assert main(["vision", "detect", str(SAMPLE), "--min-score", "2"]) == 2
    assert "--min-score" in capsys.readouterr().err
    assert main(["vision", "detect", str(SAMPLE), "--crop-scales", "1,big"]) == 2
    assert "--crop-scales" in capsys.readouterr().err
    assert main(["vision", "detect", str(SAMPLE), "--crop-scales", "9"]) == 2
    assert "crop_scales" in capsys.readouterr().err
    assert main(["vision", "detect", str(SAMPLE), "--contain", "2"]) == 2
    assert "--contain" in capsys.readouterr().err


def test_detect_defaults_are_the_photo_settings_and_invert_can_be_turned_off() -> None:
    """`vision detect` reads photos with vision.detector's PHOTO_* settings (what `vision
    evaluate` measures); --no-invert turns the negative-image pass off."""
    from kiosk.cli import build_parser
    from vision.detector import (
        PHOTO_CONF,
        PHOTO_CONTAIN,
        PHOTO_CROP_SCALES,
        PHOTO_INVERT,
        PHOTO_MIN_SCORE,
        PHOTO_PYRAMID,
    )

    args = build_parser().parse_args(["vision", "detect", str(SAMPLE)])
    assert tuple(float(f) for f in args.pyramid.split(",")) == PHOTO_PYRAMID
    assert args.invert is PHOTO_INVERT
    assert tuple(float(f) for f in args.crop_scales.split(",")) == PHOTO_CROP_SCALES
    assert args.contain == PHOTO_CONTAIN
    # the floors are the score model's when there is one (vision/scoremodel.py), else PHOTO_*
    assert args.min_score is None and args.conf is None and args.score_model is None
    assert (PHOTO_MIN_SCORE, PHOTO_CONF) == (0.3, 0.3)
    args = build_parser().parse_args(["vision", "detect", str(SAMPLE), "--no-invert"])
    assert args.invert is False
