"""The deck's faces cut from enrolment frames (vision/deckfaces.py, issue 44): rendered
enrolment frames of a held-out design give back its 54 faces, named right, as a deck folder
the renderer loads; a card missing, doubled, cut off or unreadable is named and nothing is
written. Real frames (``render_enrolment``) read by the shipped models."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.deckfaces import DeckFacesError, cut_cards, deck_from_enrolment, write_deck
from vision.detector import DEFAULT_MODEL, enrolment_detector
from vision.synth.decks import CARD_NAMES, DeckUnavailable, load_deck
from vision.synth.video import decks_root, load_faces, render_enrolment
from vision.table import calibrate

ROOT = Path(__file__).resolve().parents[2]
DECK = "plastic"  # held out of training; its clubs and spades are what enrolment is for

pytestmark = pytest.mark.skipif(not DEFAULT_MODEL.exists(), reason="no shipped model")


@pytest.fixture(scope="module")
def frames(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("enrol")
    try:
        shots = render_enrolment(tmp, seed=4402, deck=DECK)
    except DeckUnavailable as exc:
        pytest.skip(str(exc))
    return {kind: png for png, kind in shots}


@pytest.fixture(scope="module")
def reader():  # type: ignore[no-untyped-def]
    return enrolment_detector()


def _grey(img: np.ndarray, size: tuple[int, int] = (60, 84)) -> np.ndarray:
    g = cv2.cvtColor(img[:, :, :3], cv2.COLOR_BGR2GRAY)
    g = cv2.resize(g, size, interpolation=cv2.INTER_AREA).astype(np.float32)
    g -= g.mean()
    return g / (np.linalg.norm(g) + 1e-6)


def test_whole_deck_from_the_cli(frames: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "event-deck"
    flags = {"S": "--spades", "H": "--hearts", "C": "--clubs", "D": "--diamonds", "J": "--jokers"}
    args = [a for k, f in flags.items() for a in (f, str(frames[k]))]
    main = "import sys; from kiosk.cli import main; sys.exit(main(sys.argv[1:]))"
    r = subprocess.run(
        [sys.executable, "-c", main, "vision", "deckfaces", *args, "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["cards"] == 54 and summary["name"] == "event-deck"
    deck = load_deck(out)  # the renderer's loader takes it
    assert deck.cards == CARD_NAMES
    # each face is most like the design's own face of that card among all 54 (named right)
    truth = load_deck(decks_root() / DECK)
    t = np.stack([_grey(truth.image(c)) for c in CARD_NAMES]).reshape(54, -1)
    got = np.stack([_grey(deck.image(c)) for c in CARD_NAMES]).reshape(54, -1)
    sim = got @ t.T
    right = [c for k, c in enumerate(CARD_NAMES) if int(np.argmax(sim[k])) == k]
    # (a face turned half-way is the same card: both ways up are compared)
    t180 = np.stack([_grey(truth.image(c)[::-1, ::-1]) for c in CARD_NAMES]).reshape(54, -1)
    sim = np.maximum(sim, got @ t180.T)
    right = [c for k, c in enumerate(CARD_NAMES) if int(np.argmax(sim[k])) == k]
    assert len(right) == 54, sorted(set(CARD_NAMES) - set(right))
    assert float(np.diag(sim).min()) > 0.75
    # the corner-index box is measured on the cut faces, near the design's own
    assert np.allclose(deck.index_box, truth.index_box, atol=0.03), deck.index_box


def _outlines_px(image: np.ndarray) -> list[np.ndarray]:
    cal = calibrate(image)
    cuts, _ = cut_cards(image, cal)
    return [cal.to_image(c.outline_mm) for c in cuts]


def test_missing_doubled_cut_off_unreadable_are_named(
    frames: dict[str, Path], reader, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    image = cv2.imread(str(frames["S"]))
    cards = _outlines_px(image)
    assert len(cards) == 13
    felt = np.median(image[image.shape[0] // 2 - 20 : image.shape[0] // 2 + 20, 600:680], (0, 1))
    bad = image.copy()
    centres = np.array([c.mean(0) for c in cards])
    far = np.linalg.norm(centres[:, None] - centres[None], axis=2)
    i, j = np.unravel_index(int(np.argmax(far)), far.shape)  # two cards in different rows
    # cut off: the left half of card i covered by the table's colour
    x0, y0 = cards[i].min(0).astype(int) - 2
    x1, y1 = cards[i].max(0).astype(int) + 2
    bad[y0:y1, x0 : (x0 + x1) // 2] = felt
    # unreadable: card j's face blanked to paper
    b = cards[j]
    inner = b.mean(0) + (b - b.mean(0)) * 0.93
    cv2.fillConvexPoly(bad, np.round(inner).astype(np.int32), (235, 235, 235))
    # doubled: the (unharmed) spades frame given twice
    got = deck_from_enrolment(
        reader, [(bad, "S"), (image, "S")], frames=["bad-S.png", "S.png"], check=False
    )
    text = " | ".join(got.problems)
    assert "frame 1 (spades, bad-S.png): part of a card" in text, text  # the covered one
    assert "frame 1 (spades, bad-S.png): a card no corner index could be read" in text, text
    assert "frame 2 (spades, S.png): S" in text and "is doubled" in text, text
    assert len(got.faces) == 13
    # write_deck names what is missing and writes nothing
    out = tmp_path / "deck"
    with pytest.raises(DeckFacesError) as err:
        write_deck(got, out, "bad")
    assert "missing: " in str(err.value) and "HR" in str(err.value)
    assert not out.exists() and not list(tmp_path.glob(".deck*"))


def test_wrong_suit_frame_is_refused(frames: dict[str, Path], reader) -> None:  # type: ignore[no-untyped-def]
    hearts = cv2.imread(str(frames["H"]))
    # the other colour (a frame of one colour's suits swapped is told across the two frames,
    # vision/enrolcheck.py: not from one)
    got = deck_from_enrolment(reader, [(hearts, "S")], frames=["enrol-H.png"])
    assert got.problems and "enrol-H.png" in got.problems[0], got.problems
    assert not got.faces


def test_picture_jokers_told_apart_by_colour() -> None:
    """Jokers whose corners say nothing (a picture, no index): the colourful one is HR."""
    from vision.deckfaces import CardCut, _name

    plain = np.full((250, 180, 3), 235, np.uint8)
    cv2.circle(plain, (90, 125), 50, (30, 30, 30), -1)  # a black picture
    red = plain.copy()
    cv2.circle(red, (90, 125), 50, (40, 40, 210), -1)  # a red one
    outline = np.zeros((4, 2))
    cuts = [CardCut(red, outline), CardCut(plain, outline)]
    named, problems = _name(np.zeros((2, 2)), cuts, "J", "frame 5 (jokers)")
    assert not problems
    assert named["HR"] is red and named["SB"] is plain
    # one joker read by its corner, the other by elimination
    votes = np.array([[0.0, 0.0], [np.log(0.9), np.log(0.1)]])
    named, problems = _name(votes, cuts, "J", "frame 5 (jokers)")
    assert not problems and named["SB"] is plain and named["HR"] is red


GUYENNE = Path("/usr/share/aisleriot/cards/guyenne-classic.svgz")


@pytest.mark.skipif(not GUYENNE.exists(), reason="needs gnome-cards-data (make system-deps)")
def test_court_frames_give_an_index_less_decks_court_cards(tmp_path: Path, reader) -> None:  # type: ignore[no-untyped-def]
    """guyenne-classic's J, Q and K print no index: its suit frames alone leave them unreadable
    (nothing written, each named), and with one court frame per suit every card is cut and named
    right, the court cards by their place in the row, the same as the design's own faces."""
    from vision.synth.decks import render_aisleriot

    decks = tmp_path / "decks"
    render_aisleriot(GUYENNE, decks)
    kw = {"seed": 4403, "deck": "guyenne-classic", "decks_dir": decks}
    shots = render_enrolment(tmp_path / "enrol", **kw)
    shots += render_enrolment(tmp_path / "enrol", courts=True, **kw)
    images = [(cv2.imread(str(png)), kind) for png, kind in shots]
    suits_only = deck_from_enrolment(reader, [s for s in images if not s[1].startswith("court")])
    with pytest.raises(DeckFacesError, match="unreadable") as err:
        write_deck(suits_only, tmp_path / "no", "guyenne")
    assert "SK" in str(err.value) and not (tmp_path / "no").exists()

    faces = deck_from_enrolment(reader, images, frames=[str(p) for p, _ in shots])
    assert faces.problems == [] and sorted(faces.faces) == sorted(CARD_NAMES)
    own = load_faces("guyenne-classic", decks).images
    for card in ("SJ", "HQ", "CK", "DJ", "S7", "HA"):
        scores = {c: float((_grey(faces.faces[card]) * _grey(own[c])).sum()) for c in own}
        assert max(scores, key=scores.get) == card, card  # type: ignore[arg-type]

    # the hearts' court frame given as the spades': the spades' frame shows no card like its
    # pictures, and that is said; nothing is written
    swapped = [
        (img, "court-S" if k == "court-H" else "court-H" if k == "court-S" else k)
        for img, k in images
    ]
    bad = deck_from_enrolment(reader, swapped)
    assert any("0 cards look like the court frame" in p and "spades" in p for p in bad.problems)
    with pytest.raises(DeckFacesError):
        write_deck(bad, tmp_path / "bad", "guyenne")
    assert not (tmp_path / "bad").exists()


def test_a_corner_index_boxed_twice_is_no_second_deck(frames: dict[str, Path], reader) -> None:  # type: ignore[no-untyped-def]
    """A thin index found at two scales can overlap itself under the detector's NMS (a paris
    clubs frame, seed 548400: one C4 index boxed twice, four boxes where one card shows two),
    and the frame was refused as holding both decks' cards. `vision enrol` keeps one box per
    corner index (``one_per_corner``); the deck's faces are read the same way now: every corner
    boxed twice over, the deck is still cut whole, with no problem named."""

    class Twice:
        def __init__(self, inner) -> None:  # type: ignore[no-untyped-def]
            self.inner = inner

        def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
            return getattr(self.inner, name)

        def corners(self, image: np.ndarray):  # type: ignore[no-untyped-def]
            boxes, scores = self.inner.corners(image)
            again = boxes + np.array([1.0, 1.0, -1.0, -1.0], np.float32)
            return np.concatenate([boxes, again]), np.concatenate([scores, scores * 0.99])

    shots = [(cv2.imread(str(frames[k])), k) for k in "SHCDJ"]
    got = deck_from_enrolment(Twice(reader), shots)
    assert got.problems == [] and len(got.faces) == 54
