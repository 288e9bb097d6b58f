"""Bad enrolment frames (issue 44): the wrong suit, two decks' cards mixed, blurred, or without
the table's markers each get a message naming the frame and the cards (vision/enrolcheck.py),
and nothing is written for ``--deck``; the frames of ``guandan synth enrolment`` still enrol."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from kiosk.cli import main
from vision.detector import DEFAULT_MODEL
from vision.enrolcheck import (
    MAX_EDGE_MM,
    FrameReading,
    edge_width_mm,
    frame_problem,
    marker_problem,
)
from vision.table import TableGeometry, calibrate, detect_markers, render_table_view

SHEET = Path("/usr/share/aisleriot/cards/tigullio.svgz")


@pytest.fixture(scope="module")
def frames(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """tigullio's enrolment frames (as ``guandan synth enrolment --seed 21`` films them), and
    bad ones made from them."""
    if not SHEET.exists():
        pytest.skip(f"{SHEET} missing: install Debian's gnome-cards-data (make system-deps)")
    if not DEFAULT_MODEL.exists():
        pytest.skip(f"{DEFAULT_MODEL} missing")
    from vision.synth.video import render_enrolment

    root = tmp_path_factory.mktemp("enrol-bad")
    shots = render_enrolment(root / "t", seed=21, deck="tigullio", decks_dir=root / "decks")
    got = {kind: path for path, kind in shots}
    spades = cv2.imread(str(got["S"]))
    bad = {
        "blurred": cv2.GaussianBlur(cv2.imread(str(got["H"])), (0, 0), 2.0),
        "no-markers": _paint_left_markers(spades),
        "two-decks": _both_decks(spades),
    }
    for name, image in bad.items():
        cv2.imwrite(str(root / f"{name}.png"), image)
        got[name] = root / f"{name}.png"
    return got


def _paint_left_markers(image: np.ndarray) -> np.ndarray:
    out = image.copy()
    out[:, :400] = out[:, 600:601]  # the left markers painted over with the table's colour
    return out


def _both_decks(image: np.ndarray) -> np.ndarray:
    """The S zone's cards (table x 100-600 mm, y 600-880 mm) laid a second time, 170 mm nearer
    the centre and 100 mm to the right, as the other deck's copies would lie: each of those
    cards then shows its corner index four times."""
    cal = calibrate(image)

    def px(points: list[list[float]]) -> np.ndarray:
        return cal.to_image(np.array(points, np.float64)).astype(np.float32)

    src = [[100.0, 600.0], [600.0, 600.0], [600.0, 880.0], [100.0, 880.0]]
    move = cv2.getPerspectiveTransform(px(src), px([[x + 100.0, y - 170.0] for x, y in src]))
    h, w = image.shape[:2]
    inside = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(inside, px(src).round().astype(np.int32), 255)
    paper = np.where(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) > 150, inside, 0).astype(np.uint8)
    outlines, _ = cv2.findContours(paper, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cards = np.zeros_like(paper)
    cv2.drawContours(cards, [c for c in outlines if cv2.contourArea(c) > 500], -1, 255, -1)
    mask = cv2.warpPerspective(cards, move, (w, h)) > 127
    out = image.copy()
    out[mask] = cv2.warpPerspective(image, move, (w, h))[mask]
    return out


def _enrol(out: Path, *flags: tuple[str, Path]) -> list[str]:
    args = ["vision", "enrol", "--out", str(out)]
    for flag, path in flags:
        args += [f"--{flag}", str(path)]
    return args


def test_the_markers_measure_the_frames_sharpness() -> None:
    """A sharp frame's marker edges are ~2 px wide; Gaussian blur widens them (2026-12-04, the
    kiosk's 1280x720: sigma 1 -> ~4.2 mm, still read well; sigma 2 -> ~6.7 mm, ranks misread)."""
    image, _ = render_table_view([(300, 10), (980, 14), (984, 700), (296, 696)])
    assert marker_problem(image, "frame 1")[0] is None
    seen = list(detect_markers(image).corners.values())
    mm = TableGeometry().marker_mm
    sharp = edge_width_mm(image, seen, mm)
    soft = edge_width_mm(cv2.GaussianBlur(image, (0, 0), 1.0), seen, mm)
    blurred = edge_width_mm(cv2.GaussianBlur(image, (0, 0), 2.0), seen, mm)
    assert sharp < 3.5 and soft < MAX_EDGE_MM < blurred, (sharp, soft, blurred)


