"""Rulings a referee enters by hand (the kiosk's referee mode): ``foul`` and ``deal_result``."""

from __future__ import annotations

import pytest

from engine.deal import fold
from engine.observations import ObservationError, dump_observation, parse_observation

from .helpers import Table, chunks_for
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


def test_a_ruled_deal_result_ends_the_deal_and_scores_it() -> None:
    t = Table("standard")
    start(t)
    t.play("S", "S3")
    t.do("deal_result", order=["s", "n", "E", "W"], detail="E and W conceded")
    ended = t.of("deal_ended")[-1]
    assert ended["order"] == ["S", "N", "E", "W"] and ended["ruled"] is True
    assert ended["levels"] == {"NS": "5", "EW": "2"}  # 1-2 (double down): three levels
    assert t.ref.state.match.levels == {"NS": "5", "EW": "2"}
    assert fold(t.ref.events, t.profile) == t.ref.state
    # the next deal is played at NS's level, after the double-down tribute
    t.do("deal_start")
    t.do("tribute", seat="E", card="SA")
    t.do("tribute", seat="W", card="SK")
    t.do("tribute_return", seat="S", card="S3")
    t.do("tribute_return", seat="N", card="C3")
    assert t.of("deal_started")[-1]["level"] == "5"


def test_a_ruled_result_must_keep_the_seats_already_out() -> None:
    t = Table("standard")
    start(t)
    chunks = chunks_for(0)  # S goes out on bombs; the others pass
    for i, chunk in enumerate(chunks):
        t.play("S", chunk)
        if i < len(chunks) - 1:
            for seat in ("E", "N", "W"):
                t.pass_(seat)
    assert t.deal.order == ["S"]
    t.do("deal_result", order=["N", "S", "E", "W"])
    assert not t.of("deal_ended") and "already out" in t.of("notice")[-1]["detail"]
    t.do("deal_result", order=["S", "E", "N", "W"])
    assert t.of("deal_ended")[-1]["order"] == ["S", "E", "N", "W"]
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_deal_result_observation_is_checked() -> None:
    o = parse_observation({"t": 1, "type": "deal_result", "order": ["n", "e", "s", "w"]})
    assert o.extra["order"] == ["N", "E", "S", "W"]
    assert parse_observation(dump_observation(o)) == o
    with pytest.raises(ObservationError, match="field 'order' must list the four seats"):
        parse_observation({"t": 1, "type": "deal_result", "order": ["N", "E"]})
    with pytest.raises(ObservationError, match="repeats a seat"):
        parse_observation({"t": 1, "type": "deal_result", "order": ["N", "E", "N", "W"]})
    with pytest.raises(ObservationError, match="not a seat"):
        parse_observation({"t": 1, "type": "deal_result", "order": ["N", "E", "S", "X"]})
