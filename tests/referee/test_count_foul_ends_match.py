"""A seat's first wrong count report that is already a foul ending the match (engine/edits.py
``_count_off``; issue 41): no second report comes to agree with it, but the table plays on in a
deal the referee has closed, and those turns are the evidence instead."""

from __future__ import annotations

from dataclasses import replace

from engine.deal import effective_events, fold
from engine.profiles import load_profile
from tests.referee.helpers import Table
from tests.referee.test_gone_after_unseen_passes import cam, w_down_to_its_last_card


def test_a_count_foul_that_ended_the_match_goes_when_the_table_plays_on() -> None:
    """No warning before a count foul, and one foul loses the match: W's bomb D8 D8 S8 H8 S8 read
    S8 S8 D8 D8 leaves W one card, two by the count; W says "one card", a foul, and the match
    ends. W then leads C3 in a deal the referee has closed: the bomb is re-read with the eight
    the camera missed, the foul and the match's end go, and W goes out with C3."""
    standard = load_profile("standard")
    t = Table(replace(standard, fouls=replace(standard.fouls, limit=1, count_report_warnings=0)))
    w_down_to_its_last_card(t)
    t.do("count_report", seat="W", count=1)
    assert [e.type for e in t.ref.events][-2:] == ["foul", "match_ended"]
    cam(t, "W", "C3")
    (fix,) = [e for e in t.ref.events if e.type == "correction"]
    assert "W reported 1 cards" in fix["reason"] and "missed in the fan" in fix["reason"]
    events = effective_events(t.ref.events)
    assert not [e for e in events if e.type in ("warning", "foul", "match_ended", "notice")]
    (bomb,) = [e for e in events if e.type == "play" and {c[1] for c in e["cards"]} == {"8"}]
    assert len(bomb["cards"]) == 5
    assert [e["seat"] for e in events if e.type == "seat_out"] == ["W"]
    assert t.deal.counts["W"] == 0 and t.deal.turn == "S"
    assert fold(t.ref.events, t.profile) == t.ref.state
