"""A play the camera read with a card too many, shown by the seat's spoken counts (engine/edits.py
``_count_off``; issue 41): a ghost index beside a fan, or one card counted twice in a bomb, leaves
the seat by the count a card short of its hand: its true counts are judged wrong, and it is taken
as out with cards still to play."""

from __future__ import annotations

from engine.deal import effective_events, fold
from engine.events import Event
from tests.referee.helpers import Table
from tests.referee.test_gone_after_unseen_passes import cam


def w_leads(t: Table, *plays: tuple[str, list[object]]) -> None:
    """W leads four straights and ``plays`` (cards as read, doubts), the others passing each
    time."""
    t.do("deal_start", first_leader="W")
    for play in ("S3 H4 C5 D6 S7", "H3 C4 D5 S6 H7", "C8 D9 ST HJ CQ", "H9 CT DJ SQ HK"):
        cam(t, "W", play)
        for s in "SEN":
            t.pass_(s)
    for cards, doubts in plays:
        t.do("played", seat="W", cards=cards.split(), doubts=doubts)
        for s in "SEN":
            t.pass_(s)
    assert t.deal.turn == "W"


def w_plays_out(t: Table, *plays: str) -> None:
    """W leads ``plays``, the others passing, the last going out."""
    for n, play in enumerate(plays, 1):
        cam(t, "W", play)
        for s in "SEN" if n < len(plays) else "":
            t.pass_(s)


def test_two_counts_over_find_the_ghost_card_the_camera_named() -> None:
    """W leads C3, read C3 D3 (a pair; the D3 doubted as no card there, a ghost beside it): W
    holds HA DA, one card by the count. W says "two cards" twice: once may be a misreport (a
    warning stands), twice is the camera's ghost: C3 D3 is re-read C3, the warning goes, and W
    goes out with its second card, not after its first."""
    t = Table()
    w_leads(t, ("S8 S8 D8 D8", []), ("C3 D3", [{"card": "D3", "or": [[None, 1.2]]}]))
    assert t.deal.counts["W"] == 1
    t.do("count_report", seat="W", count=2)
    assert [e["kind"] for e in t.ref.events if e.type == "warning"] == ["card_count"]
    assert not [e for e in t.ref.events if e.type == "correction"]
    t.do("count_report", seat="W", count=2)
    (fix,) = [e for e in t.ref.events if e.type == "correction"]
    assert "W reported 2 cards" in fix["reason"] and "not there" in fix["reason"]
    w_plays_out(t, "HA", "DA")
    events = effective_events(t.ref.events)
    assert not [e for e in events if e.type in ("warning", "foul")]
    (three,) = [e for e in events if e.type == "play" and "C3" in e["cards"]]
    assert three["cards"] == ["C3"] and three["camera"] == ["C3", "D3"]
    assert [e["seat"] for e in events if e.type == "seat_out"] == ["W"]
    assert t.deal.counts["W"] == 0 and t.deal.turn == "S"
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_two_counts_over_find_a_copy_too_many_in_a_bomb_s_fan() -> None:
    """W's bomb S8 S8 D8 D8 read S8 S8 D8 D8 H8 (a five-card bomb; no doubt names the H8 as no
    card): W holds C3 HA DA, two by the count. Two reports of three: the copy too many is sought
    in the fan, at the cost of a card seen that was not there, and W goes out with DA."""
    t = Table()
    w_leads(t, ("S8 S8 D8 D8 H8", [{"card": "H8", "or": [["H9", 4.0]]}]))
    assert t.deal.counts["W"] == 2
    for _ in range(2):
        t.do("count_report", seat="W", count=3)
    (fix,) = [e for e in t.ref.events if e.type == "correction"]
    assert "in the fan" in fix["reason"]
    w_plays_out(t, "C3", "HA", "DA")
    events = effective_events(t.ref.events)
    assert not [e for e in events if e.type in ("warning", "foul")]
    (bomb,) = [e for e in events if e.type == "play" and e["cards"].count("S8") == 2]
    assert sorted(bomb["cards"]) == ["D8", "D8", "S8", "S8"]
    assert [e["seat"] for e in events if e.type == "seat_out"] == ["W"]
    assert t.deal.counts["W"] == 0 and t.deal.turn == "S"
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_seat_out_by_the_count_that_plays_again_had_a_ghost_card() -> None:
    """W leads C3, read C3 D3 (the D3 doubted as no card): W holds HA DA, one by the count. W
    leads HA and is out by the count; after the others pass, W leads DA. A seat that has gone out
    holds no cards, so its play is the camera's evidence that it kept one: the ghost D3 goes, W
    goes out with DA (not after HA), and no play out of turn stands."""
    t = Table()
    w_leads(t, ("S8 S8 D8 D8", []), ("C3 D3", [{"card": "D3", "or": [[None, 1.2]]}]))
    w_plays_out(t, "HA")
    events = w_out_too_soon_plays_da(t, "not there")
    assert not [e for e in events if e.type in ("warning", "foul")]
    (three,) = [e for e in events if e.type == "play" and "C3" in e["cards"]]
    assert three["cards"] == ["C3"] and three["camera"] == ["C3", "D3"]
    assert t.deal.turn == "S"


