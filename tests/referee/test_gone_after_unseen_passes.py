"""A seat gone out that the count says still holds a card, its silent turns taken one at a time as
passes the camera missed (engine/edits.py ``_gone``, engine/channel.py ``UNSEEN_COST``; issue 41,
game 47904: W's bomb D8 D8 S8 H8 S8 read as four eights, W never taken as out, E's and N's plays out
of turn around four passes put in for W and the deal's order wrong)."""

from __future__ import annotations

from engine.deal import effective_events, fold
from engine.events import Event
from tests.referee.helpers import Table


def cam(t: Table, seat: str, cards: str) -> list[Event]:
    """A play as the camera reports it: with a runner-up reading (too dear to matter here)."""
    first = cards.split()[0]
    doubts = [{"card": first, "or": [["SB", 4.9]]}]
    return t.do("played", seat=seat, cards=cards.split(), doubts=doubts)


def w_down_to_its_last_card(t: Table) -> None:
    """W leads 25 cards, the others passing each time: four straights, its five-card bomb
    D8 D8 S8 H8 S8 which the camera reads as S8 S8 D8 D8 (the H8 under the others), and HA.
    W holds one card (two by the count)."""
    t.do("deal_start", first_leader="W")
    plays = ("S3 H4 C5 D6 S7", "H3 C4 D5 S6 H7", "C8 D9 ST HJ CQ", "H9 CT DJ SQ HK")
    for play in (*plays, "S8 S8 D8 D8", "HA"):
        cam(t, "W", play)
        for s in "SEN":
            t.pass_(s)
    assert t.deal.counts["W"] == 2 and t.deal.turn == "W"


def test_a_seat_whose_turns_go_by_silent_again_is_taken_as_gone_out() -> None:
    """W leads C3, its last card, and goes out; S, E and N play a run of singles over it, W's turn
    going by each time without a word. The first silent turn is a pass the camera missed (one
    unseen pass is likelier than W's last card missed); at the second, W having gone out with C3
    is likelier than a second unseen pass (``_gone`` takes back the pass put in for W): W is out,
    no pass of W's after C3, no play out of turn, and N leads the next trick it won."""
    t = Table()
    w_down_to_its_last_card(t)
    cam(t, "W", "C3")
    reasons: list[str] = []
    turns = "C4 C5 C6 C7 C8 C9 CT CJ CQ CK CA D2 - -".split()
    for seat, card in zip("SEN" * 5, turns, strict=False):
        out = t.pass_(seat) if card == "-" else cam(t, seat, card)
        reasons += [e["reason"] for e in out if e.type == "correction"]
    t.do("trick_cleared")
    cam(t, "N", "H6")
    events = effective_events(t.ref.events)
    assert not [(e["kind"], e["seat"]) for e in events if e.type == "foul"]
    assert [e["seat"] for e in events if e.type == "seat_out"] == ["W"]
    assert len(reasons) == 2, reasons
    assert "W passed" in reasons[0]
    assert "taken as W's last play" in reasons[1] and "a pass put in since taken back" in reasons[1]
    (last,) = [e for e in events if e.type == "play" and e["seat"] == "W" and e["cards"] == ["C3"]]
    assert last["left"] == 0 and last["unseen"] == 1
    assert not [e for e in events if e.type == "pass" and e["seat"] == "W"]
    assert not [e for e in events if e.type == "notice" and e.data.get("ignored")]
    assert t.deal.order == ["W"] and t.deal.counts["W"] == 0 and t.deal.turn == "S"
    assert t.deal.counts["N"] == 22  # C6 C9 CQ D2 H6, each in turn
    assert fold(t.ref.events, t.profile) == t.ref.state
