"""Tracker and interpreter on synthetic detections from known layouts."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import parse_card
from engine.observations import Observation
from tests.track.helpers import Det, calibration, detections, fan, fan_hidden
from vision.track import MAYBE, NEAR_SECOND_COST, Change, Interpreter, Tracker

S_PLAY = (450.0, 700.0)
N_PLAY = (450.0, 200.0)


def feed(tracker: Tracker, frames: list[list], t0: float = 0.0, **kw) -> list[Change]:
    out: list[Change] = []
    for k, dets in enumerate(frames):
        out += tracker.update(t0 + k * 0.1, dets, **kw)
    return out


def test_two_corners_of_one_card_count_once() -> None:
    tr = Tracker(calibration())
    cards = tr.cards_in(detections([("SA", *S_PLAY, 0.3)]))
    assert [(c.card, c.region, c.corners) for c in cards] == [("SA", "S", 2)]


def test_identical_cards_of_two_decks_count_twice() -> None:
    tr = Tracker(calibration())
    layout = fan(["H5", "H5", "C9"], *S_PLAY)
    seen = tr.cards_in(detections(layout, hide=fan_hidden(0, 3)))
    assert Counter(c.card for c in seen) == Counter({"H5": 2, "C9": 1})
    # the same pair far apart in two zones: still two
    apart = [("H5", *S_PLAY, 0.0), ("H5", *N_PLAY, 3.1)]
    assert Counter(c.region for c in tr.cards_in(detections(apart))) == {"S": 1, "N": 1}


def test_double_detection_of_one_corner_is_merged() -> None:
    tr = Tracker(calibration())
    dets = detections([("DK", *S_PLAY, 0.0)])
    dets.append(type(dets[0])("DK", tuple(v + 1.5 for v in dets[0].box)))
    assert len(tr.cards_in(dets)) == 1


def test_double_boxes_of_one_corner_seven_mm_apart_are_one_card() -> None:
    """The detector's passes can box one corner twice a few mm apart (6.4 mm for a joker's
    corner on seed 9406, which then counted as two jokers); up to ``same_mm`` (8 mm) they are
    one corner, while a fan's indices (10-30 mm apart) stay separate cards."""
    from dataclasses import replace

    tr = Tracker(calibration())
    det = detections([("DK", *S_PLAY, 0.0)])[0]
    at = tr._centres_mm([det])[0]
    for px in np.arange(0.5, 40.0, 0.5):
        x1, y1, x2, y2 = det.box
        dup = replace(det, box=(x1 + px, y1, x2 + px, y2))
        gap = float(np.hypot(*(tr._centres_mm([dup])[0] - at)))
        if gap > 7.0:
            break
    assert 7.0 < gap < 8.0
    assert [(c.card, c.corners) for c in tr.cards_in([det, dup])] == [("DK", 1)]
    # two copies fanned tightly, 10 mm apart: two cards
    for px in np.arange(0.5, 60.0, 0.5):
        far = replace(det, box=(x1 + px, y1, x2 + px, y2))
        if float(np.hypot(*(tr._centres_mm([far])[0] - at))) > 10.0:
            break
    assert [(c.card, c.corners) for c in tr.cards_in([det, far])] == [("DK", 1), ("DK", 1)]


def test_commit_needs_stable_frames_and_ignores_a_flicker() -> None:
    tr = Tracker(calibration(), stable_frames=2, window=2)
    play = detections(fan(["S3", "S4", "S5"], *S_PLAY), hide=fan_hidden(0, 3))
    ch = feed(tr, [play])
    assert ch == []  # seen once: not yet
    ch = feed(tr, [play], t0=0.1)
    assert [(c.region, c.added) for c in ch] == [("S", ("S3", "S4", "S5"))]
    # one frame where the detector misses a card: nothing is removed
    missing = [d for d in play if d.card != "S4"]
    assert feed(tr, [missing, play, play, missing, play], t0=1.0) == []
    assert tr.contents()["S"] == ("S3", "S4", "S5")


def test_jitter_does_not_change_counts() -> None:
    tr = Tracker(calibration())
    rng = np.random.default_rng(4)
    layout = fan(["CQ", "CQ", "DJ", "HJ"], *N_PLAY)
    frames = [detections(layout, hide=fan_hidden(0, 4), jitter=2.5, rng=rng) for _ in range(8)]
    ch = feed(tr, frames)
    assert len(ch) == 1 and ch[0].added == ("CQ", "CQ", "DJ", "HJ")


def test_no_commit_while_a_hand_is_over_the_zone() -> None:
    tr = Tracker(calibration())
    feed(tr, [detections(fan(["S3", "S4"], *S_PLAY))] * 3)
    # a hand covers one card for many frames, but the zone is busy: nothing committed
    covered = detections(fan(["S3", "S4"], *S_PLAY), hide={(0, 0), (0, 1)})
    assert feed(tr, [covered] * 6, t0=1.0, busy={"S"}) == []
    # the hand leaves having added a card
    after = detections(fan(["S3", "S4", "D8"], *S_PLAY))
    ch = feed(tr, [after] * 2, t0=2.0)
    assert [c.added for c in ch] == [("D8",)]


def test_only_the_detected_zones_are_updated() -> None:
    tr = Tracker(calibration())
    both = detections([("SA", *S_PLAY, 0.0), ("HA", *N_PLAY, 0.0)])
    feed(tr, [both] * 2)
    # a crop around S only: N keeps its cards although nothing of N was detected
    only_s = detections([("SA", *S_PLAY, 0.0)])
    assert feed(tr, [only_s] * 3, t0=1.0, zones={"S"}) == []
    assert tr.contents()["N"] == ("HA",)


def test_regions_band_centre_outside() -> None:
    tr = Tracker(calibration())
    assert tr.region_at(450, 860) == "S.band"
    assert tr.region_at(450, 700) == "S"
    assert tr.region_at(450, 360) == "centre.N"
    assert tr.region_at(560, 450) == "centre.E"
    assert tr.region_at(-50, 450) == "outside"


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["SA", "H2", "C7", "DT", "SB", "HR"]),
            st.integers(0, 3),
            st.floats(-60, 60),
            st.floats(-0.4, 0.4),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_counts_match_layouts(items: list[tuple[str, int, float, float]]) -> None:
    """Cards spread over the four play zones (one per slot, not overlapping): counts exact."""
    spots = {0: S_PLAY, 1: N_PLAY, 2: (200.0, 450.0), 3: (700.0, 450.0)}
    layout = []
    used: Counter[tuple[int, int]] = Counter()
    for card, zone, dx, a in items:
        slot = used[(zone, 0)]
        used[(zone, 0)] += 1
        x, y = spots[zone]
        # slots 75 mm apart across the zone so cards of one zone do not overlap
        off = (slot - 1.5) * 75.0 + dx * 0.1
        if zone in (0, 1):
            layout.append((card, x + off, y, a))
        else:
            layout.append((card, x, y + off, a))
    if max(used.values()) > 4:
        return
    tr = Tracker(calibration())
    ch = feed(tr, [detections(layout)] * 2)
    got = Counter((c.region, a) for c in ch for a in c.added)
    names = {0: "S", 1: "N", 2: "W", 3: "E"}
    want = Counter((names[z], c) for c, z, _, _ in items)
    assert got == want


# ------------------------------------------------------------------------------ interpreter
def ch(t: float, region: str, added=(), removed=(), contents=()) -> list[Change]:
    return [Change(t, region, tuple(added), tuple(removed), tuple(contents))]


def kinds(obs: list[Observation]) -> list[tuple]:
    return [(o.type, o.seat, tuple(str(c) for c in o.cards), o.to) for o in obs]


def test_interpreter_plays_and_trick_cleared() -> None:
    it = Interpreter()
    out = it.changes(1.0, ch(1.0, "S", ["S3"], [], ["S3"]))
    out += it.changes(2.0, ch(2.0, "E", ["S9"], [], ["S9"]))
    out += it.changes(3.0, ch(3.0, "S", [], ["S3"], []))
    assert kinds(out)[-1][0] == "played"  # E still has cards: no clear yet
    out += it.changes(3.1, ch(3.1, "E", [], ["S9"], []))
    assert kinds(out) == [
        ("played", "S", ("S3",), None),
        ("played", "E", ("S9",), None),
        ("trick_cleared", None, (), None),
    ]


def test_interpreter_exposed_in_band_and_outside() -> None:
    it = Interpreter()
    out = it.changes(1.0, ch(1.0, "W.band", ["DQ"], [], ["DQ"]))
    out += it.changes(2.0, ch(2.0, "outside", ["C4"], [], ["C4"]))
    assert kinds(out) == [("exposed", "W", ("DQ",), None), ("exposed", None, ("C4",), None)]


def test_interpreter_tribute_return_and_shown() -> None:
    it = Interpreter(transfer_wait_s=1.5)
    # N lays SA on its side of the centre, E pulls it across: a tribute N -> E
    out = it.changes(1.0, ch(1.0, "centre.N", ["SA"], [], ["SA"]))
    assert out == []
    out = it.changes(3.0, ch(3.0, "centre.N", [], ["SA"]) + ch(3.0, "centre.E", ["SA"]))
    assert kinds(out) == [("tribute", "N", ("SA",), "E")]
    assert out[0].t == 1.0  # when it was laid down
    it.changes(4.0, ch(4.0, "centre.E", [], ["SA"]))
    # E gives a card back to N: a return
    it.changes(6.0, ch(6.0, "centre.E", ["C3"], [], ["C3"]))
    out = it.changes(7.0, ch(7.0, "centre.E", [], ["C3"]) + ch(7.0, "centre.N", ["C3"]))
    assert kinds(out) == [("tribute_return", "E", ("C3",), "N")]
    # W shows a big joker and takes it back: shown (once the wait is over)
    it.changes(9.0, ch(9.0, "centre.W", ["HR"], [], ["HR"]))
    assert it.changes(10.0, ch(10.0, "centre.W", [], ["HR"])) == []
    assert kinds(it.flush(11.6)) == [("shown", "W", ("HR",), None)]
    # S lays a plain card in the centre and takes it back: exposed
    it.changes(12.0, ch(12.0, "centre.S", ["D4"], [], ["D4"]))
    it.changes(13.0, ch(13.0, "centre.S", [], ["D4"]))
    assert kinds(it.flush(14.6)) == [("exposed", "S", ("D4",), None)]


def test_interpreter_lamps_deal_start_leader_and_pass() -> None:
    it = Interpreter()
    off = dict.fromkeys(["N", "E", "S", "W", "deal"])
    assert it.lamps(0.0, off) == []
    lit = dict(off, deal="deal", E="lead")
    assert it.lamps(1.0, lit) == []  # emitted when the deal lamp goes off (level card seen)
    out = it.lamps(2.5, off)
    assert [(o.type, o.first_leader, o.t) for o in out] == [("deal_start", "E", 1.0)]
    out = it.lamps(3.0, dict(off, S="pass"))
    out += it.lamps(3.1, dict(off, S="pass"))  # still lit: one pass
    assert kinds(out) == [("pass", "S", (), None)]