def w_out_too_soon_plays_da(t: Table, why: str) -> list[Event]:
    """W, out by the count, leads DA after the others pass: one correction (``why`` in its
    reason), after which W goes out with DA. The events in effect."""
    assert [e["seat"] for e in t.ref.events if e.type == "seat_out"] == ["W"]  # too soon
    for s in "SEN":
        t.pass_(s)
    cam(t, "W", "DA")
    (fix,) = [e for e in t.ref.events if e.type == "correction"]
    assert "gone out by the count" in fix["reason"] and why in fix["reason"]
    events = effective_events(t.ref.events)
    (out,) = [e for e in events if e.type == "seat_out"]
    last = [e for e in events if e.type == "play"][-1]
    assert out["seat"] == "W" and last["cards"] == ["DA"] and out.t == last.t
    assert t.deal.counts["W"] == 0
    assert fold(t.ref.events, t.profile) == t.ref.state
    return events


def test_a_ghost_card_in_an_illegal_play_found_when_the_seat_plays_again() -> None:
    """W (five cards: DJ S7 C9 D9 DA) plays DJ S7, not a combination, read DJ S7 SB (the SB
    doubted as no card, a ghost beside the play; tigullio game 48651's S). S wins the trick
    W lost, leads C4, W beats it with C9, leads D9 and is out by the count; the others pass and
    W leads DA. The ghost goes and the play stays the foul it was, for review as the camera's;
    W goes out with DA."""
    t = Table()
    w_leads(t, ("S8 S8", []))
    ghost = [{"card": "SB", "or": [[None, 0.5]]}]
    t.do("played", seat="W", cards=["DJ", "S7", "SB"], doubts=ghost)
    assert t.deal.counts["W"] == 2 and t.deal.turn == "S"
    for play in ("H4 S4", "C4"):
        cam(t, "S", play)
        for s in "EN":
            t.pass_(s)
    w_plays_out(t, "C9", "D9")
    events = w_out_too_soon_plays_da(t, "no SB")
    (foul,) = [e for e in events if e.type == "foul"]
    assert (
        foul["kind"] == "illegal_play" and sorted(foul["cards"]) == ["DJ", "S7"] and foul["review"]
    )


def test_a_ghost_card_found_when_the_seat_plays_again_after_a_play_taken_back() -> None:
    """Tigullio 48861 (issue 41): W played C3 out of turn early on (taken back: the count keeps
    it), then answered E's D4 with DA, read DA D9 (not a combination; no doubt names the D9 as
    no card), so W holds one card fewer by the count. W goes out by the count with CK and then
    leads C3. Cards taken back that stayed down at the table would leave W fewer cards than the
    count, never more, so the play taken back is no reason to hold back: the ghost D9 goes (the
    DA a legal answer now), W goes out with C3, no foul but the C3 played out of turn."""
    t = Table()
    t.do("deal_start", first_leader="W")
    for play in ("S3 H4 C5 D6 S7", "H3 C4 D5 S6 H7", "C8 D9 ST HJ CQ", "S8 S8 D8 D8"):
        cam(t, "W", play)
        for s in "SEN":
            t.pass_(s)
    cam(t, "W", "H9 CT DJ SQ HK")
    t.pass_("S")
    cam(t, "W", "C3")  # E on turn: taken back
    for play in ("S5 S5 H5 H5", "D4", "S9 S9 C9 C9", "D5"):
        cam(t, "E", play)
        t.pass_("N")
        if play == "D4":
            t.do(
                "played", seat="W", cards=["DA", "D9"], doubts=[{"card": "D9", "or": [["D8", 1.5]]}]
            )
            t.pass_("S")
        elif play == "D5":
            cam(t, "W", "CK")
        else:
            t.pass_("W")
            t.pass_("S")
            t.do("trick_cleared")
    assert t.deal.counts["W"] == 0 and not t.of("correction")
    for s in "SEN":
        t.pass_(s)
    t.do("trick_cleared")
    cam(t, "W", "C3")
    (fix,) = [e for e in t.ref.events if e.type == "correction"]
    assert "gone out by the count: its DA D9 re-read as DA" in fix["reason"]
    events = effective_events(t.ref.events)
    plays = [(e["seat"], e["cards"]) for e in events if e.type == "play"]
    assert plays[-5:] == [
        ("W", ["DA"]),
        ("E", ["S9", "S9", "C9", "C9"]),
        ("E", ["D5"]),
        ("W", ["CK"]),
        ("W", ["C3"]),
    ]
    fouls = [(e["kind"], e["cards"]) for e in events if e.type == "foul"]
    assert fouls == [("out_of_turn", ["C3"])]
    (out,) = [e for e in events if e.type == "seat_out"]
    assert out["seat"] == "W" and out.t == t.t
    assert fold(t.ref.events, t.profile) == t.ref.state
