"""Court cards by their whole face (vision/faces.py): guyenne-classic's J, Q and K print no index,
so they are cut from court frames and looked for as pictures. Real renders of the deck."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.faces import FACE_PX_PER_MM, CourtFaces, FaceError, faces_from_frame, table_view
from vision.table import calibrate

SHEET = Path("/usr/share/aisleriot/cards/guyenne-classic.svgz")


@pytest.fixture(scope="module")
def courts(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[int, list[tuple[Path, str]]]]:
    """The deck and the court frames of two tables (one to enrol on, one to read)."""
    if not SHEET.exists():
        pytest.skip(f"{SHEET} missing: install Debian's gnome-cards-data (make system-deps)")
    from vision.synth.decks import render_aisleriot
    from vision.synth.video import render_enrolment

    root = tmp_path_factory.mktemp("faces")
    render_aisleriot(SHEET, root / "decks")
    shots = {
        seed: render_enrolment(
            root / str(seed),
            seed=seed,
            deck="guyenne-classic",
            decks_dir=root / "decks",
            courts=True,
        )
        for seed in (21, 22)
    }
    return root, shots


def enrolled(shots: list[tuple[Path, str]]) -> CourtFaces:
    faces = CourtFaces()
    for png, kind in shots:
        image = cv2.imread(str(png))
        pics, size = faces_from_frame(image, calibrate(image), kind[-1])
        faces.pictures.update(pics)
        faces.card_mm = size
    return faces


def likeness(a: np.ndarray, b: np.ndarray) -> float:
    b = cv2.resize(b, (a.shape[1], a.shape[0]), interpolation=cv2.INTER_AREA)
    return float(cv2.matchTemplate(a, b, cv2.TM_CCOEFF_NORMED).max())


def test_court_frames_give_each_card_its_own_picture(courts) -> None:
    root, shots = courts
    assert [k for _, k in shots[21]] == ["court-S", "court-H", "court-C", "court-D"]
    faces = enrolled(shots[21])
    assert sorted(faces.pictures) == sorted(s + r for s in "SHCD" for r in "JQK")
    w, h = faces.card_mm
    assert 58 <= w <= 68 and 1.4 <= h / w <= 1.7  # guyenne's cards are taller than 63 x 88
    # named J, Q, K from the left: each picture is most like its own card's face in the deck
    # (either way up: a card cut from the table may lie head down)
    deck = root / "decks" / "guyenne-classic"
    for suit in "SHCD":
        for r in "JQK":
            pic = faces.pictures[suit + r]
            score = {
                x: max(
                    likeness(p, cv2.imread(str(deck / f"{suit}{x}.png")))
                    for p in (pic, cv2.rotate(pic, cv2.ROTATE_180))
                )
                for x in "JQK"
            }
            assert max(score, key=lambda x: score[x]) == r, (suit + r, score)


def test_faces_are_found_on_another_table_and_nothing_on_bare_felt(courts) -> None:
    _, shots = courts
    faces = enrolled(shots[21])
    for png, kind in shots[22]:  # another camera, felt and light
        image = cv2.imread(str(png))
        cal = calibrate(image)
        g = cal.geometry
        view = table_view(image, cal, (0.0, 0.0, g.width_mm, g.height_mm), FACE_PX_PER_MM)
        got = faces.find(view)
        assert sorted(m.card for m in got) == sorted(kind[-1] + r for r in "JQK"), kind
        xs = [
            cal.to_image([m.centre_mm])[0][0]
            for m in sorted(got, key=lambda m: "JQK".index(m.card[1]))
        ]
        assert xs == sorted(xs)  # J, Q, K where they lie, left to right
        assert all(m.score >= faces.min_score for m in got)
        # each a camera reading with runner-ups (the referee re-reads an illegal play with
        # them): at least "no card here", the surer the face the dearer
        assert all(m.alts and m.alts[-1][0] == "none" and m.alts[-1][1] > 0 for m in got)
        assert all(m.strip is None for m in got)  # whole faces, no fan
    # the felt where no card lies: nothing
    image = cv2.imread(str(shots[22][0][0]))
    cal = calibrate(image)
    bare = table_view(image, cal, (100.0, 100.0, 400.0, 350.0), FACE_PX_PER_MM)
    assert faces.find(bare) == []


def test_faces_of_different_sizes_are_searched_side_by_side(courts) -> None:
    """A deck's court pictures cut from the enrolment frames may differ by a pixel in size;
    each is searched with its own cover map (bench game 9808 crashed when a map of one size was
    reused for a face of another)."""
    _, shots = courts
    faces = enrolled(shots[21])
    faces.pictures["SJ"] = faces.pictures["SJ"][1:, 1:].copy()
    faces.pictures["SK"] = np.pad(faces.pictures["SK"], ((0, 1), (0, 1), (0, 0)), mode="edge")
    png, kind = shots[22][0]
    assert kind == "court-S"
    image = cv2.imread(str(png))
    cal = calibrate(image)
    g = cal.geometry
    view = table_view(image, cal, (0.0, 0.0, g.width_mm, g.height_mm), FACE_PX_PER_MM)
    assert sorted(m.card for m in faces.find(view)) == ["SJ", "SK", "SQ"]


def test_faces_keep_through_json_and_a_foreign_scale_is_refused(courts) -> None:
    _, shots = courts
    faces = enrolled(shots[21][:1])
    raw = faces.to_json()
    back = CourtFaces.from_json(raw)
    assert sorted(back.pictures) == ["SJ", "SK", "SQ"]
    assert back.card_mm == pytest.approx(faces.card_mm, abs=0.1)
    for c in back.pictures:  # PNG keeps the pixels
        assert np.array_equal(back.pictures[c], faces.pictures[c])
    with pytest.raises(FaceError, match="enrol the deck again"):
        CourtFaces.from_json({**raw, "px_per_mm": 1.0})
    with pytest.raises(FaceError, match="SJ: not a picture"):
        CourtFaces.from_json({**raw, "pictures": {"SJ": "bm90IGEgcG5n"}})


def test_a_court_frame_without_three_cards_says_what_to_lay(courts) -> None:
    _, shots = courts
    image = cv2.imread(str(shots[21][0][0]))
    cal = calibrate(image)
    # cover the K (the rightmost card) with felt: fewer than three cards left
    g = cal.geometry
    view = table_view(image, cal, (0.0, 0.0, g.width_mm, g.height_mm), 1.0)
    felt = np.median(view.reshape(-1, 3), axis=0)
    faces = enrolled(shots[21][:1])
    whole = table_view(image, cal, (0.0, 0.0, g.width_mm, g.height_mm), FACE_PX_PER_MM)
    k = max(faces.find(whole), key=lambda m: m.centre_mm[0])
    cx, cy = cal.to_image([k.centre_mm])[0]
    covered = image.copy()
    cv2.circle(covered, (int(cx), int(cy)), 45, [int(v) for v in felt], -1)
    with pytest.raises(
        FaceError,
        match=r"court frame \(spades\): found [12] cards, not 3; lay the spades' J, Q and K",
    ):
        faces_from_frame(covered, cal, "S")


def test_court_cards_played_are_seen_by_their_faces_with_the_enrolled_deck(courts) -> None:
    """A short filmed game of guyenne-classic: without face pictures its court cards are never
    seen; with the deck enrolled with court frames, a single, a pair (the lower card by the
    strip of it in view), a court card on top of a number card and on top of a pair are read."""
    from engine import load_profile
    from engine.cards import parse_cards
    from engine.observations import Observation
    from kiosk.replay import observations_from_video
    from vision.detector import DEFAULT_MODEL, enrolment_detector
    from vision.enrol import enrol
    from vision.pipeline import resolve_detector
    from vision.synth.video import render_enrolment, render_game

    if not DEFAULT_MODEL.exists():
        pytest.skip(f"{DEFAULT_MODEL} missing")
    root, shots = courts
    frames = [
        (cv2.imread(str(p)), k)
        for p, k in render_enrolment(
            root / "21", seed=21, deck="guyenne-classic", decks_dir=root / "decks"
        )
    ]
    frames += [(cv2.imread(str(p)), k) for p, k in shots[21]]
    det = enrolment_detector()
    prof = enrol(det, frames, name="guyenne-classic")
    assert prof.faces is not None and len(prof.faces.pictures) == 12

    plays = [("S", "DQ"), ("E", "SK SK"), ("N", "H9 CJ"), ("W", "D5 D5 HK")]
    script = [
        Observation(2.0 + 2.5 * k, "played", seat=s, cards=tuple(parse_cards(c)))
        for k, (s, c) in enumerate(plays)
    ]
    # then a trick of its own: a court card under a number card (the last laid lies on top),
    # and a fan of five kings (its lower cards' strips reach 68 mm beyond the top card)
    later = [("S", "CQ H4"), ("E", "CK DK HK HK SK")]
    script.append(Observation(12.5, "trick_cleared"))
    script += [
        Observation(15.0 + 2.5 * k, "played", seat=s, cards=tuple(parse_cards(c)))
        for k, (s, c) in enumerate(later)
    ]
    # and fans of court cards under number cards, whose strips the walk from the number card
    # on top must tell apart (seeds 9408 and 9808: a queen lost in each)
    fans = [("W", "DQ HQ CQ D3 H3"), ("N", "CQ DQ DQ H5 D5")]
    script.append(Observation(20.0, "trick_cleared"))
    script += [
        Observation(22.5 + 2.5 * k, "played", seat=s, cards=tuple(parse_cards(c)))
        for k, (s, c) in enumerate(fans)
    ]
    video = root / "court-plays.mp4"
    render_game(
        load_profile("standard"),
        seed=23,
        deals=1,
        out=video,
        deck="guyenne-classic",
        decks_dir=root / "decks",
        script=script,
    )

    def seen(profile: object) -> list[tuple[str | None, list[str]]]:
        d = resolve_detector("model", video, profile)
        return [
            (o.seat, sorted(str(c) for c in o.cards))
            for o in observations_from_video(video, None, d)
            if o.type == "played"
        ]

    with_faces = seen(prof)
    assert ("S", ["DQ"]) in with_faces and ("E", ["SK", "SK"]) in with_faces, with_faces
    assert ("N", ["CJ", "H9"]) in with_faces and ("W", ["D5", "D5", "HK"]) in with_faces
    assert ("S", ["CQ", "H4"]) in with_faces, with_faces
    assert ("E", ["CK", "DK", "HK", "HK", "SK"]) in with_faces, with_faces
    assert ("W", ["CQ", "D3", "DQ", "H3", "HQ"]) in with_faces, with_faces
    assert ("N", ["CQ", "D5", "DQ", "DQ", "H5"]) in with_faces, with_faces
    prof.faces = None
    without = seen(prof)
    assert not any(c[1] in "JQK" for _, cs in without for c in cs), without


def test_a_strip_is_a_number_cards_only_by_an_index_on_its_free_side() -> None:
    """A fan's lower card shows its corner index by its strip's free edge (away from the card
    above). An index 1 mm inside a strip on its near side is the neighbouring number card's,
    whose strip the walk took a few mm short (seed 9808: the H5's index inside the second DQ's
    strip dropped that DQ)."""
    from vision.faces import FaceMatch

    # a strip 22 mm wide, its width axis (away from the card above) along -y
    m = FaceMatch("DQ", 0.5, (200.0, 330.0), 270.0, strip=(200.0, 344.0, 0.0, -1.0, 11.0, 48.0))
    assert m.shows_index((200.0, 336.0))  # 8 mm out from the middle, by its free edge
    assert m.shows_index((215.0, 344.0 - 12.0))  # slack of 2 mm past the edge, off-centre
    assert not m.shows_index((200.0, 353.0))  # 9 mm in on the near side: the neighbour's
    assert not m.shows_index((200.0, 320.0))  # beyond the strip
    assert not m.shows_index((260.0, 340.0))  # beside the card
    assert not FaceMatch("DQ", 0.9, (200.0, 330.0), 270.0).shows_index((200.0, 330.0))


def test_a_face_or_strip_covers_only_where_it_lies() -> None:
    """Where a face found whole or a strip is the card in view (``CourtFaces.find`` keeps, of
    two cards found at one place, the surer)."""
    from vision.faces import FaceMatch

    whole = FaceMatch("HQ", 0.9, (100.0, 100.0), 0.0)  # upright: 63 wide along x, 88 along y
    assert whole.covers((130.0, 140.0), (63.0, 88.0))
    assert not whole.covers((135.0, 100.0), (63.0, 88.0))
    turned = FaceMatch("HQ", 0.9, (100.0, 100.0), 90.0)  # lying on its side
    assert turned.covers((140.0, 130.0), (63.0, 88.0))
    assert not turned.covers((130.0, 140.0), (63.0, 88.0))
    strip = FaceMatch("CQ", 0.7, (0.0, 0.0), 0.0, strip=(50.0, 50.0, 1.0, 0.0, 6.0, 44.0))
    assert strip.covers((55.0, 90.0), (63.0, 88.0))
    assert not strip.covers((57.0, 50.0), (63.0, 88.0))


def test_an_unsure_strip_is_a_court_card_s_only_on_a_figure_s_ground(courts) -> None:
    """guyenne-classic 49223: HK's strip under a fan, which no face fitted surely, lay before a
    9's index and was passed over as the 9's strip. A strip is a number card's only when it is
    whiter than the face laid there (``STRIP_GROUND_GAP``): the king's own edge is a figure's
    ground, a number card's edge white card with a pip or two."""
    _, shots = courts
    faces = enrolled(shots[21])
    pic = faces.pictures["HK"].astype(np.float32)
    h, w = pic.shape[:2]
    view = np.full((h + 80, w + 160, 3), (40.0, 110.0, 40.0), np.float32)  # felt
    x0, y0 = 40, 40
    # a white card beside it: the view's white
    view[y0 : y0 + h, x0 + w + 10 : x0 + w + 10 + 60] = 245.0
    view[y0 : y0 + h, x0 : x0 + w] = pic
    mid = np.array([x0 + w / 2, y0 + h / 2])
    ys = np.arange(y0 + 0.1 * h, y0 + 0.9 * h)
    strip = np.stack(np.meshgrid(np.arange(x0 + 1.0, x0 + 10.0), ys), axis=-1)  # (H, T, 2)
    assert faces._court_ground(view, strip, "HK", strip - mid, 0.0, w, h)
    # the same place on a number card: white, a pip
    number = view.copy()
    number[y0 : y0 + h, x0 : x0 + w] = 245.0
    number[y0 + h // 3 : y0 + h // 3 + 8, x0 + 3 : x0 + 9] = (30.0, 30.0, 200.0)
    assert not faces._court_ground(number, strip, "HK", strip - mid, 0.0, w, h)