def test_interpreter_level_card_during_deal_lamp() -> None:
    it = Interpreter()
    off = dict.fromkeys(["N", "E", "S", "W", "deal"])
    it.lamps(1.0, dict(off, deal="deal"))
    it.changes(1.5, ch(1.5, "centre.N", ["S7"], [], ["S7"]))
    (obs,) = it.lamps(2.6, off)
    assert obs.level == "7"
    assert it.changes(4.0, ch(4.0, "centre.N", [], ["S7"])) == []


def test_bad_tracker_options() -> None:
    with pytest.raises(ValueError, match="stable_frames"):
        Tracker(calibration(), stable_frames=0)


def test_pairing_prefers_fewest_cards() -> None:
    """Four corners of two copies: pairing the closest-to-ideal pair first would leave two
    singles (three cards); the best pairing finds two cards."""
    from vision.track import _best_pairs

    ok = {(0, 1): 0.5, (0, 2): 3.0, (1, 3): 4.0}
    assert sorted(_best_pairs(4, ok)) == [(0, 2), (1, 3)]
    assert _best_pairs(3, {}) == []


def test_runner_up_readings_reach_the_played_observation() -> None:
    """The detector's runner-ups of an added card travel as the observation's ``doubts``; two
    corners of one card average their costs (a runner-up one corner lacks counts 5 there)."""
    from dataclasses import replace

    from engine.cards import parse_card

    tr = Tracker(calibration())
    sure = detections([("S9", *S_PLAY, 0.0)])
    first = detections([("SA", *N_PLAY, 0.0)])  # two corners
    unsure = [
        replace(first[0], alts=(("S4", 1.0), ("none", 4.0))),
        replace(first[1], alts=(("S4", 2.0),)),
    ]
    changes = feed(tr, [sure + unsure] * 2)
    by_region = {c.region: c for c in changes}
    assert by_region["S"].doubts == ()
    assert by_region["N"].doubts == (("SA", (("S4", 1.5), ("none", 4.5))),)
    obs = Interpreter().changes(0.1, changes)
    played = {o.seat: o for o in obs if o.type == "played"}
    assert played["S"].doubts == ()
    assert played["N"].doubts == ((parse_card("SA"), ((parse_card("S4"), 1.5), (None, 4.5))),)
    assert "doubts" in played["N"].to_json()


def test_an_added_card_read_like_one_that_left_may_be_no_card() -> None:
    """New cards laid over a trick's old ones cover them; a covered corner misread (a D3 under
    a new full house read as H3, seed 9609) appears as an added card while the D3 goes. An added
    card whose runner-up is a card that left the region in the same change gets "no card" as a
    runner-up (for the referee, when the play as read is illegal), at ``GONE_COST`` at most."""
    from dataclasses import replace

    tr = Tracker(calibration())
    tr.seed({"S": ["D3"]})
    x, y = S_PLAY
    new = detections([("H5", x + 40, y, 0.0)])
    misread = [replace(d, alts=(("D3", 3.4), ("C3", 4.2))) for d in detections([("H3", x, y, 0.0)])]
    ch = feed(tr, [new + misread] * 3)
    assert [(c.added, c.removed) for c in ch] == [(("H3", "H5"), ("D3",))]
    assert ch[0].doubts == (("H3", (("none", 1.5), ("D3", 3.4), ("C3", 4.2))),)
    # every added card with that runner-up gets it (which one is the old card, the referee
    # tells by what makes a legal play), at its own cost when that is lower
    tr.seed({"S": ["D3"]})
    also = [replace(d, alts=(("D3", 1.2),)) for d in new]
    ch = feed(tr, [also + misread] * 3, t0=5.0)
    assert ch[0].doubts == (
        ("H3", (("none", 1.5), ("D3", 3.4), ("C3", 4.2))),
        ("H5", (("D3", 1.2), ("none", 1.2))),
    )
    # a card that already had "no card" as a dear runner-up (its corner's own, 4.4) gets the
    # cheaper one: plastic's C5 under a new SJ, its other corner read S5 with C5 at 0.07 and
    # "none" at 4.4, was played as S5 SJ (seed 9402, the suit pictures matched finely)
    tr.seed({"S": ["D3"]})
    h3 = detections([("H3", x, y, 0.0)])
    doubly = [replace(d, alts=(("D3", 0.07), ("none", 4.4))) for d in h3]
    ch = feed(tr, [new + doubly] * 3, t0=10.0)
    assert ch[0].doubts == (("H3", (("D3", 0.07), ("none", 0.07))),)
    # ... and keeps its own where that is cheaper
    tr.seed({"S": ["D3"]})
    cheap = [replace(d, alts=(("D3", 3.4), ("none", 0.9))) for d in h3]
    ch = feed(tr, [new + cheap] * 3, t0=15.0)
    assert ch[0].doubts == (("H3", (("none", 0.9), ("D3", 3.4))),)
    # nothing left the region: no such runner-up
    tr2 = Tracker(calibration())
    ch2 = feed(tr2, [new + misread] * 3)
    assert ch2[0].doubts == (("H3", (("D3", 3.4), ("C3", 4.2))),)


@pytest.mark.parametrize("angle", [0.0, 0.7, -2.2])
def test_a_corner_inside_a_whole_card_may_be_no_card(angle: float) -> None:
    """A one-corner detection deep inside a card seen by both corners (a corner read in a
    joker's picture) gets "none" as a runner-up; the visible corners of a fan do not."""
    from vision.track import INSIDE_COST

    tr = Tracker(calibration())
    layout = fan(["H5", "C9", "D9"], *S_PLAY)
    fanned = {c.card: c for c in tr.cards_in(detections(layout, hide=fan_hidden(0, 3)))}
    assert [fanned[k].corners for k in ("H5", "C9", "D9")] == [1, 1, 2]
    assert all(dict(c.alts).get("none") is None for c in fanned.values())
    x, y = N_PLAY
    joker = detections([("HR", x, y, angle)])

    def corner_at(card: str, px: float, py: float) -> list:
        (u, v) = calibration().to_image([(px, py)])[0]
        return [type(joker[0])(card, (u - 5, v - 5, u + 5, v + 5))]

    art = corner_at("CA", x + 8.0, y - 10.0)  # one "corner" inside the joker
    seen = {c.card: c for c in tr.cards_in(joker + art)}
    assert seen["HR"].corners == 2 and dict(seen["HR"].alts).get("none") is None
    assert seen["CA"].corners == 1 and dict(seen["CA"].alts)["none"] == INSIDE_COST
    # the same corner beside the card, not on it: a card of its own
    beside = corner_at("CA", x + 70.0 * np.cos(angle), y + 70.0 * np.sin(angle))
    seen = {c.card: c for c in tr.cards_in(joker + beside)}
    assert dict(seen["CA"].alts).get("none") is None


@pytest.mark.parametrize("angle", [0.0, 0.7, -2.2])
def test_a_jokers_third_index_where_its_other_corners_are_may_be_no_card(angle: float) -> None:
    """Plastic's jokers print an index in all four corners. Two of them seen as one card (here
    the diagonal a two-index card never shows) and a third, of the same label, where the card's
    other two corners lie: its own print, "no card" at ``INSIDE_COST`` (seed 9507: N's SB seen
    so in two looks of four, and played as SB SB, a pair on a single). A second joker fanned
    beside it is no such corner; nor is another label there."""
    from vision.track import INSIDE_COST

    tr = Tracker(calibration())
    x, y = N_PLAY
    c, s = np.cos(angle), np.sin(angle)

    def at(card: str, dx: float, dy: float) -> Det:
        (u, v) = calibration().to_image([(x + c * dx - s * dy, y + s * dx + c * dy)])[0]
        return Det(card, (u - 6, v - 6, u + 6, v + 6))

    pair = [at("HR", 25.5, -32.0), at("HR", -25.5, 32.0)]  # the card's other diagonal
    seen = tr.cards_in([*pair, at("HR", -25.5, -32.0)])
    assert sorted(k.corners for k in seen) == [1, 2]
    (one,) = [k for k in seen if k.corners == 1]
    assert dict(one.alts)["none"] == INSIDE_COST
    # a second joker fanned 20 mm to the side shows its index beside the first one's
    seen = tr.cards_in([*pair, at("HR", 25.5 + 20.0, -32.0)])
    (one,) = [k for k in seen if k.corners == 1]
    assert dict(one.alts).get("none") is None
    seen = tr.cards_in([*pair, at("SB", -25.5, -32.0)])
    (one,) = [k for k in seen if k.corners == 1]
    assert one.card == "SB" and dict(one.alts).get("none") is None


def test_a_change_with_no_hand_near_is_no_play() -> None:
    """Cards do not move by themselves: a zone read differently while no hand came near (a
    label flickering DA -> D4) is committed but is no ``played``; with a hand it is a play."""
    tr = Tracker(calibration())
    it = Interpreter()
    first = feed(tr, [detections([("DA", *S_PLAY, 0.0)])] * 2)
    assert [c.touched for c in first] == [True]  # the first look at a zone counts as touched
    assert [o.type for o in it.changes(0.1, first)] == ["played"]
    relabel = feed(tr, [detections([("D4", *S_PLAY, 0.0)])] * 2, t0=1.0)
    assert [(c.added, c.removed, c.touched) for c in relabel] == [(("D4",), ("DA",), False)]
    assert it.changes(1.1, relabel) == [] and it.rereads == relabel
    # a hand over the zone (no detection while it is there), then a card added: a play
    tr.touch({"S"})
    added = feed(tr, [detections([("D4", *S_PLAY, 0.0), ("C9", 450.0, 640.0, 0.0)])] * 2, t0=2.0)
    assert [(c.added, c.touched) for c in added] == [(("C9",), True)]
    assert [(o.type, o.seat) for o in it.changes(2.1, added)] == [("played", "S")]


def test_a_card_read_back_after_a_reading_with_no_hand_near_may_be_no_card() -> None:
    """E's H7 D7 lay fanned (seed 9902); with no hand near the zone was read D7 D7 (the H7 gone,
    a second D7 come): no play. When E laid S9 D9 over them, the H7 was read again and counted
    as added: H7 S9 D9, not a combo. A card that left its region with no hand near while other
    cards stayed, seen there again, gets "no card" among its runner-ups at ``FADED_COST``, so the
    referee may drop it; the region emptied (a trick cleared), it is forgotten. Read back on
    the very spot where the second D7 was read, it is that card read anew (``_read_anew``):
    a change of its own, and the play is S9 D9; here the new play nudged it 15 mm."""
    from vision.track import FADED_COST

    x, y = S_PLAY
    h7, d7 = ("H7", x, y, 0.0), ("D7", x + 40, y, 0.0)
    nines = [("S9", x, y - 60, 0.0), ("D9", x + 40, y - 60, 0.0)]
    for nudged in (False, True):
        tr = Tracker(calibration())
        first = feed(tr, [detections([h7, d7])] * 2)
        assert [c.added for c in first] == [("D7", "H7")]
        again = feed(tr, [detections([("D7", x, y, 0.0), d7])] * 2, t0=1.0)
        assert [(c.added, c.removed, c.touched) for c in again] == [(("D7",), ("H7",), False)]
        tr.touch({"S"})  # E's hand lays S9 D9
        back = ("H7", x + 12, y - 9, 0.0) if nudged else h7
        play = feed(tr, [detections([back, d7, *nines])] * 2, t0=2.0)
        if not nudged:
            assert [(c.added, c.removed) for c in play] == [(("H7",), ("D7",)), (("D9", "S9"), ())]
    assert [(c.added, c.removed, c.touched) for c in play] == [(("D9", "H7", "S9"), ("D7",), True)]
    assert dict(play[0].doubts)["H7"] == (("none", FADED_COST),)
    assert "D9" not in dict(play[0].doubts) and "S9" not in dict(play[0].doubts)
    # the region emptied (the trick cleared): a new H7 there is a card like any other
    tr.touch({"S"})
    assert [c.contents for c in feed(tr, [[]] * 2, t0=3.0)] == [()]
    tr.touch({"S"})
    (new,) = feed(tr, [detections([h7])] * 2, t0=4.0)
    assert new.added == ("H7",) and new.doubts == ()


