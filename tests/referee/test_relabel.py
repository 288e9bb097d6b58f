"""Cards lying in a seat's play zone that the camera reads anew in another suit (``played`` with
``was``): the referee takes the new reading only where it fits the table better
(engine/decoder.py ``Decoder._late_cards``)."""

from __future__ import annotations

import pytest

from engine.deal import fold
from engine.observations import ObservationError, merge_amends, parse_observation
from tests.referee.helpers import Table
from tests.referee.test_hindsight import cam, in_effect, start


def plays(t: Table) -> list[tuple[str, list[str]]]:
    return [(p["seat"], sorted(p["cards"])) for p in in_effect(t, "play")]


def test_a_card_read_anew_settles_the_referees_bet_on_a_third_copy() -> None:
    """S's full house S3 S3 H3 S7 S7 and E's C3 C3 S9 H9 D9, read with an S3: a third S3. The
    referee bet on S's second S3 (C3 at 2.4 nats, against 3.1 for E's). When E's S3 is read
    C3 as E's hand passes, the bet is settled: S's play goes back to what the camera saw and
    E's is read C3 C3 S9 H9 D9 (seed 9406)."""
    t = Table()
    start(t)
    t.do(
        "played",
        seat="S",
        cards="S3 S3 H3 S7 S7".split(),
        doubts=[{"card": "S3", "or": [["C3", 2.4]]}],
    )
    out = t.do(
        "played",
        seat="E",
        cards="S3 C3 S9 H9 D9".split(),
        doubts=[{"card": "S3", "or": [["C3", 3.1]]}],
    )
    assert [e for e in out if e.type == "correction"]  # the bet
    assert plays(t)[0] == ("S", sorted("S3 C3 H3 S7 S7".split()))
    out = t.do("played", step=5.0, seat="E", cards=["C3"], was=["S3"])
    assert [e.type for e in out if e.type == "correction"] == ["correction"]  # one for both
    assert plays(t) == [
        ("S", sorted("S3 S3 H3 S7 S7".split())),
        ("E", sorted("C3 C3 S9 H9 D9".split())),
    ]
    assert not [f for f in in_effect(t, "foul") if f["kind"] == "duplicate_card"]
    # the camera's reading now, not a guess of the referee's that a later third copy may undo
    assert sorted(in_effect(t, "play")[-1]["camera"]) == sorted("C3 C3 S9 H9 D9".split())
    assert t.deal.counts["E"] == 22 and t.deal.turn == "N"
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_card_read_anew_that_fits_no_better_leaves_the_first_reading() -> None:
    t = Table()
    start(t)
    cam(t, "S", "S9")
    t.play("E", "SJ")
    out = t.do("played", seat="S", cards=["C9"], was=["S9"])
    assert [e.type for e in out] == ["notice"]
    assert "S9 in S's play zone read again as C9; the first reading stands" in out[0]["detail"]
    assert plays(t) == [("S", ["S9"]), ("E", ["SJ"])]
    assert t.deal.turn == "N" and not t.fouls()


def test_a_card_read_anew_that_removes_a_third_copy_is_taken() -> None:
    """S's triple read S9 S9 S9 (a third copy: illegal as read, probably a misread); one of them
    read anew as C9: the play is read C9 S9 S9, a legal triple."""
    t = Table()
    start(t)
    cam(t, "S", "S9 S9 S9")
    assert sorted(f["kind"] for f in in_effect(t, "foul")) == ["duplicate_card", "illegal_play"]
    out = t.do("played", seat="S", cards=["C9"], was=["S9"])
    (corr,) = [e for e in out if e.type == "correction"]
    assert "S9 in S's play zone read again as C9" in corr["reason"]
    assert plays(t) == [("S", sorted("C9 S9 S9".split()))]
    assert not in_effect(t, "foul") and t.deal.turn == "E"
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_card_read_anew_with_no_play_holding_it_is_a_notice() -> None:
    t = Table()
    start(t)
    cam(t, "S", "S9")
    out = t.do("played", seat="E", cards=["C9"], was=["S9"])
    assert [e.type for e in out] == ["notice"]
    assert "no play of E's this trick holds S9" in out[0]["detail"]
    assert plays(t) == [("S", ["S9"])] and t.deal.turn == "E"


def test_was_must_name_the_same_ranks() -> None:
    base = {"t": 3, "type": "played", "seat": "S", "cards": ["C3"]}
    with pytest.raises(ObservationError, match="'was' names 2 cards for 1"):
        parse_observation({**base, "was": ["S3", "S4"]})
    with pytest.raises(ObservationError, match=r"'was'\[0\] = S4 for C3: a card read anew keeps"):
        parse_observation({**base, "was": ["S4"]})
    with pytest.raises(ObservationError, match="'amends' and 'was' together"):
        parse_observation({**base, "was": ["S3"], "amends": 1.0})
    with pytest.raises(ObservationError, match=r"'was'\[0\]"):
        parse_observation({**base, "was": ["X3"]})
    assert parse_observation({**base, "was": ["s3"]}).extra["was"] == ["S3"]


def test_merge_amends_applies_a_reading_anew_to_its_play() -> None:
    obs = [
        parse_observation({"t": 1.0, "type": "played", "seat": "S", "cards": ["S3", "C3"]}),
        parse_observation({"t": 1.5, "type": "played", "seat": "E", "cards": ["CJ", "SJ"]}),
        parse_observation(
            {"t": 3.0, "type": "played", "seat": "S", "cards": ["C3"], "was": ["S3"]}
        ),
        parse_observation({"t": 4.0, "type": "trick_cleared"}),
        parse_observation(
            {"t": 5.0, "type": "played", "seat": "E", "cards": ["HJ"], "was": ["SJ"]}
        ),
    ]
    got = [(o.type, o.seat, sorted(str(c) for c in o.cards)) for o in merge_amends(obs)]
    assert got == [
        ("played", "S", ["C3", "C3"]),
        ("played", "E", ["CJ", "SJ"]),
        ("trick_cleared", None, []),
        ("played", "E", ["HJ"]),  # the trick was cleared: no play of E's holds SJ now
    ]


def test_a_card_laid_over_one_of_its_seats_own_of_its_rank_is_its_play_in_hindsight() -> None:
    """S's pair C8 C8 lies in its zone, unswept, when S answers W's S7 with a single S8 laid
    over one C8: the camera sees a C8 read anew as S8 (``was``), which fits no play better, so
    the first reading stands and no play is counted. E and N then play on as if S had played:
    the reading is kept as a glimpse of S's play, and hindsight puts it in where S was on turn,
    not a pass (plastic 49087, 1280x720, 2026-12-07)."""
    t = Table()
    start(t, leader="E")
    t.play("E", "C3 D3 H3 C7 D7")
    t.pass_("N")
    cam(t, "W", "H2 C7")  # illegal: does not beat the full house
    cam(t, "S", "C8 C8")  # illegal too: E leads again, S's pair still lying there
    t.play("E", "S5")
    t.play("N", "S6")
    t.play("W", "S7")
    out = t.do("played", seat="S", cards=["S8"], was=["C8"])
    assert [e.type for e in out] == ["notice"]
    cam(t, "E", "C9")
    cam(t, "N", "HK")
    assert plays(t)[-4:] == [("W", ["S7"]), ("S", ["S8"]), ("E", ["C9"]), ("N", ["HK"])]
    assert not [f for f in in_effect(t, "foul") if f["kind"] == "out_of_turn"]
    assert fold(t.ref.events, t.profile) == t.ref.state
