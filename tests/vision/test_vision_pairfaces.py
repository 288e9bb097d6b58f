"""A card's suit from its face between its two corner indices (vision/pairfaces.py) and the
pipeline step that uses it (vision/pipeline.py ``_pair_faces``, ``_named``)."""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.enrol import DeckProfile, EnrolError, SuitTemplates
from vision.pairfaces import (
    FACE,
    HALF,
    SHIFT,
    PairFaceError,
    PairFaces,
    face_between,
    faces_from_shot,
)
from vision.pipeline import Det, _log_ratio, _named


def test_the_two_corners_land_on_fixed_points_whatever_the_cards_turn() -> None:
    for angle in (0.0, 37.0, 200.0):
        img = np.zeros((300, 300), np.uint8)
        a = math.radians(angle)
        p = np.array([150.0, 150.0]) - 30 * np.array([math.cos(a), math.sin(a)])
        q = np.array([150.0, 150.0]) + 30 * np.array([math.cos(a), math.sin(a)])
        for x, y in (p, q):
            cv2.circle(img, (round(x), round(y)), 2, 255, -1)
        face = face_between(img, p, q)
        assert face.shape == (FACE, FACE)
        c = (FACE - 1) / 2
        for want in ((c - HALF, c - HALF), (c + HALF, c + HALF)):
            y0, x0 = round(want[1]), round(want[0])
            assert face[y0 - 2 : y0 + 3, x0 - 2 : x0 + 3].max() > 150, (angle, want)
    with pytest.raises(ValueError, match="coincide"):
        face_between(img, (10, 10), (10, 10))


def test_a_shot_gives_the_faces_of_cards_named_at_both_corners() -> None:
    img = np.full((300, 300), 90, np.uint8)
    got = faces_from_shot(
        img,
        [
            ("C7", (40, 40)),
            ("C7", (80, 90)),  # both corners: a face
            ("C6", (140, 40)),
            ("C6", (180, 88)),  # another, about as far apart
            ("C8", (20, 150)),  # one corner: none
            ("C9", (100, 20)),
            ("C9", (150, 60)),
            ("C9", (150, 150)),  # three: which two are one card is unknown
            ("CT", (200, 200)),
            ("CT", (290, 290)),  # two cards' corners named alike: too far apart for one card
        ],
    )
    assert sorted(got) == ["C6", "C7"] and got["C7"].shape == (FACE, FACE)


# -- drawn cards: a card with round pips and one with pointed pips, the same layout ----------
def card_image(
    pip: str, angle: float, centre: tuple[float, float], seed: int
) -> tuple[np.ndarray, tuple[float, float], tuple[float, float]]:
    """A grey table with one card (44 x 62 px, 5 pips) turned ``angle`` degrees; and its two
    corner index centres."""
    rng = np.random.default_rng(seed)
    w, h = 44, 62
    card = np.full((h, w), 245, np.uint8)
    for x, y in ((12, 14), (32, 14), (22, 31), (12, 48), (32, 48)):
        if pip == "round":
            cv2.circle(card, (x, y), 5, 20, -1)
        else:
            pts = np.array([[x, y - 6], [x - 5, y + 5], [x + 5, y + 5]], np.int32)
            cv2.fillConvexPoly(card, pts, 20)
    cv2.putText(card, "7", (1, 9), cv2.FONT_HERSHEY_PLAIN, 0.6, 20)
    img = np.full((240, 320), 70, np.uint8)
    m = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    m[:, 2] += np.array(centre) - (w / 2, h / 2)
    mask = cv2.warpAffine(np.full((h, w), 255, np.uint8), m, (320, 240))
    drawn = cv2.warpAffine(card, m, (320, 240))
    img[mask > 127] = drawn[mask > 127]
    img = np.clip(img + rng.normal(0, 4, img.shape), 0, 255).astype(np.uint8)
    corners = np.array([[4.0, 5.0, 1.0], [w - 4.0, h - 5.0, 1.0]]) @ m.T
    return img, tuple(corners[0]), tuple(corners[1])


def enrolled() -> PairFaces:
    faces = PairFaces()
    for card, pip in (("C7", "round"), ("S7", "pointed")):
        img, p, q = card_image(pip, 12.0, (160, 120), 1)
        faces.pictures[card] = face_between(img, p, q)
    return faces


