"""End to end on short rendered videos: renderer -> file -> pipeline -> observations/events.

The oracle detector (the renderer's own corner labels) stands in for the model, so these tests
measure the calibration, motion, tracking and interpretation, not the ONNX model's accuracy.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from engine.cards import parse_cards
from engine.observations import Observation, from_camera, parse_observation
from engine.profiles import load_profile
from engine.referee import Referee
from kiosk.cli import main
from kiosk.replay import observations_from_video
from tests.track.helpers import calibration as other_calibration
from vision.detector import DEFAULT_MODEL
from vision.pipeline import PipelineError, ReplayReport

SIZE = (960, 540)
FPS = 5.0


def ob(t: float, type_: str, seat: str | None = None, cards: str = "", **kw) -> Observation:
    return Observation(t, type_, seat=seat, cards=tuple(parse_cards(cards)) if cards else (), **kw)


#: every visual mechanic once: lamps, plays (with a two-deck pair), a clear, an exposed card,
#: a tribute and its return through the centre, shown jokers, a second deal
SCRIPT = [
    ob(0, "deal_start", first_leader="S"),
    ob(3, "played", "S", "S3 S4 S5 S6 S7"),
    ob(6, "played", "E", "H9 H9"),
    ob(8, "pass", "N"),
    ob(10, "played", "W", "CA DA"),
    ob(12, "pass", "S"),
    ob(14, "trick_cleared"),
    ob(16, "exposed", "N", "DK"),
    ob(19, "played", "E", "SB"),
    ob(21, "trick_cleared"),
    ob(23, "deal_start"),
    ob(25, "tribute", "N", "SA", to="E"),
    ob(28, "tribute_return", "E", "C3", to="N"),
    ob(31, "shown", "W", "HR HR"),
]


def _key(o: Observation) -> tuple:
    return (o.type, o.seat, tuple(sorted(str(c) for c in o.cards)), o.to, o.first_leader)


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vision.synth.video import render_game

    out = tmp_path_factory.mktemp("render") / "script.mp4"
    render_game(
        load_profile("standard"),
        seed=5,
        deals=1,
        out=out,
        fps=FPS,
        size=SIZE,
        deck="cv-plain",
        script=SCRIPT,
    )
    return out


def _truth(video: Path) -> list[Observation]:
    text = Path(f"{video}.truth.jsonl").read_text().splitlines()
    return [parse_observation(line) for line in text if line.strip()]


def test_render_writes_its_files(video: Path) -> None:
    assert video.stat().st_size > 10_000
    truth = _truth(video)
    assert [o.type for o in truth] == [o.type for o in SCRIPT]
    cap = cv2.VideoCapture(str(video))
    assert (int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))) == SIZE
    cap.release()
    assert json.loads(Path(f"{video}.calibration.json").read_text())["format"]


def test_oracle_pipeline_reads_every_mechanic(video: Path) -> None:
    report = ReplayReport()
    got = list(observations_from_video(video, detector="oracle", report=report))
    assert [_key(o) for o in got] == [_key(o) for o in _truth(video)]
    assert report.gaps == [] and report.warnings == []
    # each observation comes within half a second of video time after the truth moment
    for g, w in zip(got, _truth(video), strict=True):
        if g.type in ("played", "pass", "exposed", "trick_cleared"):
            assert 0 <= g.t - w.t <= 0.5, (g, w)


def test_only_changed_zones_are_detected(video: Path) -> None:
    report = ReplayReport()
    list(observations_from_video(video, detector="oracle", report=report))
    assert report.detector_calls < report.frames / 2


def test_replay_cli_writes_events_equal_to_the_truth(
    video: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sim_obs = [o for o in _truth(video)]
    events = tmp_path / "events.jsonl"
    assert main(["table", "replay", str(video), "--out", str(events), "--detector", "oracle"]) == 0
    assert "deal 1" in capsys.readouterr().out
    got = [json.loads(line) for line in events.read_text().splitlines()]
    ref = Referee(load_profile("standard"))
    # the truth as the camera's readings (source: camera): a foul judged on them waits for the
    # floor referee (review), as the replay's do
    ref.feed_all([from_camera(o) for o in sim_obs])
    want = [e.to_json() for e in ref.events]

    def strip(e: dict) -> dict:
        out = {k: v for k, v in e.items() if k not in ("t", "id", "seq")}
        if "cards" in out:
            out["cards"] = sorted(out["cards"])
        return out

    assert [strip(e) for e in got if e["type"] != "notice"] == [
        strip(e) for e in want if e["type"] != "notice"
    ]


def test_replay_with_a_bad_deck_profile_is_a_clear_error(
    video: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--deck (vision/enrol.py): a missing or foreign file, or the oracle detector (which reads
    no cards), is refused with one line naming the problem; no events file is written."""
    events = tmp_path / "events.jsonl"
    junk = tmp_path / "deck.json"
    junk.write_text('{"kind": "calibration"}')
    for deck, says in ((tmp_path / "none.json", "not found"), (junk, "not a deck profile")):
        args = ["table", "replay", str(video), "--out", str(events), "--deck", str(deck)]
        assert main(args) == 2
        err = capsys.readouterr().err
        assert str(deck) in err and says in err and len(err.splitlines()) == 1
    from vision.enrol import DeckProfile

    prof = DeckProfile("d", "x", ["S2"], np.ones((1, 4)) / 2, [1]).save(tmp_path / "ok.json")
    args = ["table", "replay", str(video), "--out", str(events), "--detector", "oracle"]
    assert main([*args, "--deck", str(prof)]) == 2
    assert "needs the model detector" in capsys.readouterr().err
    assert not events.exists()