def test_a_card_covered_by_its_seats_next_play_and_seen_again_may_be_no_card() -> None:
    """Plastic 48802 at 2304x1296 (2026-12-06): N's S4 lay in N's zone; N's next play covered
    it (the S4 left the zone under N's hand), and when a later play moved the pile it was seen
    again and counted with that play: S4 7 7, not a combo. In a seat's play zone a card that
    left under a hand while other cards stayed was covered (a trick's cards stay until it is
    cleared), so one seen there again gets "no card" at ``FADED_COST``; read back in another
    suit (C4, with S4 its runner-up), at that runner-up's cost. Outside the play zones (a
    seat's band: an exposed card taken back) a card lifted under a hand is gone."""
    from dataclasses import replace

    from vision.track import FADED_COST

    x, y = S_PLAY
    s4 = ("S4", x, y, 0.0)
    sevens = [("H7", x + 40, y - 60, 0.0), ("D7", x + 80, y - 60, 0.0)]
    nines = [("H9", x - 40, y + 40, 0.0), ("C9", x - 80, y + 40, 0.0)]
    for again, want in (
        (detections([s4]), FADED_COST),
        ([replace(d, card="C4", alts=(("S4", 0.4),)) for d in detections([s4])], 0.4),
    ):
        tr = Tracker(calibration())
        tr.touch({"S"})
        assert [c.added for c in feed(tr, [detections([s4])] * 2)] == [("S4",)]
        tr.touch({"S"})  # S lays H7 D7 over the S4: its corners covered
        (cover,) = feed(tr, [detections(sevens)] * 4, t0=1.0)
        assert (cover.added, cover.removed, cover.touched) == (("D7", "H7"), ("S4",), True)
        assert cover.doubts == ()
        tr.touch({"S"})  # S lays H9 C9; the pile moved, the four seen again
        (play,) = feed(tr, [again + detections(sevens + nines)] * 4, t0=2.0)
        four = "S4" if again[0].card == "S4" else "C4"
        assert play.added == tuple(sorted(("C9", "H9", four))) and play.touched
        assert dict(play.doubts)[four] == _with_none_at(again[0].alts, want)
        assert "C9" not in dict(play.doubts) and "H9" not in dict(play.doubts)
    # in S's band: the S4 lifted under a hand and laid there again is a card like any other
    tr = Tracker(calibration())
    band = [("S4", 400.0, 860.0, 0.0), ("H7", 500.0, 860.0, 0.0)]
    tr.touch({"S"})
    assert [c.region for c in feed(tr, [detections(band)] * 2)] == ["S.band"]
    tr.touch({"S"})
    assert [c.removed for c in feed(tr, [detections(band[1:])] * 4, t0=1.0)] == [("S4",)]
    tr.touch({"S"})
    (back,) = feed(tr, [detections(band)] * 4, t0=2.0)
    assert back.added == ("S4",) and back.doubts == ()


def _with_none_at(alts: tuple[tuple[str, float], ...], cost: float) -> tuple:
    return tuple(sorted({**dict(alts), "none": cost}.items(), key=lambda kv: (kv[1], kv[0])))


def test_a_card_found_soon_after_a_play_with_no_hand_near_amends_that_play() -> None:
    """A card added to a zone with no hand near, within ``late_s`` of the seat's play and with
    nothing taken away, is that play's card found late: a ``played`` that ``amends`` it. Later,
    or with a card gone, it stays a reading of the zone (``rereads``)."""
    tr = Tracker(calibration())
    it = Interpreter()
    first = feed(tr, [detections([("DA", *S_PLAY, 0.0)])] * 2)
    (play,) = it.changes(first[0].t, first)
    c9 = ("C9", 450.0, 640.0, 0.0)
    late = feed(tr, [detections([("DA", *S_PLAY, 0.0), c9])] * 3, t0=0.5)
    assert [(c.added, c.touched) for c in late] == [(("C9",), False)]
    (amend,) = it.changes(late[0].t, late)
    assert (amend.type, amend.seat, [str(c) for c in amend.cards]) == ("played", "S", ["C9"])
    assert amend.extra == {"amends": play.t} and it.late == late and it.rereads == []
    # long after the play: a reading of the zone, not part of the play
    h5 = ("H5", 450.0, 760.0, 0.0)
    long_after = feed(tr, [detections([("DA", *S_PLAY, 0.0), c9, h5])] * 2, t0=3.0)
    assert it.changes(long_after[0].t, long_after) == [] and it.rereads == long_after
    # soon after a play, but a card read anew (DA gone, D4 come): no amends
    tr, it = Tracker(calibration()), Interpreter()
    first = feed(tr, [detections([("DA", *S_PLAY, 0.0)])] * 2)
    it.changes(first[0].t, first)
    relabel = feed(tr, [detections([("D4", *S_PLAY, 0.0), c9])] * 3, t0=0.5)
    assert it.changes(relabel[0].t, relabel) == [] and it.rereads == relabel


def test_cards_read_anew_in_another_suit_are_no_play() -> None:
    """A zone change that only reads its cards in other suits (the same ranks, one for one) is
    no play, touched or not: a ``played`` with ``was`` (the earlier readings) for the referee.
    With another card added, the card read anew on its own spot is still no card of the play
    (``Tracker._read_anew``); read anew elsewhere, it is what it was before."""
    tr = Tracker(calibration())
    it = Interpreter()
    first = feed(tr, [detections([("S3", *S_PLAY, 0.0), ("C9", 450.0, 640.0, 0.0)])] * 2)
    it.changes(first[0].t, first)
    tr.touch(["S"])  # a hand passed over S's zone
    again = feed(tr, [detections([("C3", *S_PLAY, 0.0), ("C9", 450.0, 640.0, 0.0)])] * 3, t0=5.0)
    assert [(c.added, c.removed, c.touched) for c in again] == [(("C3",), ("S3",), True)]
    (obs,) = it.changes(again[0].t, again)
    assert (obs.type, obs.seat, [str(c) for c in obs.cards]) == ("played", "S", ["C3"])
    assert obs.extra == {"was": ["S3"]} and it.relabels == again and it.rereads == []
    # a new card beside the one read anew on its spot: the re-reading, then a play of the new
    tr.touch(["S"])
    more = feed(
        tr,
        [detections([("S3", *S_PLAY, 0.0), ("C9", 450.0, 640.0, 0.0), ("HK", 450.0, 760.0, 0.0)])]
        * 3,
        t0=9.0,
    )
    anew, play = it.changes(more[0].t, more)
    assert (anew.type, [str(c) for c in anew.cards], anew.extra) == (
        "played",
        ["S3"],
        {"was": ["C3"]},
    )
    assert play.type == "played" and [str(c) for c in play.cards] == ["HK"]
    assert "was" not in play.extra
    # the same rank read 40 mm from where the earlier card lay: a card of the play, as before
    tr.touch(["S"])
    moved = (S_PLAY[0] + 40.0, S_PLAY[1])
    off = feed(
        tr,
        [
            detections(
                [
                    ("C3", *moved, 0.0),
                    ("C9", 450.0, 640.0, 0.0),
                    ("HK", 450.0, 760.0, 0.0),
                    ("D5", 520.0, 760.0, 0.0),
                ]
            )
        ]
        * 3,
        t0=13.0,
    )
    (play,) = it.changes(off[0].t, off)
    assert sorted(str(c) for c in play.cards) == ["C3", "D5"] and "was" not in play.extra


def test_a_faint_corner_in_a_fans_row_may_be_a_card_of_the_play() -> None:
    """N's straight D8 D9 DT HJ CQ fanned, the HJ's index half covered by the CQ and scored under
    the floor: not counted, but offered with the play as a card that may lie there (its own
    reading first, dearer the fainter it is), which the referee adds only to make an illegal
    play legal (seed 9407). Away from the fan's row it is not."""
    from dataclasses import replace

    from vision.track import FAN_MAYBE_COST, MAYBE

    def straight(score: float, at: float = 0.0) -> list[Det]:
        dets = detections(fan(["D8", "D9", "DT", "HJ", "CQ"], *S_PLAY), hide=fan_hidden(0, 5))
        hj = next(i for i, d in enumerate(dets) if d.card == "HJ")
        box = dets[hj].box
        box = (box[0] + at, box[1], box[2] + at, box[3])
        dets[hj] = replace(dets[hj], box=box, score=score, alts=(("SJ", 1.5), ("none", 3.0)))
        return dets

    tr = Tracker(calibration())
    (play,) = feed(tr, [straight(0.2)] * 3)
    assert sorted(play.added) == ["CQ", "D8", "D9", "DT"]
    (maybe,) = [a for c, a in play.doubts if c == MAYBE]
    cost = FAN_MAYBE_COST + np.log(tr.min_score / 0.2)
    assert maybe[0] == ("HJ", pytest.approx(cost, abs=1e-3))
    assert maybe[1] == ("SJ", pytest.approx(cost + 1.5, abs=1e-3))
    (obs,) = Interpreter().changes(play.t, [play])
    assert (None, ((parse_card("HJ"), pytest.approx(cost, abs=1e-3)),)) == (
        obs.doubts[-1][0],
        obs.doubts[-1][1][:1],
    )
    # far from the fan's row (80 px off): no card that may lie there
    tr = Tracker(calibration())
    (play,) = feed(tr, [straight(0.2, at=80.0)] * 3)
    assert not [c for c, _ in play.doubts if c == MAYBE]


def test_a_misread_second_corner_may_be_no_card() -> None:
    """A card whose two corners are read differently (CJ and C3, C3's runner-up CJ) shows as
    two one-corner cards a card's diagonal apart: C3 gets "no card" at its CJ cost less the
    pairing bonus; without CJ among its runner-ups, or not at that distance, it does not."""
    from dataclasses import replace

    from vision.track import PAIR_BONUS

    tr = Tracker(calibration())
    tl, br = detections([("CJ", *S_PLAY, 0.3)])
    misread = replace(br, card="C3", alts=(("CJ", 0.9), ("C5", 2.0)))
    seen = {c.card: c for c in tr.cards_in([tl, misread])}
    assert seen["CJ"].corners == 1 and seen["C3"].corners == 1
    assert dict(seen["C3"].alts)["none"] == pytest.approx(0.9 - PAIR_BONUS)
    assert "none" not in dict(seen["CJ"].alts)
    other = replace(br, card="C3", alts=(("C5", 0.2),))
    assert "none" not in dict({c.card: c for c in tr.cards_in([tl, other])}["C3"].alts)
    # a fan's top-left corners: another card's label as runner-up, but 17 mm apart
    a, b = detections(fan(["C3", "CJ"], *S_PLAY), hide={(0, 1), (1, 1)})
    near = {c.card: c for c in tr.cards_in([replace(a, alts=(("CJ", 0.9),)), b])}
    assert "none" not in dict(near["C3"].alts)


