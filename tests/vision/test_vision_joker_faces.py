"""Jokers with no corner index (issue 44), read by their whole face (vision/faces.py): the
renderer's ``proc-serif-picjokers`` deck prints each joker as one jester picture, the small one
in black ink, the big one in colour, the same drawing. They are enrolled from the jokers frame by
their faces (told apart by colour), and a game read with perfect corner labels (the renderer's
own, where the design prints an index) and the jokers by face reads every joker play."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from engine.cards import parse_cards
from engine.observations import Observation
from engine.profiles import load_profile
from vision.faces import (
    FACE_PX_PER_MM,
    JOKERS,
    TWIN_GREY,
    CourtFaces,
    FaceError,
    FaceMatch,
    _alike,
    colourful,
    jokers_from_frame,
    table_view,
)
from vision.synth.decks import NO_INDEX
from vision.table import Calibration, calibrate

DECK = "proc-serif-picjokers"
pytest.importorskip("PIL")


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[Path, str]]]:
    """The deck rendered, and its enrolment frames filmed on a table of their own."""
    from vision.synth.decks import DeckUnavailable, ensure_deck
    from vision.synth.video import render_enrolment

    root = tmp_path_factory.mktemp("jokers")
    try:
        ensure_deck(DECK, root / "decks")
    except DeckUnavailable as exc:
        pytest.skip(str(exc))
    shots = render_enrolment(root / "enrol", seed=31, deck=DECK, decks_dir=root / "decks")
    return root, shots


def jokers_frame(shots: list[tuple[Path, str]]) -> tuple[Path, np.ndarray]:
    path = next(p for p, k in shots if k == "J")
    return path, cv2.imread(str(path))


def likeness(a: np.ndarray, b: np.ndarray) -> float:
    b = cv2.resize(b, (a.shape[1], a.shape[0]), interpolation=cv2.INTER_AREA)
    return float(cv2.matchTemplate(a, b, cv2.TM_CCOEFF_NORMED).max())


def test_the_picture_joker_deck_prints_no_joker_index(table) -> None:
    from vision.synth.decks import ensure_deck, known_decks

    root, _ = table
    deck = ensure_deck(DECK, root / "decks")
    assert DECK in known_decks() and NO_INDEX[DECK] == "BR"
    assert not deck.has_index("SB") and not deck.has_index("HR") and deck.has_index("SK")
    sb, hr = (deck.image(c)[:, :, :3] for c in JOKERS)
    # one drawing: alike in grey, told apart by colour alone
    grey = [cv2.cvtColor(x, cv2.COLOR_BGR2GRAY) > 200 for x in (sb, hr)]
    assert (grey[0] == grey[1]).mean() > 0.85
    assert colourful(hr) > colourful(sb) + 0.1
    # its other cards are proc-serif's (the same font and seed)
    meta = json.loads((deck.path / "deck.json").read_text())
    assert meta["jokers"] == "picture"


def test_the_jokers_frame_gives_each_joker_its_own_face(table) -> None:
    from vision.synth.decks import ensure_deck

    root, shots = table
    _, image = jokers_frame(shots)
    pics, size, how = jokers_from_frame(image, calibrate(image))
    assert sorted(pics) == ["HR", "SB"] and "colourful" in how
    assert 60 <= size[0] <= 68 and 85 <= size[1] <= 94
    deck = ensure_deck(DECK, root / "decks")
    for card, pic in pics.items():
        own = likeness(pic, deck.image(card)[:, :, :3])
        other = likeness(pic, deck.image("HR" if card == "SB" else "SB")[:, :, :3])
        assert own > other + 0.05, (card, own, other)


def test_jokers_alike_in_colour_are_told_by_where_they_lie(table) -> None:
    """A deck whose two jokers are alike in colour: the small one on the camera's left."""
    _, shots = table
    _, image = jokers_frame(shots)
    cal = calibrate(image)
    grey = cv2.cvtColor(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    pics, _, how = jokers_from_frame(grey, cal)
    assert "camera's left" in how
    # the renderer lays SB in S's zone, HR in E's (right of it as the camera sees them)
    colour, _, _ = jokers_from_frame(image, cal)
    cols = [cv2.cvtColor(colour[c], cv2.COLOR_BGR2GRAY) for c in JOKERS]
    for card, pic in pics.items():
        g = cv2.cvtColor(pic, cv2.COLOR_BGR2GRAY)
        assert likeness(g, cols[JOKERS.index(card)]) >= likeness(g, cols[1 - JOKERS.index(card)])


def test_a_jokers_frame_without_two_cards_says_what_to_lay(table) -> None:
    _, shots = table
    _, image = jokers_frame(shots)
    cal = calibrate(image)
    g = cal.geometry
    bare = image.copy()
    # one joker painted over with the felt beside it
    pics, _, _ = jokers_from_frame(image, cal)
    view = table_view(image, cal, (0.0, 0.0, g.width_mm, g.height_mm), 1.0)
    felt = np.median(view.reshape(-1, 3), axis=0)
    x, y = cal.to_image([cal.zones["S"].mean(axis=0)])[0]
    cv2.circle(bare, (int(x), int(y)), 70, tuple(int(v) for v in felt), -1)
    with pytest.raises(FaceError, match=r"found 1 card where the small and the big joker"):
        jokers_from_frame(bare, cal)


def test_a_black_picture_is_looked_for_by_its_dark_ink(table) -> None:
    _, shots = table
    _, image = jokers_frame(shots)
    pics, size, _ = jokers_from_frame(image, calibrate(image))
    faces = CourtFaces(pics, size)
    assert faces.dark_ink and faces.ink_share() < 0.15
    colour_only = CourtFaces({"HR": pics["HR"]}, size)
    assert not colour_only.dark_ink and colour_only.ink_share() == 0.15


def test_jokers_of_one_drawing_are_colour_twins(table) -> None:
    """The two jokers, one drawing in two colours, are colour twins (their colours decide
    between them), either way up; a picture of another drawing is no twin."""
    root, shots = table
    _, image = jokers_frame(shots)
    pics, size, _ = jokers_from_frame(image, calibrate(image))
    assert CourtFaces(pics, size).twin_of("SB") == "HR"
    upside_down = {"SB": pics["SB"], "HR": np.ascontiguousarray(pics["HR"][::-1, ::-1])}
    assert CourtFaces(upside_down, size).twin_of("HR") == "SB"
    king = np.full_like(pics["SB"], 245)  # another drawing: a large letter
    cv2.putText(king, "K", (4, 36), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (20, 20, 20), 3)
    assert CourtFaces({"SB": pics["SB"], "SK": king}, size).twin_of("SB") is None


def test_one_drawing_in_black_and_in_light_colours_is_a_colour_twin() -> None:
    """A small joker drawn in black and a big one in yellow, red and blue: in grey the yellow is
    almost paper and the two look unlike (tigullio's jokers enrolled at 2304x1296 came to 0.74,
    under ``TWIN_GREY``, and a joker lying on a card was never seen); by their ink they are one
    drawing. A picture of another drawing stays no twin."""
    parts = [((8, 10), 6), ((24, 10), 6), ((16, 24), 9), ((16, 40), 5)]
    inks = [(0, 230, 255), (0, 0, 220), (0, 230, 255), (220, 60, 0)]  # BGR: yellow, red, blue
    black = np.full((48, 32, 3), 245, np.uint8)
    colour = black.copy()
    for ((x, y), r), ink in zip(parts, inks, strict=True):
        cv2.circle(black, (x, y), r, (25, 25, 25), -1)
        cv2.circle(colour, (x, y), r, ink, -1)
    grey = [cv2.cvtColor(p, cv2.COLOR_BGR2GRAY).astype(np.float32) for p in (black, colour)]
    assert _alike(*grey) < TWIN_GREY  # unlike in grey
    faces = CourtFaces({"SB": black, "HR": colour}, (63.0, 88.0))
    assert faces.twin_of("SB") == "HR" and faces.twin_of("HR") == "SB"
    other = np.full_like(black, 245)
    cv2.putText(other, "K", (4, 36), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (0, 0, 220), 3)
    assert CourtFaces({"SB": black, "SK": other}, (63.0, 88.0)).twin_of("SB") is None


def test_two_jokers_alike_at_one_spot_are_a_joker_with_a_doubt() -> None:
    """The small and the big joker fit a face about as well (under ``MARGIN``) and their
    colours cannot decide (no colour twins: tigullio's as enrolled at 2304x1296, game 48701, a
    big joker on a card never seen): a joker for sure, kept with the other as the referee's
    runner-up. Two court faces about alike, or a joker with a king as good, stay unsure."""
    faces = CourtFaces({}, (63.0, 88.0))
    at = (100.0, 200.0)

    def m(card: str, score: float) -> FaceMatch:
        return FaceMatch(card, score, at, 0.0)

    (kept,) = faces._sure([m("HR", 0.81), m("SB", 0.77)])
    assert kept.card == "HR" and [c for c, _ in kept.alts] == ["SB", "none"]
    assert 0 < dict(kept.alts)["SB"] < dict(kept.alts)["none"]
    assert faces._sure([m("SK", 0.81), m("SQ", 0.77)]) == []
    assert faces._sure([m("HR", 0.81), m("SB", 0.77), m("SK", 0.78)]) == []
    assert faces._sure([m("HR", 0.81), m("SB", 0.70)])[0].card == "HR"  # sure as it was


def ob(t: float, type_: str, seat: str | None = None, cards: str = "") -> Observation:
    return Observation(t, type_, seat=seat, cards=tuple(parse_cards(cards)) if cards else ())


SINGLES = [
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
PAIRS = [
    ob(0, "deal_start"),
    ob(3, "played", "S", "C4 C4"),
    ob(6, "played", "E", "SB SB"),
    ob(9, "played", "N", "HR HR"),
    ob(11, "pass", "W"),
    ob(13, "pass", "S"),
    ob(15, "pass", "E"),
    ob(17, "trick_cleared"),
]

BOMB = [
    ob(0, "deal_start"),
    ob(3, "played", "S", "C4 C4"),
    ob(6, "played", "E", "SB SB HR HR"),
    ob(8, "pass", "N"),
    ob(10, "pass", "W"),
    ob(12, "pass", "S"),
    ob(14, "trick_cleared"),
]


@pytest.mark.parametrize(
    ("name", "script"), [("singles", SINGLES), ("pairs", PAIRS), ("bomb", BOMB)]
)
def test_index_less_jokers_with_perfect_labels_read_every_joker_play(
    table, tmp_path: Path, name: str, script: list[Observation]
) -> None:
    """The renderer's corner labels where the design prints an index (none on its jokers: a
    perfect corner detector finds nothing there), the jokers by their faces from the enrolment
    frame: the referee reads every play, jokers included (a pair's lower joker by the strip of
    it in view, told from its twin of another colour by the strip's colours: a joker bomb read
    HR HR on seeds 7-9 before). Without the faces no joker is seen at all."""
    from engine.deal import effective_events
    from engine.referee import Referee
    from kiosk.replay import replay
    from vision.pipeline import OracleDetector
    from vision.synth.video import render_game

    root, shots = table
    _, image = jokers_frame(shots)
    pics, size, _ = jokers_from_frame(image, calibrate(image))

    class Perfect(OracleDetector):
        """The renderer's labels, but none where the design prints no index."""

        def __init__(self, path: Path, faces: CourtFaces | None) -> None:
            super().__init__(path)
            self.deck = SimpleNamespace(faces=faces)
            for i, dets in self.frames.items():
                self.frames[i] = [d for d in dets if d.card[1:] not in NO_INDEX[DECK]]

    out = tmp_path / f"{name}.mp4"
    info = render_game(load_profile("standard"), seed=5, deals=1, out=out, fps=5.0,
                       size=(960, 540), deck=DECK, decks_dir=root / "decks",
                       script=script)  # fmt: skip
    ref = Referee(load_profile("standard"))
    ref.feed_all(info.observations)

    def plays(events: list[object]) -> list[tuple[str, list[str]]]:
        return [
            (e.data["seat"], sorted(e.data["cards"]))  # type: ignore[attr-defined]
            for e in events
            if e.type == "play"  # type: ignore[attr-defined]
        ]

    truth = plays(ref.events)
    assert sum(c in ("SB", "HR") for _, cs in truth for c in cs) >= 3
    got = replay(out, profile="standard", detector=Perfect(Path(f"{out}.oracle.jsonl.gz"),
                                                           CourtFaces(pics, size)))  # fmt: skip
    assert plays(effective_events(got.events)) == truth
    blind = replay(out, profile="standard", detector=Perfect(Path(f"{out}.oracle.jsonl.gz"), None))
    seen = [c for o in blind.observations if o.type == "played" for c in o.cards]
    assert not any(c.is_joker for c in seen), seen


def test_the_face_tells_the_small_joker_from_the_big_one(table, tmp_path: Path) -> None:
    """In a zone view of a rendered game, each single joker is found as itself, surely: its
    own face fits better than the other joker's by more than the search's margin."""
    from vision.faces import MARGIN
    from vision.synth.video import render_game

    root, shots = table
    _, image = jokers_frame(shots)
    pics, size, _ = jokers_from_frame(image, calibrate(image))
    faces = CourtFaces(pics, size)
    out = tmp_path / "two.mp4"
    info = render_game(load_profile("standard"), seed=7, deals=1, out=out, fps=5.0,
                       size=(960, 540), deck=DECK, decks_dir=root / "decks",
                       script=SINGLES[:8])  # fmt: skip
    cal = Calibration.load(Path(f"{out}.calibration.json"))
    cap = cv2.VideoCapture(str(out))
    g = cal.geometry
    try:
        for o in info.observations:
            if o.type != "played" or not o.cards[0].is_joker:
                continue
            cap.set(cv2.CAP_PROP_POS_FRAMES, int(round((o.t + 0.6) * info.fps)))
            ok, frame = cap.read()
            assert ok
            poly = cal.zones[o.seat]
            x0, y0 = np.maximum(poly.min(0) - 45, 0.0)
            x1, y1 = np.minimum(poly.max(0) + 45, (g.width_mm, g.height_mm))
            view = table_view(frame, cal, (x0, y0, x1, y1), FACE_PX_PER_MM)
            found = faces.find(view, (float(x0), float(y0)))
            assert [m.card for m in found] == [str(o.cards[0])], (o, found)
            rival = dict(found[0].alts).get("SB" if str(o.cards[0]) == "HR" else "HR")
            assert rival is None or rival / 20.0 >= MARGIN
    finally:
        cap.release()


def enrol_args(shots: list[tuple[Path, str]], out: Path) -> list[str]:
    from vision.enrol import SHOT_KINDS

    args = ["vision", "enrol", "--out", str(out)]
    for path, kind in shots:
        args += [f"--{SHOT_KINDS[kind]}", str(path)]
    return args


def test_enrolment_reads_index_less_jokers_by_their_faces(
    table, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`guandan vision enrol` refused such a jokers frame ("no card corner found"); now the
    two jokers are cut from it as pictures and kept in the profile (and load back), and what
    corners the frame gave (guesses on the pictures) are no joker prototypes."""
    from kiosk.cli import main
    from vision.detector import DEFAULT_MODEL
    from vision.enrol import DeckProfile

    if not DEFAULT_MODEL.exists():
        pytest.skip(f"{DEFAULT_MODEL} missing")
    _, shots = table
    out = tmp_path / "deck.json"
    assert main(enrol_args(shots, out)) == 0
    said = capsys.readouterr()
    got = json.loads(said.out)
    assert got["faces"] == ["HR", "SB"] and got["missing"] == [], got
    assert "SB and HR read by their faces (HR the colourful one" in said.err
    assert "the jokers print no corner index; read by their face: HR SB" in said.err
    back = DeckProfile.load(out)
    assert back.faces is not None and sorted(back.faces.pictures) == ["HR", "SB"]
    assert "SB" not in back.cards and "HR" not in back.cards and len(back.cards) == 52
    assert 60 <= back.faces.card_mm[0] <= 68


def test_a_bad_jokers_frame_is_named_and_nothing_is_written(
    table, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A jokers frame with one joker only (the other off the table): the error names the frame
    (its file) and the cards, and no profile is left for --deck."""
    from kiosk.cli import main
    from vision.detector import DEFAULT_MODEL

    if not DEFAULT_MODEL.exists():
        pytest.skip(f"{DEFAULT_MODEL} missing")
    _, shots = table
    path, image = jokers_frame(shots)
    cal = calibrate(image)
    g = cal.geometry
    view = table_view(image, cal, (0.0, 0.0, g.width_mm, g.height_mm), 1.0)
    felt = tuple(int(v) for v in np.median(view.reshape(-1, 3), axis=0))
    one = image.copy()
    x, y = cal.to_image([cal.zones["S"].mean(axis=0)])[0]
    cv2.circle(one, (int(x), int(y)), 70, felt, -1)  # the small joker taken away
    bad = tmp_path / "one-joker.png"
    cv2.imwrite(str(bad), one)
    out = tmp_path / "deck.json"
    args = enrol_args([(bad if p == path else p, k) for p, k in shots], out)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"frame 5 (jokers, {bad}): no corner index of the jokers read, and found 1 card" in err
    assert "the small and the big joker (SB, HR)" in err
    assert not out.exists() and not list(tmp_path.glob(".deck.json.*"))


@pytest.mark.parametrize("offset_mm", [13.0, 17.0, 21.0])
def test_a_stacked_jokers_strip_is_found_whatever_its_width(table, offset_mm: float) -> None:
    """Two small jokers stacked, the lower one showing a strip of ``offset_mm`` beside the one
    on top (drawn at 8 px/mm and brought down to the search's scale, so the strip's far edge
    blurs as a camera's does): both are found, the lower one surely by its strip. The widths
    tried were 4 mm apart and ended where the table test did, 1-2 mm short of a blurred edge:
    game 48015's (tigullio) stacked SB SB, its lower joker's strip 17 mm wide, fitted 0.16 at
    14 mm and counted no card."""
    root, shots = table
    _, image = jokers_frame(shots)
    pics, size, _ = jokers_from_frame(image, calibrate(image))
    faces = CourtFaces(pics, size)
    up = 16  # drawing scale over the search's
    scale = FACE_PX_PER_MM * up
    w, h = (int(round(v * scale)) for v in size)
    card = cv2.resize(pics["SB"], (w, h), interpolation=cv2.INTER_CUBIC)
    canvas = np.empty((int(200 * scale), int(200 * scale), 3), np.uint8)
    canvas[:] = (40, 110, 45)  # a green felt
    x0, y0 = int(60 * scale), int(50 * scale)
    dx = int(round(offset_mm * scale))
    canvas[y0 : y0 + h, x0 + dx : x0 + dx + w] = card  # the lower joker
    canvas[y0 : y0 + h, x0 : x0 + w] = card  # the joker on top
    view = cv2.resize(canvas, None, fx=1 / up, fy=1 / up, interpolation=cv2.INTER_AREA)
    found = faces.find(view)
    assert [(m.card, m.strip is None, m.maybe) for m in found] == [
        ("SB", True, False),
        ("SB", False, False),
    ], found
    lower = found[1]
    want_x = 60 + offset_mm + size[0] / 2  # its middle, mm from the view's left
    assert abs(lower.centre_mm[0] - want_x) <= 2.5, (lower.centre_mm, want_x)
