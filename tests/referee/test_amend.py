"""Cards the camera found late in a seat's play zone (``played`` with ``amends``): the referee
reads that play again with them when it stays legal and the table's continuation does not clash
more (engine/decoder.py ``Decoder._late_cards``)."""

from __future__ import annotations

import pytest

from engine.deal import fold
from engine.observations import ObservationError, merge_amends, parse_observation
from tests.referee.helpers import Table
from tests.referee.test_hindsight import cam, in_effect, start


def led(t: Table, cards: str) -> float:
    """S leads ``cards`` as the camera read them; the play's time."""
    start(t)
    cam(t, "S", cards)
    return t.t


def test_a_card_found_late_joins_its_play() -> None:
    """S's five-card bomb was read a ten short; the fifth ten, found 0.2 s later with no hand
    near, makes it the bomb it was (as W's on seed 9406)."""
    t = Table()
    at = led(t, "CT HT HT DT")
    out = t.do("played", step=0.2, seat="S", cards=["CT"], amends=at)
    (corr,) = [e for e in out if e.type == "correction"]
    assert "CT found in S's play zone with no hand near" in corr["reason"]
    (play,) = in_effect(t, "play")
    assert sorted(play["cards"]) == sorted("CT CT HT HT DT".split()) and play.t == at
    assert play["combo"]["kind"] == "bomb" and play["combo"]["size"] == 5
    assert t.deal.counts["S"] == 22
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_late_card_that_would_make_the_play_illegal_is_not_added() -> None:
    t = Table()
    at = led(t, "HT HT")
    out = t.do("played", step=0.2, seat="S", cards=["C7"], amends=at)
    assert [e.type for e in out] == ["notice"]
    assert (
        "C7 found late in S's play zone, not added: the table's continuation would fit it no better"
        in out[0]["detail"]
    )
    assert [p["cards"] for p in in_effect(t, "play")] == [["HT", "HT"]]
    assert t.deal.counts["S"] == 25 and not t.fouls()


def test_a_late_card_is_not_added_when_the_continuation_would_clash() -> None:
    """E's bomb of five fives beat S's four tens; with a fifth ten S's bomb would beat it and
    E's play would be illegal: the late ten is not added."""
    t = Table()
    at = led(t, "CT HT HT DT")
    t.play("E", "S5 S5 H5 H5 D5", step=0.5)
    out = t.do("played", step=0.2, seat="S", cards=["CT"], amends=at)
    assert [e.type for e in out] == ["notice"] and "would fit it no better" in out[0]["detail"]
    assert len(in_effect(t, "play")) == 2 and not t.fouls()


def test_a_late_card_amends_the_cameras_reading_of_a_play_read_again() -> None:
    """S's full house H3 D3 D3 S8 S8 was seen with one S8: four cards are no play, and the
    referee read it as a triple, the S8 taken for no card. The second S8, found 0.2 s later with
    no hand near, joins what the camera saw: the full house it was (seed 9910, where E's and
    W's full houses played on it were read as triples)."""
    t = Table()
    start(t)
    doubts = [{"card": "S8", "or": [["C8", 0.3], [None, 1.0]]}]
    out = t.do("played", seat="S", cards="H3 D3 D3 S8".split(), doubts=doubts)
    (first,) = [e for e in out if e.type == "play"]
    assert sorted(first["cards"]) == ["D3", "D3", "H3"] and "no card for S8" in first["reread"]
    at = t.t
    out = t.do("played", step=0.2, seat="S", cards=["S8"], amends=at)
    (corr,) = [e for e in out if e.type == "correction"]
    assert "(the camera saw H3 D3 D3 S8): read as" in corr["reason"]
    (play,) = in_effect(t, "play")
    assert sorted(play["cards"]) == sorted("H3 D3 D3 S8 S8".split()) and play.t == at
    assert play["combo"]["kind"] == "full_house"
    assert t.deal.counts["S"] == 22
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_late_card_with_no_such_play_is_a_notice() -> None:
    t = Table()
    led(t, "HT HT")
    out = t.do("played", step=0.2, seat="S", cards=["HT"], amends=1.5)
    assert [e.type for e in out] == ["notice"] and "no play by S observed at t=1.5" in out[0][
        "detail"
    ]
    out = t.do("played", step=0.2, seat="E", cards=["HT"], amends=t.t - 0.4)
    assert [e.type for e in out] == ["notice"]
    assert [p["cards"] for p in in_effect(t, "play")] == [["HT", "HT"]]


def test_amends_must_be_a_time() -> None:
    with pytest.raises(ObservationError, match="'amends' = 'soon' is not a time"):
        parse_observation(
            {"t": 3, "type": "played", "seat": "S", "cards": ["HT"], "amends": "soon"}
        )


def test_merge_amends_puts_late_cards_in_their_play() -> None:
    obs = [
        parse_observation({"t": 1.0, "type": "played", "seat": "S", "cards": ["HT", "DT"]}),
        parse_observation({"t": 1.5, "type": "played", "seat": "E", "cards": ["CJ"]}),
        parse_observation(
            {"t": 1.6, "type": "played", "seat": "S", "cards": ["ST"], "amends": 1.0}
        ),
        parse_observation(
            {"t": 1.7, "type": "played", "seat": "W", "cards": ["SA"], "amends": 0.2}
        ),
    ]
    got = [(o.seat, [str(c) for c in o.cards]) for o in merge_amends(obs)]
    assert got == [("S", ["HT", "DT", "ST"]), ("E", ["CJ"]), ("W", ["SA"])]