def test_a_ghost_in_one_frame_is_no_card_but_two_frames_are() -> None:
    """A detection in one look of five is no card (nor a change); in two it is."""
    tr = Tracker(calibration())
    play = detections(fan(["S3", "S4"], *S_PLAY), hide=fan_hidden(0, 2))
    ghost = play + detections([("H9", 450.0, 640.0, 0.0)])[:1]
    assert [c.added for c in feed(tr, [play] * 3)] == [("S3", "S4")]
    assert feed(tr, [play, ghost, play, play, play, play, ghost, play, play], t0=1.0) == []
    assert tr.pending(["S"])  # something seen, not confirmed: keep looking there
    # seen in two looks of five: a card
    ch = feed(tr, [play, ghost, play, play, ghost, ghost], t0=2.0)
    assert [c.added for c in ch] == [("H9",)]


def test_a_corner_hovering_about_the_floor_is_kept_once_seen_strongly() -> None:
    """Camera noise moves a corner's score across the floor: once a label scored over
    ``min_score`` at a spot, later looks over ``keep_score`` there still count; a weak corner
    never seen strongly (or elsewhere) does not."""
    from dataclasses import replace

    tr = Tracker(calibration(), min_score=0.25, keep_score=0.12)
    strong = detections([("HR", *S_PLAY, 0.0)])[:1]
    weak = [replace(strong[0], score=0.18)]
    assert [c.card for c in tr.cards_in(weak)] == []  # cards_in alone keeps the floor
    ch = feed(tr, [strong, weak, weak, weak])
    assert [c.added for c in ch] == [("HR",)]
    # a weak corner of a label never seen strongly is ignored
    tr2 = Tracker(calibration(), min_score=0.25, keep_score=0.12)
    assert feed(tr2, [weak] * 4) == []
    # ... and so is a weak one far from where the label was seen (after the memory lapses too)
    far = [replace(detections([("HR", *N_PLAY, 0.0)])[0], score=0.18)]
    assert feed(tr2, [strong, far, far, far], t0=5.0) == []
    assert feed(tr2, [weak] * 3, t0=7.0) == []


def test_a_weak_joker_counts_only_with_both_corners() -> None:
    """A joker the corner stage scored under its floor (``weak``, vision/detector.py) is a card
    when both of its corner indices are seen a card's diagonal apart; one weak corner alone (a
    joker read in a court card's picture) is no card, a sure one alone is."""
    from dataclasses import replace

    tr = Tracker(calibration())
    x, y = N_PLAY
    pair = [replace(d, score=0.6, weak=True) for d in detections([("SB", x, y, 0.4)])]
    seen = tr.cards_in(pair)
    assert [(c.card, c.corners) for c in seen] == [("SB", 2)]
    assert tr.cards_in(pair[:1]) == []
    sure = detections([("SB", x, y, 0.4)])[:1]
    assert [(c.card, c.corners) for c in tr.cards_in(sure)] == [("SB", 1)]
    # a weak and a sure corner of the same card pair up too
    assert [c.corners for c in tr.cards_in([pair[0], replace(pair[1], weak=False)])] == [2]


def test_a_lone_weak_joker_in_a_play_zone_is_told_as_a_glimpse() -> None:
    """One weak corner of a joker is no card (above), but one seen in a seat's play zone for
    ``GLIMPSE_LOOKS`` looks in a row is told once as a glimpse (seed 9909: W's HR on N's C2,
    seen by one corner only, was lost with the deal's finishing order); the referee uses it
    only in hindsight. Fewer looks, a joker the zone counts, or a hand over the zone: none. The
    zone emptied (a trick cleared), the same joker may be told again."""
    from dataclasses import replace

    from vision.track import GLIMPSE_LOOKS

    tr = Tracker(calibration())
    x, y = N_PLAY
    lone = [replace(d, score=0.6, weak=True) for d in detections([("HR", x, y, 0.4)])][:1]
    ace = detections([("SA", x + 60, y, 0.0)])
    feed(tr, [ace] * 2)  # N's zone holds an ace
    assert feed(tr, [ace + lone] * (GLIMPSE_LOOKS - 1), t0=1.0) == [] and tr.glimpses == []
    feed(tr, [ace + lone], t0=1.0 + 0.1 * (GLIMPSE_LOOKS - 1))
    assert [(s, c) for _, s, c in tr.glimpses] == [("N", "HR")]
    tr.glimpses.clear()
    feed(tr, [ace + lone] * 5, t0=3.0)
    assert tr.glimpses == []  # told once
    # the zone emptied and filled again: a new glimpse may be told
    feed(tr, [[]] * 2, t0=5.0)
    feed(tr, [ace + lone] * GLIMPSE_LOOKS, t0=6.0)
    assert [c for _, _, c in tr.glimpses] == ["HR"]
    # a hand over the zone: nothing is looked at there
    tr2 = Tracker(calibration())
    feed(tr2, [ace] * 2)
    feed(tr2, [ace + lone] * (GLIMPSE_LOOKS + 2), t0=1.0, busy={"N"})
    assert tr2.glimpses == []
    # both corners: the joker is a card, no glimpse
    tr3 = Tracker(calibration())
    pair = [replace(d, score=0.6, weak=True) for d in detections([("HR", x, y, 0.4)])]
    ch = feed(tr3, [ace + pair] * (GLIMPSE_LOOKS + 2))
    assert [c.added for c in ch] == [("HR", "SA")] and tr3.glimpses == []


def test_a_lone_corner_under_the_floor_in_a_play_zone_is_told_as_a_glimpse() -> None:
    """Game 48404 (paris, adapted; issue 44): W's single SQ showed one corner index, scored
    0.17 (corner score x class probability) against the floor of 0.25 in both of the zone's
    looks, counted no card and was never told: the play was lost. Such a corner is still no
    card, but seen ``GLIMPSE_LOOKS`` looks in a row in a seat's play zone it is told as a
    glimpse, which the decoder uses only for a turn the table played on as taken. None for a
    double box of another card's index, for one inside a card seen by both corners (a ghost in
    its print), for one the classifier finds as likely no card (``GLIMPSE_NONE_MIN``), or for one
    under ``KIN_MIN_SCORE``."""
    from dataclasses import replace

    from vision.track import GLIMPSE_LOOKS, GLIMPSE_NONE_MIN, KIN_MIN_SCORE

    x, y = N_PLAY
    ace = detections([("SA", x + 70, y, 0.0)])

    def told(corner) -> list[tuple[str, str]]:
        tr = Tracker(calibration(), min_score=0.25, keep_score=0.12)
        feed(tr, [ace] * 2)  # N's zone holds an ace
        ch = feed(tr, [ace + [corner]] * (GLIMPSE_LOOKS + 2), t0=1.0)
        assert ch == []  # never a card
        return [(s, c) for _, s, c in tr.glimpses]

    lone = replace(detections([("SQ", x, y, 0.0)])[0], score=0.17)
    assert told(lone) == [("N", "SQ")]
    assert told(replace(lone, score=KIN_MIN_SCORE * 0.8)) == []
    # the classifier finds "no card" nearly as likely: a ghost D7 in a lower card's print
    assert told(replace(lone, alts=(("none", GLIMPSE_NONE_MIN - 1.1), ("S7", 2.6)))) == []
    assert told(replace(lone, alts=(("CQ", 1.7), ("none", GLIMPSE_NONE_MIN + 1.6)))) == [
        ("N", "SQ")
    ]
    # a second box on the ace's own index, named otherwise: a double box, no card
    assert told(replace(ace[0], card="DA", score=0.17)) == []
    # well inside the ace, which both of its corners show: a ghost in its print
    inside = replace(detections([("SQ", x + 70, y + 5, 0.0)])[0], score=0.17)
    box = inside.box
    w, h = box[2] - box[0], box[3] - box[1]
    cx, cy = (ace[0].box[0] + ace[1].box[0]) / 2, (ace[0].box[1] + ace[1].box[1]) / 2
    assert told(replace(inside, box=(cx, cy, cx + w, cy + h))) == []


def test_a_fanned_joker_bombs_lower_jokers_count_from_their_one_weak_index() -> None:
    """Game 47201 (tigullio): E's joker bomb SB HR HR SB lay fanned on an earlier play, and of
    each lower joker only its top strip showed, one index the corner stage scored under its
    floor (``weak``). A weak joker counts only paired, so the bomb counted as the jokers whose
    indices scored over the floor (HR HR), and the deal's finishing order came out wrong. A weak
    joker corner left single a fan's step (``KIN_STEP_MM``) from a counted joker's index, or from
    one counted so before it, now counts, with "no card" among its runner-ups. One a card's
    length from any joker, one nearer another card's index than a step (a double box), or one
    with no joker counted near it counts nothing, nor does one on a counted joker's own face.
    """
    from dataclasses import replace

    from vision.track import KIN_NONE_COST, KIN_STEP_MM

    x, y = S_PLAY
    cards = ["SB", "HR", "HR", "SB"]
    step = 14.0
    bomb = detections(fan(cards, x, y, step=step), hide=fan_hidden(0, 4))
    bomb = [replace(d, score=0.4, weak=True) for d in bomb]
    tr = Tracker(calibration())
    (ch,) = feed(tr, [bomb] * 3)
    assert Counter(ch.added) == Counter(cards)
    none = ("none", KIN_NONE_COST)
    assert sum(none in a for _, a in ch.doubts) == 3  # the three lower jokers
    # without the top joker's pair nothing anchors the row: no card (a glimpse at most)
    assert Tracker(calibration()).cards_in(bomb[:3]) == []
    # a lone weak joker two steps from the counted one, with none between: no card
    top = bomb[3:]
    gap = detections([("HR", x + 1.5 * step + 2 * KIN_STEP_MM[1], y, 0.0)])[:1]
    far = [replace(d, score=0.4, weak=True) for d in gap]
    seen = Tracker(calibration()).cards_in([*top, *far])
    assert Counter(c.card for c in seen) == Counter({"SB": 1})
    # one the classifier reads about as likely another card (game 47603: a weak SB, SK its
    # runner-up at 0.0, 20 mm from a single HR's index): no card
    doubtful = [replace(bomb[2], alts=(("SK", 0.0), ("none", 0.6)))]
    seen = Tracker(calibration()).cards_in([*top, *doubtful])
    assert Counter(c.card for c in seen) == Counter({"SB": 1})
    # a weak box on the top joker's own face, a step in from its index: no card
    tl = min(top, key=lambda d: d.box[0])
    face = replace(_shifted(tl, 10.0, 10.0), score=0.4, weak=True)
    assert Counter(c.card for c in Tracker(calibration()).cards_in([*top, face])) == {"SB": 1}
    # a weak joker nearer another card's index than a fan's step: a misread double box
    lower = bomb[0]  # the lowest SB's index
    ace = replace(_shifted(lower, 0.0, -6.0), card="SA", score=0.6, weak=False)
    seen = Tracker(calibration()).cards_in([*bomb[1:], lower, ace])
    assert Counter(c.card for c in seen) == Counter({"SB": 1, "HR": 2, "SA": 1})


