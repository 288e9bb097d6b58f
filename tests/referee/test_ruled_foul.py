"""Fouls a referee marks by hand (the kiosk's referee mode): the ``foul`` observation."""

from __future__ import annotations

import pytest

from engine.deal import fold
from engine.observations import ObservationError, dump_observation, parse_observation

from .helpers import Table
from .test_scenarios import start


def test_a_marked_foul_is_recorded_with_the_profiles_penalty() -> None:
    t = Table("standard")
    start(t)
    t.play("S", "S3")
    assert t.deal.turn == "E"
    t.do("foul", seat="E", kind="exposed_card", detail="dropped a card face up")
    f = t.fouls()[-1]
    assert (f["seat"], f["kind"], f["ruled"]) == ("E", "exposed_card", True)
    assert "marked by the referee: dropped a card face up" == f["detail"]
    assert t.deal.turn == "N"  # E on turn loses the trick, as for a seen exposure
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_three_marked_fouls_end_the_match() -> None:
    t = Table("standard")
    start(t)
    t.play("S", "S3")
    for seat, kind in (("N", "slow_play"), ("S", "card_count"), ("N", "wrong_tribute")):
        t.do("foul", seat=seat, kind=kind)
    ended = t.of("match_ended")
    assert ended and ended[0]["winner"] == "EW" and ended[0]["reason"] == "fouls"
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_foul_marked_outside_a_deal_is_a_notice_not_a_foul() -> None:
    t = Table("standard")
    t.do("foul", seat="N", kind="slow_play")
    assert not t.fouls() and "outside a deal" in t.of("notice")[-1]["detail"]


def test_foul_observation_round_trips_and_bad_kind_is_named() -> None:
    o = parse_observation({"t": 3, "type": "foul", "seat": "w", "kind": "out_of_turn"})
    assert parse_observation(dump_observation(o)) == o and o.seat == "W"
    with pytest.raises(ObservationError, match="field 'kind' = 'cheating' is not a foul kind"):
        parse_observation({"t": 3, "type": "foul", "seat": "W", "kind": "cheating"})
    with pytest.raises(ObservationError, match="field 'seat'"):
        parse_observation({"t": 3, "type": "foul", "kind": "slow_play"})