@pytest.mark.skipif(not DEFAULT_MODEL.exists(), reason=f"{DEFAULT_MODEL} missing")
def test_an_empty_table_and_a_frame_without_markers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "deck.json"
    felt = tmp_path / "felt.png"
    cv2.imwrite(str(felt), np.full((720, 1280, 3), (40, 110, 60), np.uint8))
    assert main(_enrol(out, ("spades", felt))) == 2
    err = capsys.readouterr().err
    assert f"frame 1 (spades, {felt}): the table's corner markers are not all in view" in err
    empty = tmp_path / "empty.png"
    cv2.imwrite(str(empty), render_table_view([(300, 10), (980, 14), (984, 700), (296, 696)])[0])
    assert main(_enrol(out, ("spades", empty))) == 2
    assert f"frame 1 (spades, {empty}): no card corner found" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.png", "felt.png"]


@pytest.mark.parametrize(
    "flags, says",
    [
        pytest.param(
            [("spades", "H"), ("clubs", "C")],
            ["frame 1 (spades, {H}): given as spades, but its cards are red", "hearts (H2 H3"],
            id="wrong-colour",
        ),
        pytest.param(
            [("spades", "C"), ("hearts", "H"), ("clubs", "S")],  # numbered S, H, C, D, J
            ["frame 1 (spades, {C}) reads as clubs", "frame 3 (clubs, {S}) as spades", "swapped"],
            id="swapped",
        ),
        pytest.param(
            [("spades", "S"), ("clubs", "S")],
            ["frame 2 (clubs, {S}) is the same picture as frame 1 (spades, {S})"],
            id="same-frame-twice",
        ),
        pytest.param(
            [("jokers", "S")],
            ["frame 1 (jokers, {S}): given as jokers, but its cards read as spades (S2"],
            id="suit-as-jokers",
        ),
        pytest.param(
            [("spades", "two-decks")],
            ["frame 1 (spades, {two-decks}): S2 S6 ST SA seen more than once", "both decks"],
            id="two-decks",
        ),
        pytest.param(
            [("spades", "S"), ("hearts", "blurred")],
            ["frame 2 (hearts, {blurred}): the frame is blurred", "cards not read surely: H"],
            id="blurred",
        ),
        pytest.param(
            [("spades", "no-markers")],
            ["frame 1 (spades, {no-markers}): the table's corner markers are not all in view"],
            id="no-markers",
        ),
    ],
)
def test_a_bad_frame_is_named_and_nothing_is_written(
    frames: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    flags: list[tuple[str, str]],
    says: list[str],
) -> None:
    out = tmp_path / "deck.json"
    out.write_text("the profile of an earlier enrolment")
    assert main(_enrol(out, *[(flag, frames[kind]) for flag, kind in flags])) == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]  # after the log of good frames
    assert said.startswith("guandan vision: frame "), said
    for text in says:
        for kind, path in frames.items():
            text = text.replace("{" + kind + "}", str(path))
        assert text in said, said
    assert out.read_text() == "the profile of an earlier enrolment"  # left as it was
    assert [p.name for p in tmp_path.iterdir()] == ["deck.json"]  # no temp file left