def test_weak_doubles_of_a_jokers_corners_do_not_make_a_second_joker() -> None:
    """A joker's vertical index found twice, the second box 12 mm nearer the card's middle and
    weak: each sure corner could pair with the other's weak double (70 mm apart, inside the
    tolerance), two pairs whose centres lie 12 mm apart, i.e. two jokers where one lay (seed
    9405, proc-serif, 2026-12-01). A weak corner left single counts no card, so the two sure
    corners pair up: one joker."""
    from dataclasses import replace

    from tests.track.helpers import Det, corner_points

    cal = calibration()
    x, y = N_PLAY
    a, b = (np.array(p) for p in corner_points(x, y, 0.3))
    u = (b - a) / np.linalg.norm(b - a)

    def box(p: np.ndarray, score: float, weak: bool) -> Det:
        px = cal.to_image([p])[0]
        return Det("HR", (px[0] - 6, px[1] - 6, px[0] + 6, px[1] + 6), score, (), weak)

    sure = [box(a, 0.54, False), box(b, 0.38, False)]
    doubles = [box(a + 12 * u, 0.25, True), box(b - 12 * u, 0.28, True)]
    tr = Tracker(calibration(), min_score=0.15)
    seen = tr.cards_in(sure + doubles)
    assert [(c.card, c.corners) for c in seen] == [("HR", 2)]
    # two weak corners a card's diagonal apart still make a card beside a sure pair
    other = [np.array(p) + (0.0, 120.0) for p in corner_points(x, y, 0.3)]
    weak_pair = [box(p, 0.3, True) for p in other]
    assert sorted(c.corners for c in tr.cards_in(sure + doubles + weak_pair)) == [2, 2]
    # and a sure corner whose partner is only a weak double still counts once
    assert [c.corners for c in tr.cards_in([sure[0], replace(doubles[1], score=0.3)])] == [2]
    # a sure corner (88 mm from its weak partner), and a weak double of it 11 mm away that
    # lies nearer a card's diagonal from that partner (77 mm): the sure corner pairs, the two
    # weak corners do not make a card of their own (seed 9609, paris)
    lone = [box(b + 6 * u, 0.26, False), box(a, 0.32, True), box(b - 5 * u, 0.24, True)]
    assert [(c.card, c.corners) for c in tr.cards_in(lone)] == [("HR", 2)]


def test_a_corner_under_the_floor_counts_as_the_second_corner_of_a_card() -> None:
    """A detection between ``keep_score`` and ``min_score`` is no card by itself, but it is the
    second corner of a card whose first corner counts: a weak joker (counted only with both
    corners) whose other corner the classifier named with less confidence is a card (seed
    9404: W's red joker, one corner weak at 0.41, the other at 0.19, late by 1.4 s)."""
    from dataclasses import replace

    x, y = N_PLAY
    tl, br = detections([("HR", x, y, 0.4)])
    weak_tl, low_br = replace(tl, score=0.41, weak=True), replace(br, score=0.19)
    tr = Tracker(calibration(), min_score=0.25, keep_score=0.12)
    assert [c.added for c in feed(tr, [[weak_tl, low_br]] * 3)] == [("HR",)]
    assert [(c.card, c.corners) for c in tr.last_seen] == [("HR", 2)]
    # either corner alone is no card
    for alone in ([weak_tl], [low_br]):
        assert feed(Tracker(calibration(), min_score=0.25, keep_score=0.12), [alone] * 3) == []
    # two corners under the floor are no card either, nor is one under keep_score
    low_tl = replace(tl, score=0.19)
    assert (
        feed(Tracker(calibration(), min_score=0.25, keep_score=0.12), [[low_tl, low_br]] * 3) == []
    )
    faint = replace(br, score=0.1)
    assert (
        feed(Tracker(calibration(), min_score=0.25, keep_score=0.12), [[weak_tl, faint]] * 3) == []
    )
    # a sure corner with a second under the floor: still one card, now seen by both corners
    tr2 = Tracker(calibration(), min_score=0.25, keep_score=0.12)
    sure_tl = replace(tl, score=0.6)
    assert [c.added for c in feed(tr2, [[sure_tl, low_br]] * 3)] == [("HR",)]
    assert [(c.card, c.corners) for c in tr2.last_seen] == [("HR", 2)]


def test_two_corners_under_the_floor_on_the_learnt_spacing_are_one_card() -> None:
    """Two corners of one label, both under the floor (one even under ``keep_score``), are one
    card once the table's corner spacing is learnt and they lie on it within ``LOW_PAIR_MM``:
    plastic's court indices score low at the corner stage (seed 9807: an SQ at 0.24 and 0.11,
    73.2 mm apart on a 74.5 mm spacing, was lost). Off the spacing, under ``faint_score``, or
    before the spacing is known, or where the classifier is unsure of either, they are no card;
    a faint corner is never a sure one's partner, and low pairs do not teach the spacing."""
    from dataclasses import replace

    from vision.track import LOW_PAIR_MM, SPACING_MIN

    x, y = N_PLAY
    sx, sy = S_PLAY

    def low_pair(spacing: float, a: float, b: float) -> list[Det]:
        tl, br = _card("SQ", sx, sy, spacing)
        return [replace(tl, score=a), replace(br, score=b)]

    def learnt() -> Tracker:
        tr = Tracker(calibration(), min_score=0.25, keep_score=0.12, faint_score=0.05)
        for k in range(SPACING_MIN):
            tr.cards_in(_card("H3", x + k % 5, y, 75.0))
        assert tr.spacing == pytest.approx(75.0, abs=1.0)
        return tr

    # before the spacing is known: no card (the rule of a table seen for the first time)
    fresh = Tracker(calibration(), min_score=0.25, keep_score=0.12, faint_score=0.05)
    assert feed(fresh, [low_pair(75.0, 0.24, 0.11)] * 3) == []
    tr = learnt()
    got = feed(tr, [low_pair(73.5, 0.24, 0.11)] * 3, t0=10.0)
    assert [(c.region, c.added) for c in got] == [("S", ("SQ",))]
    assert [(c.card, c.corners) for c in tr.last_seen] == [("SQ", 2)]
    assert tr.spacing == pytest.approx(75.0, abs=1.0)  # not learnt from the low pair
    # off the spacing by more than LOW_PAIR_MM (still well inside the 20 mm pair tolerance)
    off = 75.0 + LOW_PAIR_MM + 2.0
    assert feed(learnt(), [low_pair(off, 0.24, 0.11)] * 3, t0=10.0) == []
    # one corner under faint_score: no card
    assert feed(learnt(), [low_pair(75.0, 0.24, 0.04)] * 3, t0=10.0) == []
    # a reading the classifier is unsure of (another within LOW_PAIR_SURE), or a weak joker:
    # no card (seed 9603: a ghost SB on a guyenne king's picture)
    tl, br = low_pair(75.0, 0.24, 0.11)
    unsure = [tl, replace(br, alts=(("S7", 0.6),))]
    assert feed(learnt(), [unsure] * 3, t0=10.0) == []
    jokers = [replace(tl, card="SB", weak=True), replace(br, card="SB")]
    assert feed(learnt(), [jokers] * 3, t0=10.0) == []
    # a faint corner is no sure corner's partner: the sure one counts its card alone
    tr = learnt()
    feed(tr, [low_pair(75.0, 0.6, 0.08)] * 3, t0=10.0)
    assert [(c.card, c.corners) for c in tr.last_seen] == [("SQ", 1)]


def test_a_card_with_an_index_in_all_four_corners_counts_once() -> None:
    """Some jokers (plastic's) carry their index in all four corners: the two diagonals are two
    corner pairs with one centre, one card (they counted two: seed 9607, SB read as SB SB); two
    such cards fanned 17 mm apart stay two."""
    cal = calibration()

    def four(card: str, x: float, y: float) -> list[Det]:
        out = []
        for dx, dy in ((-25.5, -32.0), (25.5, -32.0), (25.5, 32.0), (-25.5, 32.0)):
            px = cal.to_image([(x + dx, y + dy)])[0]
            out.append(Det(card, (px[0] - 6, px[1] - 6, px[0] + 6, px[1] + 6)))
        return out

    tr = Tracker(calibration())
    x, y = S_PLAY
    assert [(c.card, c.corners) for c in tr.cards_in(four("SB", x, y))] == [("SB", 2)]
    # two of them, fanned (the lower card's right-hand corners covered by the upper card)
    lower = [d for i, d in enumerate(four("SB", x - 17, y)) if i in (0, 3)]
    seen = tr.cards_in(lower + four("SB", x, y))
    assert Counter(c.card for c in seen) == Counter({"SB": 2})


def _corner_at(x: float, y: float, card: str, alts: tuple = ()) -> Det:
    (u, v) = calibration().to_image([(x, y)])[0]
    return Det(card, (u - 6, v - 6, u + 6, v + 6), 1.0, alts)


def _mm_of(d: Det) -> tuple[float, float]:
    """The table-mm centre of detection ``d``'s box."""
    cx, cy = (d.box[0] + d.box[2]) / 2, (d.box[1] + d.box[3]) / 2
    (x, y) = calibration().to_table([(cx, cy)])[0]
    return float(x), float(y)


def _shifted(d: Det, dx: float, dy: float) -> Det:
    """Detection ``d`` moved by (dx, dy) table mm, its score and runner-ups kept."""
    from dataclasses import replace

    x, y = _mm_of(d)
    moved = _corner_at(x + dx, y + dy, d.card)
    return replace(d, box=moved.box)


def _learnt(spacing: float, **kw: float) -> Tracker:
    """A tracker that has learnt the table's corner spacing (mm) from ``SPACING_MIN`` cards."""
    from vision.track import SPACING_MIN

    tr = Tracker(calibration(), **kw)
    x, y = N_PLAY
    for k in range(SPACING_MIN):
        tr.cards_in(_card("H3", x + k % 5, y, spacing))
    assert tr.spacing == pytest.approx(spacing, abs=1.0)
    return tr


def _card(card: str, x: float, y: float, spacing: float, angle: float = 0.9) -> list[Det]:
    """A card's two corner indices ``spacing`` mm apart (deck designs differ)."""
    dx, dy = spacing / 2 * np.cos(angle), spacing / 2 * np.sin(angle)
    return [_corner_at(x - dx, y - dy, card), _corner_at(x + dx, y + dy, card)]


def test_a_four_index_card_keeps_both_diagonals_off_the_learnt_spacing() -> None:
    """Seed 9502: plastic's SB, its four corner indices all sure (sides 41 and 69 mm, diagonals
    77 and 84 mm) on a table whose learnt spacing is 75.5 mm, with a weak corner read in its art
    near the top edge on that spacing from two of them. The 84 mm diagonal, off the spacing and
    with a weak partner for its corners, was dropped before the four corners were seen as one
    card, and the two long sides counted two jokers: one SB."""
    from dataclasses import replace

    tr = _learnt(75.5)
    sure = [_corner_at(x, y, "SB") for x, y in ((428.0, 712.3), (450.4, 638.2), (409.8, 645.6))]
    sure.append(_corner_at(469.1, 704.8, "SB"))
    art = replace(_corner_at(434.9, 639.7, "SB"), score=0.3, weak=True)
    seen = tr.cards_in([*sure, art])
    assert [(c.card, c.corners) for c in seen] == [("SB", 2)]


