"""Jokers with no corner index, printed as one large picture (issue 44): read with perfect
labels (the renderer's own), every joker play is read. A big skin-toned picture lying in a play
zone is card art, not a hand resting there: taken for a hand, the zone stayed busy for as long
as the joker lay there, so its play was never committed."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from engine.cards import parse_cards
from engine.observations import Observation
from engine.profiles import load_profile
from kiosk.replay import observations_from_video
from vision.pipeline import OracleDetector, TablePipeline
from vision.synth.decks import CARD_NAMES
from vision.table import calibrate, render_table_view

#: a skin tone (BGR) as the renderer paints hands (vision/synth/video.py SKIN)
SKIN_TONE = (118, 156, 214)


def ob(t: float, type_: str, seat: str | None = None, cards: str = "") -> Observation:
    return Observation(t, type_, seat=seat, cards=tuple(parse_cards(cards)) if cards else ())


def picture_joker_deck(root: Path) -> str:
    """A deck folder whose cards are the plain drawn faces, its jokers one large skin-toned
    picture inside a paper margin, no index in any corner."""
    from vision.synth.video import load_faces

    faces = load_faces("cv-plain", root)
    deck = root / "picture-jokers"
    deck.mkdir(parents=True)
    for card in CARD_NAMES:
        img = faces.images[card].copy()
        if card in ("SB", "HR"):
            h, w = img.shape[:2]
            img[1:-1, 1:-1] = (245, 245, 245, 255)
            tone = SKIN_TONE if card == "HR" else (60, 60, 60)
            cv2.rectangle(img, (int(0.1 * w), int(0.08 * h)), (int(0.9 * w), int(0.92 * h)),
                          (*tone, 255), -1)  # fmt: skip
        cv2.imwrite(str(deck / f"{card}.png"), img)
    meta = {"name": "picture-jokers", "index_box": list(faces.index_box)}
    (deck / "deck.json").write_text(json.dumps(meta))
    return "picture-jokers"


class NoCards:
    name = "none"

    def detect_frame(self, index: int, image: np.ndarray, roi: object = None) -> list[object]:
        return []


def test_a_skin_toned_picture_inside_a_card_is_no_hand() -> None:
    """The blob test alone: the same skin tone is a hand on the felt, card art inside paper."""
    image, _ = render_table_view([(300, 10), (980, 14), (984, 700), (296, 696)])
    pipe = TablePipeline(NoCards(), calibrate(image))
    pipe.process(0, 0.0, image)  # the bare table
    card = image.copy()  # ~0.75 px/mm: a card is ~48 x 66 px
    cv2.rectangle(card, (600, 300), (648, 366), (245, 245, 245), -1)  # paper
    cv2.rectangle(card, (604, 304), (644, 362), SKIN_TONE, -1)  # its picture
    fingers = image.copy()  # as small as the picture, on the felt
    cv2.ellipse(fingers, (624, 333), (18, 26), 0, 0, 360, SKIN_TONE, -1)
    hand = card.copy()  # a whole hand, over the card
    cv2.ellipse(hand, (630, 340), (40, 52), 0, 0, 360, SKIN_TONE, -1)
    for frame, art in ((card, True), (fingers, False), (hand, False)):
        small = cv2.resize(frame, pipe._small_size, interpolation=cv2.INTER_AREA)
        grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY).astype(np.int16)
        assert pipe._bg is not None
        not_table = np.abs(grey - pipe._bg) > pipe.changed_level
        n, _, stats, _ = cv2.connectedComponentsWithStats(not_table.astype(np.uint8))
        blob = max(range(1, n), key=lambda i: stats[i, cv2.CC_STAT_AREA])
        assert pipe._card_art(frame, stats[blob], not_table) is art


@pytest.mark.parametrize("size", [(960, 540)])
def test_picture_jokers_with_perfect_labels_read_every_joker_play(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    from vision.synth.video import render_game

    deck = picture_joker_deck(tmp_path / "decks")
    script = [
        ob(0, "deal_start"),
        ob(3, "played", "S", "S5"),
        ob(6, "played", "E", "HR"),
        ob(8, "pass", "N"),
        ob(10, "pass", "W"),
        ob(12, "pass", "S"),
        ob(14, "trick_cleared"),
        ob(16, "played", "E", "D3"),
        ob(19, "played", "N", "SB"),
        ob(22, "played", "W", "HR"),
        ob(24, "pass", "S"),
        ob(26, "pass", "E"),
        ob(28, "pass", "N"),
        ob(30, "trick_cleared"),
    ]
    out = tmp_path / "jokers.mp4"
    render_game(load_profile("standard"), seed=5, deals=1, out=out, fps=5.0, size=size,
                deck=deck, decks_dir=tmp_path / "decks", script=script)  # fmt: skip
    got = list(observations_from_video(out, detector=OracleDetector(f"{out}.oracle.jsonl.gz")))
    plays = [(o.seat, " ".join(str(c) for c in o.cards)) for o in got if o.type == "played"]
    assert plays == [("S", "S5"), ("E", "HR"), ("E", "D3"), ("N", "SB"), ("W", "HR")], plays