def _rewrite(src: Path, dst: Path, edit, fourcc: str = "MJPG") -> None:
    cap = cv2.VideoCapture(str(src))
    w = cv2.VideoWriter(str(dst), cv2.VideoWriter_fourcc(*fourcc), FPS, SIZE)
    i = 0
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        w.write(edit(i, frame))
        i += 1
    w.release()
    cap.release()
    shutil.copy(f"{src}.oracle.jsonl.gz", f"{dst}.oracle.jsonl.gz")


def test_truncated_video_reports_the_stretch_and_keeps_what_it_read(
    video: Path, tmp_path: Path
) -> None:
    avi = tmp_path / "cut.avi"
    _rewrite(video, avi, lambda i, f: f)
    data = avi.read_bytes()
    avi.write_bytes(data[: int(len(data) * 0.6)])
    report = ReplayReport()
    got = list(observations_from_video(avi, detector="oracle", report=report))
    assert report.gaps and "ends early" in report.gaps[-1]
    keys = [_key(o) for o in got]
    assert len(keys) >= 3 and keys == [_key(o) for o in _truth(video)][: len(keys)]


def test_unreadable_file_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "notes.mp4"
    bad.write_text("this is not a video")
    with pytest.raises(ValueError, match="notes.mp4"):
        list(observations_from_video(bad, detector="oracle"))
    assert main(["table", "replay", str(bad), "--out", "-"]) == 2
    err = capsys.readouterr().err
    assert "notes.mp4" in err and len(err.splitlines()) == 1


def test_frames_without_markers_are_skipped_and_reported(video: Path, tmp_path: Path) -> None:
    dark = tmp_path / "dark.avi"

    def cover(i: int, f: np.ndarray) -> np.ndarray:
        if i < 6:  # the first 1.2 s: someone leans over the table
            f = f.copy()
            f[:, :] = (80, 80, 80)
        return f

    _rewrite(video, dark, cover)
    report = ReplayReport()
    got = list(observations_from_video(dark, detector="oracle", report=report))
    assert any("no calibration yet" in w for w in report.warnings)
    assert [_key(o) for o in got][1:] == [_key(o) for o in _truth(video)][1:]


