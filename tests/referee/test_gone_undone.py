"""A seat taken as gone out that plays again (engine/decoder.py ``_undo_gone``; issue 41): the
passes ``_gone`` took back (put in for the seat's silent turns, ``_put_in``) come back with its
play, or the turns the others took around them are judged out of turn."""

from __future__ import annotations

from engine.deal import effective_events, fold
from tests.referee.helpers import Table
from tests.referee.test_gone_after_unseen_passes import cam


def test_a_seat_taken_as_gone_out_that_plays_again_gets_its_passes_back() -> None:
    """W holds two cards (by the count too) and leads C3; S, E and N play a run of clubs over
    it, W passing twice unseen. The first silent turn is a pass put in, the second takes W as
    gone out with C3 (the pass taken back). Then W plays CK on its turn: W had not gone out, its
    two passes stand again, nobody played out of turn, and W goes out with CK."""
    t = Table()
    t.do("deal_start", first_leader="W")
    leads = ("S3 H4 C5 D6 S7", "H3 C4 D5 S6 H7", "C8 D9 ST HJ CQ", "H9 CT DJ SQ HK")
    for play in (*leads, "S8 S8 D8 H8 D8"):
        cam(t, "W", play)
        for s in "SEN":
            t.pass_(s)
    assert t.deal.counts["W"] == 2
    cam(t, "W", "C3")
    reasons: list[str] = []
    for seat, card in zip("SEN" * 3, "C4 C5 C6 C7 C8 C9 CT CJ CQ".split(), strict=True):
        reasons += [e["reason"] for e in cam(t, seat, card) if e.type == "correction"]
    assert "taken as W's last play" in reasons[-1], reasons
    reasons += [e["reason"] for e in cam(t, "W", "CK") if e.type == "correction"]
    assert "W played on: it had not gone out" in reasons[-1]
    events = effective_events(t.ref.events)
    assert not [(e["kind"], e["seat"]) for e in events if e.type == "foul"]
    assert len([e for e in events if e.type == "pass" and e["seat"] == "W"]) == 2
    put_in = [o for o in t.ref.observations if o.type == "pass" and o.extra.get("unseen")]
    assert [o.seat for o in put_in] == ["W", "W"]
    assert [e["seat"] for e in events if e.type == "seat_out"] == ["W"]
    assert t.deal.counts == {"W": 0, "S": 24, "E": 24, "N": 24}
    assert fold(t.ref.events, t.profile) == t.ref.state