def test_a_card_read_in_two_suits_at_its_corners_is_one_card() -> None:
    """A card whose two corners were read in two suits (S9 at one, C9 at the other: plastic
    with a deck profile) is one card once the tracker knows the table's corner spacing, named
    by both readings together; before, it is two one-corner cards."""
    from dataclasses import replace

    from vision.track import SPACING_MIN

    tr = Tracker(calibration())
    tl, br = detections([("S9", *S_PLAY, 0.4)])
    split = [replace(tl, alts=(("C9", 0.7),)), replace(br, card="C9", alts=(("S9", 0.2),))]
    assert sorted((c.card, c.corners) for c in tr.cards_in(split)) == [("C9", 1), ("S9", 1)]
    assert tr.spacing is None
    for _ in range(SPACING_MIN):
        tr.cards_in(detections([("H3", *N_PLAY, 0.1)]))
    assert tr.spacing == pytest.approx(tr.pair_mm, abs=0.5)
    (card,) = tr.cards_in(split)
    # S9: 0 at one corner + 0.2 at the other; C9: 0.7 + 0
    assert (card.card, card.corners, card.region) == ("S9", 2, "S")
    assert dict(card.alts)["C9"] == pytest.approx(0.25)
    assert card.axes is not None
    # two readings that do not name one card (neither is the other's runner-up): two cards
    plain = [replace(tl, card="S9"), replace(br, card="D4")]
    assert sorted((c.card, c.corners) for c in tr.cards_in(plain)) == [("D4", 1), ("S9", 1)]
    # a runner-up too dear (4.5 nats): two cards
    dear = [replace(tl, alts=(("C9", 4.5),)), replace(br, card="C9", alts=(("D9", 0.1),))]
    assert len(tr.cards_in(dear)) == 2


def test_a_real_pair_fanned_is_not_taken_for_one_card_read_in_two_suits() -> None:
    """C9 and S9 fanned, each showing one corner (the lower card's top-left, the upper card's
    bottom-right; the upper card's top-left missed): the two corners lie 93 mm apart, not the
    82 of one card, so they stay two cards although each reading is the other's runner-up."""
    from dataclasses import replace

    from vision.track import SPACING_MIN

    tr = Tracker(calibration())
    for _ in range(SPACING_MIN):
        tr.cards_in(detections([("H3", *N_PLAY, 0.1)]))
    lower, upper = detections(fan(["C9", "S9"], *S_PLAY), hide={(0, 1), (1, 0)})
    pair = [replace(lower, alts=(("S9", 0.5),)), replace(upper, alts=(("C9", 0.5),))]
    assert Counter(c.card for c in tr.cards_in(pair)) == Counter({"C9": 1, "S9": 1})


def test_the_corner_spacing_is_learnt_from_the_table() -> None:
    """Plastic's corner indices sit ~75 mm apart, not the 82 of the default geometry: the
    tracker takes the spacing from the one-label pairs it sees (pairing them with its own
    20 mm tolerance) and fuses a card read in two suits at that spacing, not at 82."""
    from vision.track import SPACING_MIN

    tr = Tracker(calibration())
    x, y = N_PLAY
    for k in range(SPACING_MIN):
        tr.cards_in(_card("H3", x + k % 5, y, 75.0))
    assert tr.spacing == pytest.approx(75.0, abs=1.0)
    sx, sy = S_PLAY
    a, b = _card("S9", sx, sy, 75.0)
    split = [replace_card(a, "S9", (("C9", 0.6),)), replace_card(b, "C9", (("S9", 0.3),))]
    assert [(c.card, c.corners) for c in tr.cards_in(split)] == [("S9", 2)]
    a, b = _card("S9", sx, sy, 82.0)
    split = [replace_card(a, "S9", (("C9", 0.6),)), replace_card(b, "C9", (("S9", 0.3),))]
    assert sorted(c.corners for c in tr.cards_in(split)) == [1, 1]


def test_a_tight_pair_of_one_card_pairs_each_corner_on_the_learnt_spacing() -> None:
    """Two small jokers fanned 17 mm apart (seed 9805, proc-serif): both top-left indices show,
    only the upper card's bottom-right; the upper top-left scores under the floor (it counts
    only as a card's second corner). Its bottom-right lies 86 mm from the lower top-left (within
    the 20 mm tolerance of 82) and 75 mm from its own top-left. Taking the sure pair counted one
    joker; once the table's spacing (75) is learnt, the corner on it is the partner: two."""

    x, y = S_PLAY
    dx, dy = 75.0 * np.cos(0.9), 75.0 * np.sin(0.9)
    lower_tl = _corner_at(x, y, "SB")
    upper_tl = _corner_at(x + 17.0, y, "SB")
    upper_br = _corner_at(x + 17.0 + dx, y + dy, "SB")
    frame = [lower_tl, Det("SB", upper_tl.box, 0.2), upper_br]

    def jokers(tr: Tracker) -> int:
        (ch,) = feed(tr, [frame] * 4)
        return Counter(ch.added)["SB"]

    assert jokers(Tracker(calibration())) == 1  # no spacing learnt: the sure pair is taken
    assert jokers(_learnt(75.0)) == 2


def test_a_stacked_bomb_is_no_card_read_in_two_suits_across_its_row() -> None:
    """A bomb of five jacks stacked a fan's step (17 mm) apart, proc-serif's spacing 74 mm (seed
    9705): the top-left indices SJ DJ CJ HJ HJ in a row and the top HJ's bottom-right. That
    lies 87 mm from the HJ's under it, nearer the nominal 82 than its own top-left index (75
    mm), so they pair; the top HJ's top-left index is left single, 69 mm (the spacing) from the
    SJ at the row's end, each the other's runner-up: taken as one card read in two suits, the
    bomb was read with four jacks. Three indices lie between them: the two ends of a fan's row
    are no card."""
    from dataclasses import replace

    tr = _learnt(74.0)
    x, y = S_PLAY
    row = ["SJ", "DJ", "CJ", "HJ", "HJ"]
    dx, dy = 74.0 * np.cos(0.98), 74.0 * np.sin(0.98)
    frame = [_corner_at(x + 17.3 * i, y, c) for i, c in enumerate(row)]
    frame[0] = replace(frame[0], alts=(("HJ", 0.8),))
    frame[4] = replace(frame[4], alts=(("SJ", 0.8),))
    frame.append(_corner_at(x + 4 * 17.3 + dx, y + dy, "HJ"))
    want = Counter({"SJ": 1, "DJ": 1, "CJ": 1, "HJ": 2})
    assert Counter(c.card for c in tr.cards_in(frame)) == want
    # the row alone (the top card's bottom-right index not found)
    assert Counter(c.card for c in tr.cards_in(frame[:5])) == want


def test_a_four_index_joker_pairs_its_diagonals_on_a_learnt_spacing() -> None:
    """Plastic's HR prints its index in all four corners: its diagonals are 83 mm, its long
    sides 70, on a table whose cards' index spacing is 75. Shown at a seat's edge (seed 9707,
    an exposed card), six corners were found, two of them extra boxes along its foot. Pairs are
    weighed off the nominal spacing (82); weighed off the learnt one (tried 2026-12-03), a long
    side outranked a diagonal and one HR counted two."""
    tr = _learnt(75.0, min_score=0.25, keep_score=0.12, faint_score=0.05)
    x, y = S_PLAY  # the six corners as found (mm, relative), score, weak
    corners = [
        (0.0, 72.4, 0.493, True),
        (34.6, 6.0, 0.396, True),
        (-12.2, 68.0, 0.377, False),
        (14.1, 73.9, 0.322, True),
        (-7.3, -0.2, 0.226, False),
        (26.2, 75.6, 0.223, False),
    ]
    frame = []
    for dx, dy, score, weak in corners:
        d = _corner_at(x + dx, y + dy, "HR", (("none", 3.5),))
        frame.append(Det("HR", d.box, score, d.alts, weak))
    (change,) = feed(tr, [frame] * 4, t0=10.0)
    assert change.added == ("HR",)


def test_fitting_pairs_drops_only_a_sure_pair_whose_corner_a_weak_one_fits_better() -> None:
    from vision.track import _fitting_pairs

    at = [np.array(p, float) for p in ((0, 0), (86, 0), (11, 0), (300, 0), (386, 0))]
    ok = {(0, 1): 4.0, (1, 2): 7.0, (3, 4): 4.0}
    # (0, 1): two sure corners 11 off 75, and corner 1 has a weak partner (2) 75 away
    weak = [False, False, True, False, False]
    assert _fitting_pairs(ok, at, weak, 75.0) == {(1, 2): 7.0, (3, 4): 4.0}
    # the partner on the spacing is sure (or the pair itself holds a weak corner): kept
    assert _fitting_pairs(ok, at, [False] * 5, 75.0) == ok
    assert _fitting_pairs(ok, at, [True, False, True, False, False], 75.0) == ok
    assert _fitting_pairs(ok, at, weak, None) == ok


def _four_corners(card: str, x: float, y: float, weak_right: bool = True) -> list[Det]:
    """A card with an index in each corner (plastic's jokers), 49 x 70 mm between them; the
    two right-hand ones weak (under the corner floor), as in seed 9807."""
    out = []
    for dx, dy in ((-24.5, -35.0), (24.5, -35.0), (-24.5, 35.0), (24.5, 35.0)):
        d = _corner_at(x + dx, y + dy, card)
        out.append(Det(card, d.box, 0.3, weak=weak_right and dx > 0))
    return out


def test_a_card_with_an_index_in_each_corner_counts_once() -> None:
    """Its long sides (70 mm) pair as well as its diagonals (85): the two sure left corners
    paired with each other and the two weak right ones with each other made two jokers (seed
    9807, HR read HR HR). Four corners lying as one card's are paired along the diagonals."""
    tr = Tracker(calibration())
    x, y = N_PLAY
    assert [(c.card, c.corners) for c in tr.cards_in(_four_corners("HR", x, y))] == [("HR", 2)]
    assert len(tr.cards_in(_four_corners("HR", x, y, weak_right=False))) == 1
    # two such cards apart: two
    two = _four_corners("HR", x - 60, y) + _four_corners("HR", x + 60, y)
    assert [c.card for c in tr.cards_in(two)] == ["HR", "HR"]


def test_two_identical_cards_fanned_are_no_four_index_card() -> None:
    """Two copies fanned 15-35 mm apart show four corners whose crossed diagonals share a
    centre, but they lie as no card's four corners (sides of the fan's offset, crossed
    diagonals of two lengths): two cards."""
    from vision.track import _four_index_cards

    x, y = S_PLAY
    for offset in (15.0, 25.0, 35.0):
        layout = [("C9", x, y, 0.0), ("C9", x + offset, y, 0.0)]
        tr = Tracker(calibration())
        assert [c.card for c in tr.cards_in(detections(layout))] == ["C9", "C9"], offset
    at = [np.array(p, float) for p in ((0, 0), (45, 70), (15, 0), (60, 70))]
    ok = {(0, 1): 1.0, (2, 3): 1.0, (0, 3): 10.0, (1, 2): 6.0}
    assert _four_index_cards(ok, at, 8.0) == ok