def test_a_covered_marker_with_a_calibration_file_still_works(video: Path, tmp_path: Path) -> None:
    cal = Path(f"{video}.calibration.json")
    covered = tmp_path / "covered.avi"
    from vision.table import Calibration

    px = Calibration.load(cal).marker_px[2]

    def hide(i: int, f: np.ndarray) -> np.ndarray:
        f = f.copy()
        cv2.circle(f, (round(px[0]), round(px[1])), 22, (120, 160, 215), -1)
        return f

    _rewrite(video, covered, hide)
    got = list(observations_from_video(covered, calibration=cal, detector="oracle"))
    assert [_key(o) for o in got] == [_key(o) for o in _truth(video)]
    # without a calibration file the covered corner cannot be calibrated: a clear error
    with pytest.raises(PipelineError, match="corner markers"):
        list(observations_from_video(covered, detector="oracle"))


def test_wrong_calibration_file_is_reported_and_replaced(video: Path, tmp_path: Path) -> None:
    wrong = tmp_path / "other.json"
    other_calibration().save(wrong)
    report = ReplayReport()
    got = list(observations_from_video(video, calibration=wrong, detector="oracle", report=report))
    assert any("does not fit" in w for w in report.warnings)
    assert [_key(o) for o in got] == [_key(o) for o in _truth(video)]


def test_missing_detector_is_a_clear_error(tmp_path: Path, video: Path) -> None:
    lone = tmp_path / "lone.mp4"
    shutil.copy(video, lone)
    if DEFAULT_MODEL.exists():
        pytest.skip("a model is shipped: auto uses it")
    with pytest.raises(PipelineError, match="no card detector"):
        list(observations_from_video(lone))


@pytest.mark.skipif(
    not DEFAULT_MODEL.exists(),
    reason=f"no shipped detector model ({DEFAULT_MODEL} is trained by issue 4's recipe)",
)
def test_real_detector_end_to_end(tmp_path: Path) -> None:
    """The shipped model, not the oracle, on a short game in a held-out deck (tigullio): every
    observation right. The script runs to the trick's clearing: the renderer clears the table
    at the end of a video, and a script cut before that would show a clearing its truth log
    lacks (the pipeline, oracle or model, rightly reports it)."""
    from vision.synth.video import render_game

    sheet = Path("/usr/share/aisleriot/cards/tigullio.svgz")
    if not sheet.exists():
        pytest.skip(f"{sheet} missing: install Debian's gnome-cards-data (make system-deps)")
    from vision.synth.decks import render_aisleriot

    decks = tmp_path / "decks"  # a fresh clone has no rendered decks (datasets/generated)
    render_aisleriot(sheet, decks)
    out = tmp_path / "real.mp4"
    render_game(
        load_profile("standard"),
        seed=2,
        deals=1,
        out=out,
        size=(1280, 720),
        fps=10.0,
        deck="tigullio",
        script=SCRIPT[:7],
        decks_dir=decks,
    )
    got = list(observations_from_video(out, detector="model"))
    assert [_key(o) for o in got] == [_key(o) for o in _truth(out)]


