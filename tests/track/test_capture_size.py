"""Games filmed at the Pi Camera Module 3's full view, 2304x1296 (issue 44, "Resolution").

The renderer draws the table at that resolution (not a 1280x720 frame enlarged); the pipeline
finds the corners on a copy reduced to 1280x720 and names the cards from crops of the frame
itself (vision/pipeline.py ``DETECT_SHORT_SIDE``, ``TablePipeline._detect_reduced``).
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from engine.profiles import load_profile
from kiosk.cli import main
from kiosk.replay import observations_from_video
from tests.track.test_pipeline_video import SCRIPT, _key, _truth
from vision.detector import DEFAULT_MODEL
from vision.framesize import FrameSizeError, parse_frame_size
from vision.pipeline import Det, OracleDetector, ReplayReport, TablePipeline

BIG = (2304, 1296)
FPS = 5.0


#: the face widths the renderer drew the big render's cards from
FACE_WIDTHS: list[int] = []


@pytest.fixture(scope="module")
def big_video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vision.synth import video

    out = tmp_path_factory.mktemp("big") / "big.mp4"
    load = video.load_faces

    def load_faces(*a: Any, **kw: Any) -> Any:
        faces = load(*a, **kw)
        FACE_WIDTHS.append(next(iter(faces.images.values())).shape[1])
        return faces

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(video, "load_faces", load_faces)
        video.render_game(
            load_profile("standard"),
            seed=5,
            deals=1,
            out=out,
            fps=FPS,
            size=BIG,
            deck="cv-plain",
            script=SCRIPT[:7],
        )
    return out


def _frames(video: Path) -> Any:
    cap = cv2.VideoCapture(str(video))
    try:
        while True:
            ok, frame = cap.read()
            if not ok:
                return
            yield frame
    finally:
        cap.release()


def test_a_big_render_draws_the_table_at_its_own_resolution(big_video: Path) -> None:
    """The frame is 2304x1296, and a card's corner index there is 1.8 times as large in pixels
    as at 1280x720, drawn from a face 1.8 times as wide (173 px, 96 at 1280x720): the table at
    that resolution, not a 1280x720 frame enlarged."""
    cap = cv2.VideoCapture(str(big_video))
    assert (int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))) == BIG
    cap.release()
    cal = json.loads(Path(f"{big_video}.calibration.json").read_text())
    assert cal["image_size"] == list(BIG)
    with gzip.open(f"{big_video}.oracle.jsonl.gz", "rt") as fh:
        rows = [json.loads(line) for line in fh]
    sides = [max(c[3] - c[1], c[4] - c[2]) for r in rows for c in r["c"]]
    assert sides and all(
        0 <= c[1] < c[3] <= BIG[0] and 0 <= c[2] < c[4] <= BIG[1] for r in rows for c in r["c"]
    )
    # cv-plain's index box is 0.28 of a 1.4-tall face: ~0.39 of a card's width (47 px at 720)
    assert 1.8 * 0.39 * 40 < float(np.median(sides)) < 1.8 * 0.39 * 60
    assert FACE_WIDTHS == [round(96 * 1296 / 720)]


def test_the_oracle_reads_a_big_render_exactly(big_video: Path) -> None:
    report = ReplayReport()
    got = list(observations_from_video(big_video, detector="oracle", report=report))
    assert [_key(o) for o in got] == [_key(o) for o in _truth(big_video)]
    assert report.frame_size == BIG and math.isclose(report.detect_scale, 720 / 1296)
    assert report.warnings == [] and report.gaps == []


class ReducedOracle:
    """A detector in two stages like vision.Detector (``corners`` then ``label``) that answers
    from the renderer's labels: ``corners`` must be given the reduced copy, ``label`` the crop
    of the frame itself; boxes must come back to the frame's pixels to within a pixel."""

    name = "reduced-oracle"

    def __init__(self, video: Path) -> None:
        self.oracle = OracleDetector(f"{video}.oracle.jsonl.gz")
        self.pipe: TablePipeline
        self.index = 0
        self.calls: list[tuple[tuple[int, ...], tuple[int, ...]]] = []  # (copy, crop) shapes
        self._copy: tuple[int, ...] = ()

    def _roi(self) -> tuple[int, int, int, int]:
        assert self.pipe.last_roi is not None
        return self.pipe.last_roi

    def detect(self, image: np.ndarray) -> list[Any]:
        raise AssertionError("a frame over 1280x720 goes through corners() and label()")

    def corners(self, image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x0, y0, x1, y1 = self._roi()
        self._copy = image.shape
        r = self.pipe.detect_scale
        dets = self.oracle.detect_frame(self.index, None, (x0, y0, x1, y1))
        boxes = np.array([d.box for d in dets], np.float64).reshape(-1, 4) - [x0, y0, x0, y0]
        return boxes * r, np.ones(len(dets))

    def label(self, image: np.ndarray, boxes: np.ndarray, scores: np.ndarray) -> list[Any]:
        x0, y0, x1, y1 = self._roi()
        self.calls.append((self._copy, image.shape))
        assert image.shape[:2] == (y1 - y0, x1 - x0)  # the frame's own pixels
        dets = self.oracle.detect_frame(self.index, None, (x0, y0, x1, y1))
        out = []
        for b in boxes:
            d = min(dets, key=lambda d: abs(np.subtract(d.box, [x0, y0, x0, y0]) - b).sum())
            assert np.abs(np.subtract(d.box, [x0, y0, x0, y0]) - b).max() < 1.0
            out.append(Det(d.card, tuple(b)))
        return out


def test_detection_on_a_reduced_copy_naming_on_the_full_frame(big_video: Path) -> None:
    det = ReducedOracle(big_video)
    pipe = TablePipeline(det)
    det.pipe = pipe
    got = []
    for i, frame in enumerate(_frames(big_video)):
        det.index = i
        got += pipe.process(i, i / FPS, frame)
    got += pipe.finish()
    assert [_key(o) for o in got] == [_key(o) for o in _truth(big_video)]
    assert det.calls
    r = 720 / 1296
    for copy, crop in det.calls:
        assert abs(copy[0] - crop[0] * r) <= 1 and abs(copy[1] - crop[1] * r) <= 1
    # at 1280x720 (or with detect_side=None) the detector's plain detect() is used, as before
    assert TablePipeline(det, detect_side=None).detect_scale == 1.0


def test_a_frame_size_text_is_checked() -> None:
    assert parse_frame_size("2304x1296") == (2304, 1296)
    assert parse_frame_size(" 2028X1520 ") == (2028, 1520)
    assert parse_frame_size("1280×720") == (1280, 720)
    for bad, says in (
        ("2304", "not WIDTHxHEIGHT"),
        ("2304x", "not WIDTHxHEIGHT"),
        ("big", "not WIDTHxHEIGHT"),
        ("1280x720x3", "not WIDTHxHEIGHT"),
        ("2304.5x1296", "not WIDTHxHEIGHT"),
        ("100x100", "width 160-4096"),
        ("8192x4320", "width 160-4096"),
    ):
        with pytest.raises(FrameSizeError, match=says):
            parse_frame_size(bad, "--size")


def test_synth_video_with_a_wrong_size_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "g.mp4"
    for bad in ("2304by1296", "2304", "50x50"):
        args = ["synth", "video", "--seed", "1", "--out", str(out), "--size", bad]
        assert main(args) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and "--size" in err and bad in err
        assert "e.g. 1280x720 or 2304x1296" in err
    assert not out.exists()


def test_the_bench_refuses_a_wrong_size() -> None:
    import subprocess
    import sys

    bench = Path(__file__).resolve().parents[2] / "bench" / "table_accuracy.py"
    run = subprocess.run(
        [sys.executable, str(bench), "--games", "1", "--size", "2304-1296"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode != 0 and run.stdout == ""
    assert "--size '2304-1296' is not WIDTHxHEIGHT" in run.stderr


@pytest.mark.skipif(
    not DEFAULT_MODEL.exists(),
    reason=f"no shipped detector model ({DEFAULT_MODEL} is trained by issue 4's recipe)",
)
def test_the_real_detector_reads_a_big_render_from_full_resolution_crops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped model on a short game in a held-out deck (tigullio) filmed at 2304x1296: every
    observation right, the corners found on the reduced copy and every classifier crop cut from
    the frame itself: a corner's crop there spans 1 / 0.5625^2 ~ 3.2 times the pixels the
    reduced copy would give it."""
    from vision import detector as detector_module
    from vision.pipeline import resolve_detector
    from vision.synth.video import render_game

    sheet = Path("/usr/share/aisleriot/cards/tigullio.svgz")
    if not sheet.exists():
        pytest.skip(f"{sheet} missing: install Debian's gnome-cards-data (make system-deps)")
    from vision.synth.decks import render_aisleriot

    decks = tmp_path / "decks"
    render_aisleriot(sheet, decks)
    out = tmp_path / "real-big.mp4"
    render_game(
        load_profile("standard"),
        seed=2,
        deals=1,
        out=out,
        size=BIG,
        fps=10.0,
        deck="tigullio",
        script=SCRIPT[:7],
        decks_dir=decks,
    )
    model = resolve_detector("model")
    seen: dict[str, list[Any]] = {"corners": [], "label": [], "crops": []}

    class Spy:
        """The model, watched: what each stage was given."""

        def __getattr__(self, name: str) -> Any:
            return getattr(model, name)

        def corners(self, image: np.ndarray) -> Any:
            boxes, scores = model.corners(image)
            seen["corners"].append((image.shape, boxes.copy()))
            return boxes, scores

        def label(self, image: np.ndarray, boxes: np.ndarray, scores: np.ndarray) -> Any:
            seen["label"].append((image.shape, np.asarray(boxes).copy()))
            return model.label(image, boxes, scores)

    real_crop = detector_module.crop_square

    def crop_square(image: np.ndarray, box: Any, *a: Any, **kw: Any) -> np.ndarray:
        seen["crops"].append((image.shape, tuple(float(v) for v in box)))
        return real_crop(image, box, *a, **kw)

    monkeypatch.setattr(detector_module, "crop_square", crop_square)
    report = ReplayReport()
    got = list(observations_from_video(out, detector=Spy(), report=report))
    assert [_key(o) for o in got] == [_key(o) for o in _truth(out)]
    assert report.frame_size == BIG
    r = report.detect_scale
    assert seen["label"] and len(seen["corners"]) == len(seen["label"])
    full_shapes = {shape for shape, _ in seen["label"]}
    for (small, boxes), (full, named) in zip(seen["corners"], seen["label"], strict=True):
        assert abs(small[0] - full[0] * r) <= 1 and abs(small[1] - full[1] * r) <= 1
        rx, ry = small[1] / full[1], small[0] / full[0]  # r, to the copy's whole pixels
        np.testing.assert_allclose(named * [rx, ry, rx, ry], boxes, atol=0.01)  # mapped back
    # every classifier crop was cut from a full-resolution crop of the frame, around the
    # mapped-back box: (side / r)^2 source pixels where the reduced copy has side^2
    assert seen["crops"] and {shape for shape, _ in seen["crops"]} <= full_shapes
    reduced = [max(b[2] - b[0], b[3] - b[1]) for _, bs in seen["corners"] for b in bs]
    full = [max(b[2] - b[0], b[3] - b[1]) for _, b in seen["crops"]]
    gain = (float(np.median(full)) / float(np.median(reduced))) ** 2
    assert gain > 3.0, gain


def _bench() -> Any:
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "bench" / "table_accuracy.py"
    spec = importlib.util.spec_from_file_location("table_accuracy_bench_size", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bench_keeps_a_render_of_another_size_beside_the_default_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import vision.synth.video as video

    bench = _bench()
    made: list[Any] = []

    def render_game(prof: Any, out: Path, **kw: Any) -> Any:
        made.append(kw.get("size"))
        out.write_bytes(b"x")
        return kw.get("size")

    monkeypatch.setattr(video, "render_game", render_game)
    prof = type("P", (), {"name": "standard"})()
    small, _ = bench.kept_render(prof, 46001, 1, "paris", 0.0, tmp_path)
    big, info = bench.kept_render(prof, 46001, 1, "paris", 0.0, tmp_path, BIG)
    assert small.name == "g46001-paris-1d-m0-standard.mp4"  # as before sizes existed
    assert big.name == "g46001-paris-1d-m0-standard-2304x1296.mp4" and info == BIG
    again, _ = bench.kept_render(prof, 46001, 1, "paris", 0.0, tmp_path, BIG)
    assert again == big and made == [None, BIG]


def test_the_bench_cache_keeps_both_stages_of_a_reduced_detection(tmp_path: Path) -> None:
    bench = _bench()
    calls: list[str] = []

    class Stages:
        def corners(self, image: np.ndarray) -> Any:
            calls.append("corners")
            return np.array([[1.0, 2.0, 3.0, 4.0]]), np.array([0.9])

        def label(self, image: np.ndarray, boxes: np.ndarray, scores: np.ndarray) -> Any:
            calls.append("label")
            return [Det("S2", tuple(boxes[0]))]

    cache = bench.CachedDetector(Stages(), tmp_path / "dets.pkl")
    img = np.zeros((8, 8, 3), np.uint8)
    for _ in range(2):
        boxes, scores = cache.corners(img)
        assert cache.label(img, boxes * 2, scores)[0].box == (2.0, 4.0, 6.0, 8.0)
    other = cache.label(img, boxes * 3, scores)  # other boxes: another answer
    assert other[0].box == (3.0, 6.0, 9.0, 12.0)
    assert calls == ["corners", "label", "label"] and (cache.hits, cache.misses) == (2, 3)
    cache.save()
    again = bench.CachedDetector(Stages(), tmp_path / "dets.pkl")
    again.corners(img)
    assert calls == ["corners", "label", "label"] and again.hits == 1


def test_a_reduced_detector_reads_big_stills_as_the_pipeline_reads_frames() -> None:
    """``ReducedDetector`` (deck enrolment's stills at the capture size): ``corners`` on a copy
    reduced to 1280x720 with the boxes mapped back, the cards named from the still itself; at
    1280x720 the detector's own; everything else forwarded."""
    from vision.pipeline import ReducedDetector

    seen: list[tuple[str, tuple[int, ...]]] = []

    class Stages:
        conf = 0.3

        def corners(self, image: np.ndarray) -> Any:
            seen.append(("corners", image.shape))
            h, w = image.shape[:2]
            return np.array([[0.1 * w, 0.1 * h, 0.2 * w, 0.2 * h]]), np.array([0.8])

        def label(self, image: np.ndarray, boxes: np.ndarray, scores: np.ndarray) -> Any:
            seen.append(("label", image.shape))
            return [Det("S2", tuple(float(v) for v in boxes[0]))]

    det = ReducedDetector(Stages())
    assert det.conf == 0.3
    big = np.zeros((1296, 2304, 3), np.uint8)
    (found,) = det.detect(big)
    assert seen == [("corners", (720, 1280, 3)), ("label", (1296, 2304, 3))]
    np.testing.assert_allclose(found.box, (230.4, 129.6, 460.8, 259.2))
    seen.clear()
    boxes, _ = det.corners(np.zeros((720, 1280, 3), np.uint8))
    assert seen == [("corners", (720, 1280, 3))]
    np.testing.assert_allclose(boxes[0], (128.0, 72.0, 256.0, 144.0))