def test_two_top_left_indices_of_one_card_a_fan_apart_are_two_cards() -> None:
    """A six-card bomb of 6s fanned 17 mm apart (seed 9806, tigullio): the two C6 lie four
    steps apart, their top-left indices 68 mm from each other, within the 20 mm tolerance of
    82 that holds before the table's spacing is known, and within ``PAIR_FAR_MM`` of plastic's
    75 once that is learnt (seed 9407: C6 H6 S6 S6 C6 H6 read as five cards, with the
    renderer's own labels too). The three indices in a row between them are the fan's
    (``FAN_BETWEEN``): a card's own diagonal runs under its face. Two C6, before the spacing is
    learnt and after, at tigullio's 85 and at plastic's 75."""
    from vision.track import SPACING_MIN

    x, y = S_PLAY
    cards = ["C6", "H6", "H6", "S6", "C6", "S6"]
    dets = detections(fan(cards, x, y), hide=fan_hidden(0, len(cards)))
    assert Counter(c.card for c in Tracker(calibration()).cards_in(dets)) == Counter(cards)
    nx, ny = N_PLAY
    for spacing in (85.0, 75.0):
        tr = Tracker(calibration())
        for k in range(SPACING_MIN):
            tr.cards_in(_card("H3", nx + k % 5, ny, spacing))
        assert tr.spacing == pytest.approx(spacing, abs=1.0)
        assert Counter(c.card for c in tr.cards_in(dets)) == Counter(cards)
    # with nothing read between them (the middle cards' indices covered), two corners that
    # far apart are still taken for one card's two: the rule needs the fan's own indices
    alone = [d for d in dets if d.card == "C6"]
    assert Counter(c.card for c in Tracker(calibration()).cards_in(alone))["C6"] == 1


def replace_card(d: Det, card: str, alts: tuple) -> Det:
    from dataclasses import replace

    return replace(d, card=card, alts=alts)


def test_a_card_that_may_be_there_is_a_doubt_not_a_card() -> None:
    """A ``MAYBE`` detection (vision/faces.py: a fan's lower court card no face fits surely) is
    counted apart: it joins the cards added beside it as a doubt with no card, naming the cards
    it may be; coming or going alone it is no change; it never lies in ``contents``."""
    from engine.cards import parse_card
    from vision.track import MAYBE

    tr = Tracker(calibration())
    queen = detections([("DQ", *N_PLAY, 0.0)])
    maybe = _corner_at(N_PLAY[0] + 20.0, N_PLAY[1], MAYBE, (("SQ", 1.0), ("HQ", 2.5)))
    other = _corner_at(N_PLAY[0] - 60.0, N_PLAY[1] + 30.0, MAYBE, (("CK", 1.0),))
    changes = feed(tr, [queen + [maybe, other]] * 3)
    (ch,) = changes
    assert ch.added == ("DQ",) and ch.contents == ("DQ",) and ch.region == "N"
    assert sorted(ch.doubts) == [(MAYBE, (("CK", 1.0),)), (MAYBE, (("SQ", 1.0), ("HQ", 2.5)))]
    (o,) = [o for o in Interpreter().changes(0.2, changes) if o.type == "played"]
    assert [str(c) for c in o.cards] == ["DQ"]
    assert (None, ((parse_card("SQ"), 1.0), (parse_card("HQ"), 2.5))) in o.doubts
    assert tr.contents() == {"N": ("DQ",)}
    # the maybe-cards go, the queen stays: nothing changed for the referee
    assert feed(tr, [queen] * 4, t0=1.0) == []
    # ... and come back alone: nothing either
    assert feed(tr, [queen + [maybe]] * 4, t0=2.0) == []
    # two maybe-cards ~82 mm apart are not the two corners of one card
    far = _corner_at(N_PLAY[0] + 20.0 + 82.0, N_PLAY[1], MAYBE, (("SQ", 1.0),))
    assert [c.corners for c in tr.cards_in([maybe, far]) if c.card == MAYBE] == [1, 1]


def test_cards_read_whole_are_never_taken_for_two_corners_of_one() -> None:
    """Two queens read by their pictures (``whole``) a card's corner spacing apart are two
    cards; as plain corner detections they would be the two corners of one."""
    from dataclasses import replace

    tr = Tracker(calibration())
    a = _corner_at(N_PLAY[0], N_PLAY[1], "CQ")
    b = _corner_at(N_PLAY[0] + 45.0, N_PLAY[1] + 68.0, "CQ")  # 81.5 mm apart
    assert [c.corners for c in tr.cards_in([a, b])] == [2]
    whole = [replace(d, whole=True) for d in (a, b)]
    assert sorted((c.card, c.corners) for c in tr.cards_in(whole)) == [("CQ", 2), ("CQ", 2)]


def test_a_lower_card_of_a_fans_rank_seen_under_the_floor_counts() -> None:
    """The full house CT ST HT D3 H3 fanned 17 mm apart, the ST's index half covered and scored
    0.15, under the tracker's floor (seed 9808): a corner under the floor left single counts as
    a card a fan's step from a sure index of its own rank (``KIN_STEP_MM``), with "no card
    there" among its runner-ups at ``KIN_NONE_COST`` for the referee. A corner of another rank
    there, one of the rank too far from the others, one nearer another card's index than a
    fan's step (a misread double box) or one scored under ``KIN_MIN_SCORE`` counts no card."""
    from dataclasses import replace

    from vision.track import KIN_NONE_COST

    def seen_in(dets: list[Det]) -> list:
        tr = Tracker(calibration())
        tr.update(0.0, dets)  # (``cards_in`` takes the detections over the floor only)
        return tr.last_seen

    x, y = S_PLAY
    cards = ["CT", "ST", "HT", "D3", "H3"]
    dets = detections(fan(cards, x, y), hide=fan_hidden(0, len(cards)))
    faint = [replace(d, score=0.15) if d.card == "ST" else d for d in dets]
    seen = seen_in(faint)
    assert Counter(c.card for c in seen) == Counter(cards)
    (st,) = [c for c in seen if c.card == "ST"]
    assert ("none", KIN_NONE_COST) in st.alts
    # the play as committed: the ST is one of its cards, "no card" its doubt
    tr = Tracker(calibration())
    (ch,) = feed(tr, [faint] * 3)
    assert sorted(ch.added) == sorted(cards)
    assert ("ST", (("none", KIN_NONE_COST),)) in ch.doubts
    # a seven there (the upper card's index misread, say) is no card of the fan's ranks
    seven = [replace(d, card="S7") if d.card == "ST" else d for d in faint]
    assert "S7" not in {c.card for c in seen_in(seven)}
    # a ten about 80 mm from the nearest other ten (the HT gone, the CT moved away) is not a
    # fan's lower card either
    far = [replace(d, score=0.15) if d.card == "ST" else d for d in dets if d.card != "HT"]
    far = [d for d in far if d.card != "CT"] + [_corner_at(x - 20, y + 80, "CT")]
    assert "ST" not in {c.card for c in seen_in(far)}
    # one on another card's index (nearer than a fan's step): a double box, no card
    (ht,) = [d for d in dets if d.card == "HT"]
    double = [*dets, replace(ht, card="DT", score=0.15)]
    assert "DT" not in {c.card for c in seen_in(double)}
    fainter = [replace(d, score=0.08) if d.card == "ST" else d for d in dets]
    assert "ST" not in {c.card for c in seen_in(fainter)}
    # one on the face of a card seen by both corners (on top: nothing under it shows), 16 mm
    # from that card's index of its rank: a detection on its art (seed 9604: SQ read CQ SQ)
    queen = detections([("SQ", x, y, 0.0)])
    art = replace(_corner_at(x - 15.5, y - 19.5, "CQ"), score=0.2)
    assert Counter(c.card for c in seen_in([*queen, art])) == Counter({"SQ": 1})


def test_the_doubt_of_an_added_copy_is_the_one_under_the_floor() -> None:
    """An S7 lies in S's zone from an earlier play; S lays H7 S7, the S7 16 mm off the H7 with
    its index scored 0.24, under the floor (as seed 9408's stacked sevens): the change adds one
    S7 of the two the zone shows, and its doubt is the lower card's ("no card there" at
    ``KIN_NONE_COST``), not the old sure S7's (none), so the referee can drop it cheaply."""
    from dataclasses import replace

    from vision.track import KIN_NONE_COST

    x, y = S_PLAY
    old = detections([("S7", x - 70.0, y, 0.0)])
    tr = Tracker(calibration())
    (first,) = feed(tr, [old] * 3)
    assert first.added == ("S7",)
    new = detections([("H7", x + 20.0, y, 0.0)])
    tl = min(new, key=lambda d: d.box[0])  # the H7's top-left index
    low = replace(_shifted(tl, 0.0, -16.0), card="S7", score=0.24)
    (ch,) = feed(tr, [[*old, *new, low]] * 3, t0=1.0)
    assert sorted(ch.added) == ["H7", "S7"]
    assert ("S7", (("none", KIN_NONE_COST),)) in ch.doubts


def test_a_box_astride_two_fanned_indices_is_a_card_that_may_be_there() -> None:
    """Game 47002 (plastic): in the fan S6 C6 S6, 17 mm apart, the corner stage also boxed the
    8 mm between the first two indices, part of each, and named it C6 surely in every look: the
    triple counted S6 S6 C6 C6, a legal bomb. A corner nearer than a fan's step to two indices
    on either side of it, on the line between them, is no card's own index (each would cover
    it): it is a card that may lie there (``MAYBE``), its reading a doubt of the play. A fan 12
    mm apart (``KIN_STEP_MM``) keeps every card, and so does a corner off the fan's row."""
    from vision.track import FAN_MAYBE_COST, KIN_STEP_MM, MAYBE

    x, y = S_PLAY
    cards = ["S6", "C6", "S6"]
    dets = detections(fan(cards, x, y), hide=fan_hidden(0, 3))
    (a, _) = corner_points_of(x - 17.0, y)
    astride = _corner_at(a[0] + 8.0, a[1], "C6", (("S6", 0.3),))
    tr = Tracker(calibration())
    (ch,) = feed(tr, [[*dets, astride]] * 3)
    assert Counter(ch.added) == Counter(cards)
    assert (MAYBE, (("C6", FAN_MAYBE_COST), ("S6", FAN_MAYBE_COST + 0.3))) in ch.doubts
    # game 47003: in the pair C6 S6 such a box read S6 paired with the top S6's far corner,
    # and the top S6's own index counted a second S6
    pair = detections(fan(["C6", "S6"], x, y), hide=fan_hidden(0, 2))
    (c6, _) = corner_points_of(x - 8.5, y)
    box = _corner_at(c6[0] + 8.0, c6[1], "S6")
    assert Counter(c.card for c in Tracker(calibration()).cards_in([*pair, box])) == Counter(
        {"C6": 1, "S6": 1, MAYBE: 1}
    )
    # a fan at the least step the tracker assumes: three cards
    tight = detections(fan(cards, x, y, step=KIN_STEP_MM[0] + 0.5), hide=fan_hidden(0, 3))
    assert Counter(c.card for c in Tracker(calibration()).cards_in(tight)) == Counter(cards)
    # the same corner 6 mm off the row (a card lying across the fan's top): a card
    off = _corner_at(a[0] + 8.0, a[1] - 6.0, "C6")
    seen = Tracker(calibration()).cards_in([*dets, off])
    assert Counter(c.card for c in seen) == Counter({"S6": 2, "C6": 2})


