"""A bomb the camera read a card short, shown by the seat's spoken counts (engine/edits.py
``_count_off``; issue 41: five-card bombs read as four on rendered games, paris D8 D8 S8 H8 S8,
plastic HK DK SK DK, proc-serif SJ SJ DJ CJ DJ). The seat keeps by the count a card it never held:
its true counts are judged wrong, and its going out is missed."""

from __future__ import annotations

from engine.deal import effective_events, fold
from tests.referee.helpers import Table
from tests.referee.test_gone_after_unseen_passes import cam, w_down_to_its_last_card


def test_two_short_counts_find_the_bomb_s_missed_copy() -> None:
    """W's bomb D8 D8 S8 H8 S8 read S8 S8 D8 D8 (no doubt names the H8): W holds one card, two
    by the count. W says "one card" twice: once may be a misreport (a warning stands), twice
    agreeing is the camera's miss: the bomb is re-read with an eight it missed, the warning goes,
    and W goes out with its last card."""
    t = Table()
    w_down_to_its_last_card(t)
    t.do("count_report", seat="W", count=1)
    assert [e["kind"] for e in t.ref.events if e.type == "warning"] == ["card_count"]
    assert not [e for e in t.ref.events if e.type == "correction"]
    t.do("count_report", seat="W", count=1)
    (fix,) = [e for e in t.ref.events if e.type == "correction"]
    assert (
        "W reported 1 cards" in fix["reason"]
        and "a card the camera missed in the fan" in fix["reason"]
    )
    cam(t, "W", "C3")
    events = effective_events(t.ref.events)
    assert not [e for e in events if e.type in ("warning", "foul")]
    (bomb,) = [e for e in events if e.type == "play" and {c[1] for c in e["cards"]} == {"8"}]
    assert len(bomb["cards"]) == 5 and bomb["camera"] == ["S8", "S8", "D8", "D8"]
    assert [e["seat"] for e in events if e.type == "seat_out"] == ["W"]
    assert t.deal.counts["W"] == 0 and t.deal.turn == "S"
    assert fold(t.ref.events, t.profile) == t.ref.state