def test_crop_detection_path_of_a_model_detector(video: Path) -> None:
    """A detector without frame indices (like vision.Detector) sees crops around the changed
    zones; its boxes come back in crop pixels and must be shifted to the frame."""
    from vision.pipeline import Det, OracleDetector, TablePipeline

    oracle = OracleDetector(f"{video}.oracle.jsonl.gz")
    crops: list[tuple[int, int]] = []

    class CropDetector:
        name = "crop-fake"
        pipe: TablePipeline

        def detect(self, image: np.ndarray) -> list[Det]:
            # where the crop sits in the frame: the oracle needs frame coordinates
            frame = self.frame
            assert self.pipe.last_roi is not None
            x0, y0 = self.pipe.last_roi[:2]
            h, w = image.shape[:2]
            assert (image == frame[y0 : y0 + h, x0 : x0 + w]).all()
            crops.append((w, h))
            index = int(round(self.pipe.t * FPS))
            boxes = oracle.detect_frame(index, frame, (x0, y0, x0 + w, y0 + h))
            return [Det(d.card, (d.box[0] - x0, d.box[1] - y0, d.box[2] - x0, d.box[3] - y0))
                    for d in boxes]  # fmt: skip

    class Suits:  # a detector balancing suits (vision.suits) reports its weights
        def weights(self) -> dict[str, float]:
            return {"S": 0.5, "H": 1.0, "C": 2.0, "D": 1.0}

    det = CropDetector()
    det.suits = Suits()  # type: ignore[attr-defined]
    pipe = TablePipeline(det)
    det.pipe = pipe
    got: list[Observation] = []
    cap = cv2.VideoCapture(str(video))
    i = 0
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        det.frame = frame
        got += pipe.process(i, i / FPS, frame)
        i += 1
    got += pipe.finish()
    assert [_key(o) for o in got] == [_key(o) for o in _truth(video)]
    assert pipe.report.to_json()["suit_weights"] == {"S": 0.5, "H": 1.0, "C": 2.0, "D": 1.0}
    assert any(w < SIZE[0] for w, h in crops)  # zones were cropped, not whole frames


def test_zone_crops_keep_a_margin_round_the_zone(video: Path) -> None:
    """Each zone is detected in its own crop: the zone's bounding box plus ``roi_margin`` pixels
    of a 1280-wide frame (scaled with the frame), clipped to the frame, so a card lying at the
    zone's edge is seen with its corners whole."""
    from vision.pipeline import OracleDetector, TablePipeline

    cap = cv2.VideoCapture(str(video))
    ok, frame = cap.read()
    assert ok
    for margin in (40.0, 80.0):
        pipe = TablePipeline(OracleDetector(f"{video}.oracle.jsonl.gz"), roi_margin=margin)
        pipe.process(0, 0.0, frame)
        assert pipe.calibration is not None
        h, w = frame.shape[:2]
        pad = round(margin * w / 1280)
        for zone, (x0, y0, x1, y1) in pipe._rois.items():
            poly = pipe.calibration.zone_polygon_px(zone)
            assert x0 == max(0, int(np.floor(poly[:, 0].min())) - pad)
            assert y1 == min(h, int(np.ceil(poly[:, 1].max())) + pad)
            assert x1 - x0 <= w and y1 - y0 <= h


def test_cards_never_read_do_not_become_the_bare_table(tmp_path: Path) -> None:
    """Cards the detector cannot read (guyenne's court cards) lie in a zone the tracker holds
    empty. Once they are taken away, the table where they lay must still be the bare table, not
    a skin-coloured "hand" resting there for good: on a terracotta table (seed 1's felt) E's
    zone was never looked at again and E's next card went unseen (seed 9403)."""
    from vision.pipeline import OracleDetector
    from vision.synth.video import render_game

    script = [
        ob(0, "deal_start", first_leader="E"),
        ob(3, "played", "E", "DJ DJ"),
        ob(6, "pass", "N"),
        ob(8, "pass", "W"),
        ob(10, "pass", "S"),
        ob(12, "trick_cleared"),
        ob(16, "played", "E", "S9"),
    ]
    out = tmp_path / "terracotta.mp4"
    render_game(load_profile("standard"), seed=1, deals=1, out=out, fps=FPS, size=SIZE,
                deck="cv-plain", script=script)  # fmt: skip
    cap = cv2.VideoCapture(str(out))
    ok, frame = cap.read()
    b, g, r = frame[SIZE[1] // 2, SIZE[0] // 2].astype(int)
    assert r > g > b  # the skin-coloured felt

    class Unread(OracleDetector):
        def detect_frame(self, index: int, image: np.ndarray, roi=None) -> list:  # type: ignore[no-untyped-def]
            return [d for d in super().detect_frame(index, image, roi) if d.card != "DJ"]

    got = list(observations_from_video(out, detector=Unread(f"{out}.oracle.jsonl.gz")))
    assert ("played", "E", ("S9",), None, None) in [_key(o) for o in got]