def test_good_frames_enrol_and_the_profile_is_written_whole(
    frames: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tigullio.json"
    flags = [("spades", "S"), ("hearts", "H"), ("clubs", "C"), ("diamonds", "D"), ("jokers", "J")]
    assert main(_enrol(out, *[(flag, frames[kind]) for flag, kind in flags])) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["cards"] >= 52, summary
    assert json.loads(out.read_text())["kind"] == "guandan-deck-profile"
    assert [p.name for p in tmp_path.iterdir()] == ["tigullio.json"]
    assert out.stat().st_mode & 0o644 == 0o644


def test_one_corner_index_found_twice_counts_once() -> None:
    """Seed 9806's clubs frame: a thin CJ index found at both enrolment scales overlapped
    itself at IoU 0.44 (under the NMS's 0.45), was read as a second CJ, and the one-deck frame
    was refused as two decks' cards."""
    from vision.enrol import one_per_corner

    boxes = np.array(
        [
            [794, 487, 809, 496],  # the same index twice (scores 0.50 and 0.44)
            [792, 490, 807, 498],
            [840, 445, 855, 453],  # the card's other index
            [838, 447, 856, 458],  # ... also twice
            [429, 367, 444, 376],  # another card's index, near but apart
        ],
        float,
    )
    scores = np.array([0.50, 0.44, 0.52, 0.54, 0.47])
    assert sorted(one_per_corner(boxes, scores).tolist()) == [0, 3, 4]
    assert one_per_corner(np.zeros((0, 4)), np.zeros(0)).tolist() == []


def _reading(kind: str, cards: list[tuple[str, float, str, float]]) -> FrameReading:
    """A frame's reading: per corner its likeliest card and probability, and a runner-up."""
    from vision.detector import enrolment_detector

    names = list(enrolment_detector().class_names)
    probs = np.zeros((len(cards), len(names)), np.float32)
    for i, (first, p, second, q) in enumerate(cards):
        probs[i, names.index(first)] = p
        probs[i, names.index(second)] = q
    return FrameReading(f"frame 2 ({kind})", kind, probs, names)


@pytest.mark.skipif(not DEFAULT_MODEL.exists(), reason=f"{DEFAULT_MODEL} missing")
def test_only_the_frames_colour_counts_a_card_twice() -> None:
    """paris's hearts at 2304x1296 (enrolment seed 549102): beside the two H4 corners, two boxes
    on the queen's and jack's pictures read C4 (0.61 and 0.48, each a 4 at over 0.5 with the
    other suits' 4s), four sure 4s, and a good frame was refused as both decks'. A second
    deck's H4 reads red; a suit within the colour may still be misread (plastic's spades as
    clubs) and counts."""
    art = [("H4", 0.82, "HJ", 0.03), ("H4", 0.69, "HJ", 0.09)]
    art += [("C4", 0.61, "S4", 0.19), ("C4", 0.48, "S4", 0.05)]
    assert frame_problem(_reading("H", art), 2) is None
    second_deck = art[:2] + [("H4", 0.8, "D4", 0.1), ("D4", 0.7, "H4", 0.2)]
    problem = frame_problem(_reading("H", second_deck), 2)
    assert problem is not None and "H4 seen more than once (4 corner indices" in problem
    black = [("S7", 0.9, "C7", 0.05), ("C7", 0.8, "S7", 0.1)] * 2  # clubs read as spades
    problem = frame_problem(_reading("C", black), 2)
    assert problem is not None and "C7 seen more than once" in problem


@pytest.mark.skipif(not DEFAULT_MODEL.exists(), reason=f"{DEFAULT_MODEL} missing")
def test_paris_filmed_at_the_cameras_full_size_enrols(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The frames of the case above, filmed again (``guandan synth enrolment --deck paris
    --seed 549102 --size 2304x1296``): `vision enrol` and `vision deckfaces` take all 54."""
    if not Path("/usr/share/aisleriot/cards/paris.svgz").exists():
        pytest.skip("paris's sheet missing: install Debian's gnome-cards-data (make system-deps)")
    from vision.synth.video import render_enrolment

    shots = render_enrolment(
        tmp_path / "ev", seed=549102, deck="paris", decks_dir=tmp_path / "decks", size=(2304, 1296)
    )
    got = {kind: path for path, kind in shots}
    flags = [("spades", "S"), ("hearts", "H"), ("clubs", "C"), ("diamonds", "D"), ("jokers", "J")]
    given = [(flag, got[kind]) for flag, kind in flags]
    assert main(_enrol(tmp_path / "deck.json", *given)) == 0
    assert json.loads(capsys.readouterr().out)["missing"] == []
    faces = ["vision", "deckfaces", "--out", str(tmp_path / "faces")]
    for flag, path in given:
        faces += [f"--{flag}", str(path)]
    assert main(faces) == 0
    assert json.loads(capsys.readouterr().out)["cards"] == 54


def test_the_enrolment_folder_holds_whole_files_only(
    frames: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``render_enrolment`` writes each file under a name of its own run and renames it into
    place, so a reader (or a second run filming the same folder) never finds one half-written;
    a shot it cannot write is named, and no part-written file is left behind."""
    folder = frames["S"].parent
    want = {f"enrol-{k}.png" for k in "SHCDJ"}
    want |= {"enrol.mp4"} | {f"enrol.mp4.{x}" for x in ("oracle.jsonl.gz", "truth.jsonl")}
    want |= {"enrol.mp4.calibration.json"}  # every file render_game writes beside the video
    assert {p.name for p in folder.iterdir()} == want
    from vision.synth import video

    real = cv2.imwrite

    def full_disk(path: str, image: np.ndarray) -> bool:
        if "enrol-C" in path:
            return False
        return real(path, image)

    monkeypatch.setattr(video.cv2, "imwrite", full_disk)
    out = tmp_path / "again"
    with pytest.raises(OSError, match=r"enrol-C\.png: cannot write the clubs shot"):
        video.render_enrolment(out, seed=21, deck="tigullio", decks_dir=folder.parent / "decks")
    assert {p.name for p in out.iterdir()} == {"enrol-S.png", "enrol-H.png"}