def test_the_face_says_which_of_two_cards_it_is() -> None:
    faces = enrolled()
    for pip, sign in (("round", 1), ("pointed", -1)):
        for angle, seed in ((-70.0, 2), (100.0, 3), (191.0, 4)):
            img, p, q = card_image(pip, angle, (150, 110), seed)
            jitter = np.array([1.5, -1.0])  # the corner boxes are never exact
            face = face_between(img, np.add(p, jitter), q, margin=SHIFT)
            got = faces.evidence(face, "C7", "S7")
            assert got is not None
            e, like = got
            assert sign * e > 0.1 and like > 0.8, (pip, angle, e, like)
            # either way up: the two corners given the other way round
            e2, _ = faces.evidence(face_between(img, q, p, margin=SHIFT), "C7", "S7") or (0, 0)
            assert sign * e2 > 0.1
    # bare table where a card should be: nothing like either face
    table = np.full((240, 320), 70, np.uint8) + np.random.default_rng(5).integers(
        0, 9, (240, 320)
    ).astype(np.uint8)
    e, like = faces.evidence(
        face_between(table, (100, 100), (140, 150), margin=SHIFT), "C7", "S7"
    ) or (0, 1)
    assert like < 0.5
    # a card the profile has no face of
    assert faces.evidence(face, "C7", "S8") is None


def test_face_pictures_round_trip_and_damaged_ones_are_refused(tmp_path: Path) -> None:
    faces = enrolled()
    back = PairFaces.from_json(faces.to_json())
    assert set(back.pictures) == {"C7", "S7"}
    assert np.array_equal(back.pictures["C7"], faces.pictures["C7"])
    raw = faces.to_json()
    raw["pictures"]["C7"] = "bm90IGEgcG5n"  # "not a png"
    with pytest.raises(PairFaceError, match="C7"):
        PairFaces.from_json(raw)
    with pytest.raises(PairFaceError, match="size"):
        PairFaces.from_json({**faces.to_json(), "size": 48})
    # in a deck profile: kept, and a damaged one names the file
    prof = DeckProfile(
        "drawn", "abc", ["C7", "S7"], np.eye(2), [2, 2], suits=SuitTemplates(), pair_faces=faces
    )
    path = prof.save(tmp_path / "deck.json")
    again = DeckProfile.load(path)
    assert again.pair_faces is not None and set(again.pair_faces.pictures) == {"C7", "S7"}
    text = path.read_text().replace(faces.to_json()["pictures"]["S7"], "AAAA")
    path.write_text(text)
    with pytest.raises(EnrolError, match="deck.json.*S7.*enrol the deck again"):
        DeckProfile.load(path)


# -- the pipeline's renaming of a corner --------------------------------------------------
def test_a_corner_is_named_by_the_pairs_log_ratio_and_keeps_its_other_runner_ups() -> None:
    d = Det("C7", (1, 2, 3, 4), 0.6, (("S7", 1.0), ("none", 3.0)))
    assert _log_ratio(d, "C7", "S7") == 1.0
    out = _named(d, "C7", "S7", -3.0)
    assert out.card == "S7" and out.score == 0.6 and out.box == d.box
    alts = dict(out.alts)
    assert alts["C7"] == pytest.approx(3.0, abs=1e-3)
    # "none" keeps its probability: C7 and S7 together held 1 + e^-1 of d's old best
    total = 1 + math.exp(-1)
    s7 = total / (1 + math.exp(-3))
    assert alts["none"] == pytest.approx(math.log(s7) + 3.0, abs=1e-3)
    # the same side: surer; a reading with no runner-up of the other suit counts as 5 nats
    assert _named(d, "C7", "S7", 4.0).card == "C7"
    sure = Det("S7", (1, 2, 3, 4), 0.9, ())
    assert _log_ratio(sure, "C7", "S7") == -5.0
    flipped = _named(sure, "C7", "S7", 2.0)
    assert flipped.card == "C7" and dict(flipped.alts)["S7"] == pytest.approx(2.0, abs=1e-3)
    # the other suit stays a runner-up however sure the face is (the referee may need it: a
    # third copy of a card re-reads the play whose runner-up is cheapest), up to 9 nats
    surer = _named(sure, "C7", "S7", -8.0)
    assert surer.card == "S7" and dict(surer.alts)["C7"] == pytest.approx(8.0, abs=1e-3)
    assert dict(_named(sure, "C7", "S7", -30.0).alts)["C7"] == 9.0


def test_a_deck_read_with_its_adapted_classifier_leaves_out_the_suit_checks(tmp_path: Path) -> None:
    """An adapted classifier names plastic's suits without the pair faces (three never-used
    games, 132 of 137 plays either way, bench/RESULTS.md 2026-12-05) and better without the
    suit templates (2026-12-07): `--deck` with one drops both; the profile alone keeps them."""
    from vision.adapt import deck_reader, with_adapted
    from vision.detector import MODELS_DIR

    prof = DeckProfile(
        "drawn",
        "abc",
        ["C7", "S7"],
        np.eye(2),
        [2, 2],
        suits=SuitTemplates(),
        pair_faces=enrolled(),
    )
    adapted = with_adapted(prof, MODELS_DIR / "card-classes.onnx")
    assert adapted.profile.pair_faces is None and adapted.profile.suits is None
    assert adapted.profile.weight == 0.0
    alone = deck_reader(prof).profile
    assert alone.pair_faces is not None and alone.suits is not None