def corner_points_of(x: float, y: float) -> list[tuple[float, float]]:
    """The two corner index centres (table mm) of an upright card lying at (x, y)."""
    from tests.track.helpers import corner_points

    return corner_points(x, y, 0.0)


def test_an_index_inside_a_fans_row_is_no_far_corner_of_a_card_read_in_two_suits() -> None:
    """Game 47904 (paris, 2026-12-05): W's bomb D8 D8 S8 H8 S8 lay fanned over an HQ of an
    earlier play whose one index showed. The H8's index, fourth in the fan's row, lay the
    table's spacing from the HQ's index, where the HQ's covered corner was, and the two were
    fused as one card read in two suits (HQ): the bomb counted four eights. An index with a
    fan's step to another on either side is a lower card's, its far corner covered: it stays a
    card. The same HQ index with a lone H8 at that place (no fan) still fuses."""
    from dataclasses import replace

    tr = _learnt(84.0)
    x, y = S_PLAY
    bomb = detections(fan(["D8", "D8", "S8", "H8", "S8"], x, y), hide=fan_hidden(0, 5))
    h8 = next(k for k, d in enumerate(bomb) if d.card == "H8")
    bomb[h8] = replace(bomb[h8], alts=(("HQ", 1.0),))
    hx, hy = _mm_of(bomb[h8])
    # the HQ's visible index: the spacing from the H8's, up and to the left
    a = 0.9
    hq = _corner_at(hx - 84.0 * np.cos(a), hy - 84.0 * np.sin(a), "HQ", (("H8", 2.0),))
    seen = tr.cards_in([*bomb, hq])
    assert Counter(c.card for c in seen) == Counter({"D8": 2, "S8": 2, "H8": 1, "HQ": 1})
    # without the fan around it, the H8 is taken as the HQ's other corner read otherwise
    (one,) = tr.cards_in([bomb[h8], hq])
    assert (one.card, one.corners) == ("HQ", 2)


def test_a_play_holding_the_second_copy_of_a_card_lying_covered_adds_it() -> None:
    """Guandan is played with two decks: a seat's new play may hold the second copy of a card
    of its earlier play, and cover the first. By counts the zone still holds one such card, so
    the play lost it (plastic 48957: E's DT CJ DQ SK DA over its S8 D9 DT HJ CQ, played as
    CJ DQ SK DA). The new copy lies far from where the old one lay: it is added, the old one
    removed (covered)."""
    tr = Tracker(calibration())
    first = fan(["S3", "D8", "S4"], 330.0, 700.0)
    feed(tr, [detections(first, hide=fan_hidden(0, 3))] * 3)
    assert tr.contents()["S"] == ("D8", "S3", "S4")
    feed(tr, [[]] * 2, t0=1.0, busy={"S"})  # a hand lays the next play
    # the new fan 200 mm to the right; the old D8's one index now covered by nothing new here,
    # but hidden (the next play's cards pushed over it): S3 and S4 still show
    second = fan(["D8", "D9", "DT"], 530.0, 700.0)
    old = detections(first, hide=fan_hidden(0, 3) | {(1, 0)})
    ch = feed(tr, [old + detections(second, hide=fan_hidden(0, 3))] * 3, t0=2.0)
    assert [(c.added, c.removed) for c in ch] == [(("D8", "D9", "DT"), ("D8",))]
    assert tr.contents()["S"] == ("D8", "D9", "DT", "S3", "S4")


def test_a_seats_own_cards_read_anew_in_a_play_over_them_are_no_cards_of_it() -> None:
    """A hand lays a new play beside the seat's earlier cards, and those are read anew in other
    suits on the very spot they lay (guyenne-classic 49288: N's D3 D4 S3 read C3 H4 H3 as N
    laid DA SJ; the play counted five cards). The change is split: first the cards read anew (same
    ranks, one for one: the Interpreter's re-reading, a ``played`` with ``was``), then the
    play of the rest. A card of the same rank laid elsewhere is a card of the play."""
    first = fan(["D3", "S3", "H4"], 330.0, 700.0)
    for split in (True, False):
        tr = Tracker(calibration())
        feed(tr, [detections(first, hide=fan_hidden(0, 3))] * 3)
        feed(tr, [[]] * 2, t0=1.0, busy={"S"})
        if split:  # read anew where they lie
            old = fan(["H3", "C3", "H4"], 330.0, 700.0)
        else:  # a new H3 C3 laid far off, the old ones covered
            old = [("H4", 347.0, 700.0, 0.0)]
        play = fan(["DA", "SJ"] + ([] if split else ["H3", "C3"]), 560.0, 700.0)
        seen = detections(old, hide=fan_hidden(0, len(old))) + detections(
            play, hide=fan_hidden(0, len(play))
        )
        ch = feed(tr, [seen] * 3, t0=2.0)
        if split:
            assert [(c.added, c.removed) for c in ch] == [
                (("C3", "H3"), ("D3", "S3")),
                (("DA", "SJ"), ()),
            ]
            obs = Interpreter().changes(2.0, ch)
            assert [(o.type, [str(c) for c in o.cards], o.extra) for o in obs] == [
                ("played", ["H3", "C3"], {"was": ["D3", "S3"]}),
                ("played", ["SJ", "DA"], {}),
            ]
        else:
            assert [(c.added, c.removed) for c in ch] == [(("C3", "DA", "H3", "SJ"), ("D3", "S3"))]


def test_a_card_seen_by_one_corner_after_both_is_no_second_copy() -> None:
    """A card seen by both corners (its centre), then by one as a new play covers the other,
    moves half a corner spacing: the same card, not a second copy laid by the new play."""
    tr = Tracker(calibration())
    feed(tr, [detections([("D8", 450.0, 700.0, 0.0)])] * 3)
    feed(tr, [[]] * 2, t0=1.0, busy={"S"})
    one = detections([("D8", 450.0, 700.0, 0.0)], hide={(0, 1)})
    new = detections([("C9", 470.0, 745.0, 0.0)], hide={(0, 0)})
    ch = feed(tr, [one + new] * 3, t0=2.0)
    assert [(c.added, c.removed) for c in ch] == [(("C9",), ())]
    # how far a second copy must lie follows the card's corner spacing: a larger deck's is longer
    assert 89.0 < tr.second_copy_mm < 91.0
    assert Tracker(calibration(), card_mm=(80.0, 110.0)).second_copy_mm > 115.0


def test_a_copy_held_before_and_after_among_a_new_plays_cards_is_a_card_maybe_missed() -> None:
    """A seat's new play laid over its earlier one may hold the second copy of a card of it
    near where the first lay: by sight the two are one card (plastic 49007: S's D7 C8 S9 DT DJ
    over its D5 H5 H6 S6 D7 C7, the new D7 ~15 mm from the old, played as C8 S9 DT DJ). The
    tracker cannot tell, so the change offers the label as a card that may lie there (``MAYBE``,
    at ``NEAR_SECOND_COST``): the referee adds it only to make a play illegal as read legal."""
    tr = Tracker(calibration())
    first = fan(["S3", "D8", "S4"], 330.0, 700.0)
    feed(tr, [detections(first, hide=fan_hidden(0, 3))] * 3)
    feed(tr, [[]] * 2, t0=1.0, busy={"S"})
    second = fan(["D8", "D9", "DT"], 345.0, 700.0)
    old = detections(first, hide=fan_hidden(0, 3) | {(1, 0)})
    ch = feed(tr, [old + detections(second, hide=fan_hidden(0, 3))] * 3, t0=2.0)
    assert [(c.added, c.removed) for c in ch] == [(("D9", "DT"), ())]
    assert (MAYBE, (("D8", NEAR_SECOND_COST),)) in ch[0].doubts
    # a card the new play does not lie near is no such doubt; nor one lying near the old place
    # of a label the new play adds a second copy of, far from it (S3): only where the new
    # cards lie counts
    for far, added in (
        (["D9", "DT", "DJ"], ("D9", "DJ", "DT")),
        (["D9", "S3", "DJ"], ("D9", "DJ", "S3")),
    ):
        tr2 = Tracker(calibration())
        feed(tr2, [detections(first, hide=fan_hidden(0, 3))] * 3)
        feed(tr2, [[]] * 2, t0=1.0, busy={"S"})
        laid = detections(fan(far, 560.0, 700.0), hide=fan_hidden(0, 3))
        ch2 = feed(tr2, [detections(first, hide=fan_hidden(0, 3)) + laid] * 3, t0=2.0)
        assert [c.added for c in ch2] == [added]
        assert not [d for d in ch2[0].doubts if d[0] == MAYBE]


def test_a_words_pieces_paired_as_a_second_diagonal_may_be_no_second_card() -> None:
    """Plastic's jokers print a long vertical word in all four corners, and the corner stage
    boxes it in pieces. Game 49082 (1280x720, 108.8 s): E's single SB was seen as six boxes, two
    of them under the floor; the sure top and bottom pieces paired as the card, and a bottom
    piece with a piece under the floor on the other side as a second SB whose centre lay 8.7 mm
    off, over ``same_mm``: played SB SB, illegal, and left so. The less sure of two such cards
    gets "no card there" at ``PRINT_DOUBLE_COST``; two SB fanned 17 mm apart stay two sure ones."""
    from dataclasses import replace

    from vision.track import PRINT_DOUBLE_COST

    tr = _learnt(75.0)
    # the six boxes as found (table mm, moved into S's zone), with their scores
    seen_at = [
        (679.1, 374.6, 0.711),
        (751.4, 397.8, 0.522),
        (746.4, 360.8, 0.475),
        (683.0, 420.0, 0.359),
        (681.9, 405.3, 0.233),
        (746.8, 369.8, 0.161),
    ]
    dx, dy = S_PLAY[0] - 715.0, S_PLAY[1] - 390.0
    dets = [replace(_corner_at(x + dx, y + dy, "SB"), score=s) for x, y, s in seen_at]
    cards = tr._cluster(*tr._hysteresis(0.0, dets))
    assert [(c.card, c.corners) for c in cards] == [("SB", 2), ("SB", 2)]
    nones = sorted(dict(c.alts).get("none", np.inf) for c in cards)
    assert nones == [PRINT_DOUBLE_COST, np.inf]
    # the surer card is the one kept sure: its pair is the two sure pieces 0 and 1
    (sure,) = [c for c in cards if "none" not in dict(c.alts)]
    assert (sure.x_mm, sure.y_mm) == pytest.approx((715.25 + dx, 386.2 + dy), abs=0.5)

    def four(x: float, y: float) -> list[Det]:
        return [_corner_at(x + a, y + b, "SB") for a, b in ((-25.5, -32.0), (25.5, 32.0))] + [
            _corner_at(x + a, y + b, "SB") for a, b in ((25.5, -32.0), (-25.5, 32.0))
        ]

    x, y = S_PLAY
    lower = [d for i, d in enumerate(four(x - 17, y)) if i in (0, 3)]
    fanned = tr.cards_in(lower + four(x, y))
    assert Counter(c.card for c in fanned) == Counter({"SB": 2})
    assert all("none" not in dict(c.alts) for c in fanned)
