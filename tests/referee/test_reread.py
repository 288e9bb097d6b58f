"""Re-reading a camera play that is illegal as read (engine/channel.py ``reread``): the camera's
runner-up readings (``doubts`` of a played observation) make a legal play within the budget."""

from __future__ import annotations

import pytest

from engine.cards import parse_card
from engine.deal import fold
from engine.observations import ObservationError, parse_observation
from engine.referee import REREAD_BUDGET, reread
from tests.referee.helpers import Table


def start(t: Table, leader: str = "S") -> None:
    t.do("deal_start", first_leader=leader)


def doubt(card: str, *alts: tuple[str | None, float]) -> dict[str, object]:
    return {"card": card, "or": [[a, c] for a, c in alts]}


def plays(t: Table) -> list[dict[str, object]]:
    return [e.data for e in t.ref.events if e.type == "play"]


def test_a_rank_slip_in_a_straight_is_re_read_and_says_so() -> None:
    t = Table()
    start(t)
    t.do("played", seat="S", cards="D3 C4 H5 S6 DA".split(), doubts=[doubt("DA", ("D7", 1.2))])
    (p,) = plays(t)
    assert sorted(p["cards"]) == sorted(["D3", "C4", "H5", "S6", "D7"])  # type: ignore[arg-type]
    assert p["legal"] is True and p["combo"]["kind"] == "straight"  # type: ignore[index]
    assert p["camera"] == ["D3", "C4", "H5", "S6", "DA"]
    assert "D7 for DA" in str(p["reread"])
    assert not t.fouls()
    assert t.deal.counts["S"] == 22 and t.deal.turn == "E"
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_runner_up_over_the_budget_leaves_the_play_illegal() -> None:
    t = Table()
    start(t)
    far = REREAD_BUDGET + 0.5
    t.do("played", seat="S", cards="D3 C4 H5 S6 DA".split(), doubts=[doubt("DA", ("D7", far))])
    (p,) = plays(t)
    assert p["legal"] is False and "camera" not in p
    assert [f["kind"] for f in t.fouls()] == ["illegal_play"]


def test_a_legal_reading_is_kept_whatever_the_doubts() -> None:
    t = Table()
    start(t)
    t.do("played", seat="S", cards=["DA"], doubts=[doubt("DA", ("D4", 0.01))])
    (p,) = plays(t)
    assert p["cards"] == ["DA"] and p["legal"] is True and "camera" not in p


def test_two_doubtful_cards_are_changed_together_to_beat_the_trick() -> None:
    t = Table()
    start(t)
    t.play("S", "S9 S9")
    # E's pair of fives does not beat nines; one T alone is not a pair; both Ts (cost 2.0) are
    t.do(
        "played",
        seat="E",
        cards="S5 S5".split(),
        doubts=[doubt("S5", ("ST", 1.0)), doubt("S5", ("ST", 1.0))],
    )
    p = plays(t)[-1]
    assert p["cards"] == ["ST", "ST"] and p["legal"] is True
    assert not t.fouls()


def test_a_card_that_is_not_there_is_dropped() -> None:
    t = Table()
    start(t)
    # a corner on card art read as C7 beside a pair
    t.do("played", seat="S", cards="S3 S3 C7".split(), doubts=[doubt("C7", (None, 0.6))])
    (p,) = plays(t)
    assert p["cards"] == ["S3", "S3"] and p["combo"]["kind"] == "pair"  # type: ignore[index]
    assert "no card for C7" in str(p["reread"])
    assert t.deal.counts["S"] == 25


def test_a_third_copy_is_re_read_as_the_other_suit() -> None:
    t = Table()
    start(t)
    t.play("S", "SA SA")
    for s in "ENW":
        t.pass_(s)
    assert t.deal.turn == "S"
    t.do("played", seat="S", cards=["SA"], doubts=[doubt("SA", ("CA", 1.5), ("HA", 2.5))])
    p = plays(t)[-1]
    assert p["cards"] == ["CA"] and p["camera"] == ["SA"]
    assert not t.fouls("duplicate_card")


def test_out_of_turn_is_not_re_read() -> None:
    t = Table()
    start(t)
    t.do("played", seat="N", cards=["DA"], doubts=[doubt("DA", ("D4", 0.1))])
    assert [f["kind"] for f in t.fouls()] == ["out_of_turn"]


def test_reread_tries_cheapest_first_and_respects_the_budget() -> None:
    cards = [parse_card(c) for c in "S3 S4".split()]
    d = [
        (parse_card("S4"), ((parse_card("S3"), 2.0), (parse_card("H3"), 1.0))),
        (parse_card("S3"), ((parse_card("S4"), 1.5),)),
    ]

    def pair(cs: list[object]) -> bool:
        return len(cs) == 2 and str(cs[0])[1] == str(cs[1])[1]

    got = reread(cards, d, pair)  # type: ignore[arg-type]
    assert got is not None
    new, cost, changes = got
    assert cost == 1.0 and changes == ["H3 for S4"]
    assert reread(cards, d, pair, budget=0.9) is None  # type: ignore[arg-type]
    assert reread(cards, d, lambda cs: False) is None


def test_a_card_the_camera_may_have_missed_completes_an_illegal_play() -> None:
    """``{"card": null, "or": [...]}``: a fan's lower card the camera was not sure of. A single
    queen does not beat a pair of tens; with the queen it may have missed it is a pair."""
    t = Table()
    start(t)
    t.do("played", seat="S", cards=["ST", "HT"])
    maybe = doubt(None, ("SQ", 1.6), ("SK", 2.4))  # type: ignore[arg-type]
    t.do("played", seat="E", cards=["DQ"], doubts=[maybe])
    p = plays(t)[-1]
    assert sorted(p["cards"]) == ["DQ", "SQ"] and p["legal"] is True and p["camera"] == ["DQ"]  # type: ignore[arg-type]
    assert "SQ not seen" in str(p["reread"])
    assert not t.fouls() and t.deal.counts["E"] == 25
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_legal_play_takes_no_card_the_camera_may_have_missed() -> None:
    t = Table()
    start(t)
    t.do("played", seat="S", cards=["DQ"], doubts=[doubt(None, ("SQ", 0.2))])  # type: ignore[arg-type]
    (p,) = plays(t)
    assert p["cards"] == ["DQ"] and "camera" not in p and t.deal.counts["S"] == 26


def test_doubts_round_trip_and_bad_doubts_are_named() -> None:
    raw = {
        "t": 1.0,
        "type": "played",
        "seat": "S",
        "cards": ["D3", "DA"],
        "doubts": [{"card": "DA", "or": [["D4", 1.25], [None, 3.0]]}],
    }
    o = parse_observation(raw)
    assert o.doubts == ((parse_card("DA"), ((parse_card("D4"), 1.25), (None, 3.0))),)
    assert parse_observation(o.to_json()) == o and parse_observation(o.to_json()).doubts == o.doubts
    bad = [
        ({"card": "C9", "or": []}, "not (or not that often) among the played cards"),
        ({"card": "DA", "or": [["D4", -1]]}, "cost must be a number >= 0"),
        ({"card": "DA", "or": [["Z9", 1]]}, "'or'[0]"),
        ({"card": "DA"}, "needs 'card' and 'or'"),
        ("DA", "needs 'card' and 'or'"),
    ]
    for item, msg in bad:
        with pytest.raises(ObservationError, match=r"doubts") as exc:
            parse_observation({**raw, "doubts": [item]}, where="obs.jsonl line 3")
        assert msg in str(exc.value) and "obs.jsonl line 3" in str(exc.value)
    with pytest.raises(ObservationError, match="must be a list"):
        parse_observation({**raw, "doubts": "DA"})
    # a card the camera may have missed: null, read as cards
    maybe = {**raw, "doubts": [{"card": None, "or": [["SQ", 1.5]]}]}
    m = parse_observation(maybe)
    assert m.doubts == ((None, ((parse_card("SQ"), 1.5),)),)
    assert parse_observation(m.to_json()).doubts == m.doubts
    assert m.to_json()["doubts"] == [{"card": None, "or": [["SQ", 1.5]]}]
    with pytest.raises(ObservationError, match="read as cards, not null"):
        parse_observation({**raw, "doubts": [{"card": None, "or": [[None, 1.0]]}]})
    two = {**raw, "doubts": [{"card": "DA", "or": []}, {"card": "DA", "or": []}]}
    with pytest.raises(ObservationError, match="not that often"):
        parse_observation(two)


def test_three_copies_in_one_play_cannot_be_so_dearer_runner_ups_are_used() -> None:
    """Clubs read as spades: S7 S7 S7 D7 D7 cannot be (two decks), so a runner-up dearer than
    the budget for a merely illegal play is taken; the same cost on a possible reading is not."""
    t = Table()
    start(t)
    dear = REREAD_BUDGET + 0.3
    t.do(
        "played",
        seat="S",
        cards="S7 S7 S7 D7 D7".split(),
        doubts=[doubt("S7", ("C7", dear)), doubt("D7", ("H7", 1.07))],
    )
    (p,) = plays(t)
    assert sorted(p["cards"]) == sorted("S7 S7 C7 D7 D7".split())  # type: ignore[arg-type]
    assert p["combo"]["kind"] == "bomb" and "more than two copies" in str(p["reread"])  # type: ignore[index]
    assert not t.fouls()
    # a possible but illegal reading with the same runner-up stays illegal
    t2 = Table()
    start(t2)
    t2.do("played", seat="S", cards="S7 D8".split(), doubts=[doubt("D8", ("D7", dear))])
    assert [f["kind"] for f in t2.fouls()] == ["illegal_play"]


def test_an_illegal_play_that_holds_a_third_copy_cannot_be_either() -> None:
    """E's SB read SB SB after S played an SB (plastic 48947): a pair on a single, and a third
    SB. As a foul it would need the earlier SB misread too, so a "no card" dearer than the
    budget for a merely illegal play is taken; the same pair with no SB played stays illegal."""
    sb_sb = [doubt("SB", (None, REREAD_BUDGET + 0.27)), doubt("SB", (None, REREAD_BUDGET + 1.19))]

    def e_plays_sb_sb_on_d5(sb_before: bool) -> Table:
        t = Table()
        start(t)
        if sb_before:
            t.play("S", "SB")
            for s in "ENW":
                t.pass_(s)
        t.play("S", "D5")
        t.do("played", seat="E", cards=["SB", "SB"], doubts=sb_sb)
        return t

    t = e_plays_sb_sb_on_d5(True)
    p = plays(t)[-1]
    assert p["cards"] == ["SB"] and p["camera"] == ["SB", "SB"] and p["legal"] is True
    assert "a card seen a third time this deal" in str(p["reread"])
    assert "no card for SB" in str(p["reread"]) and "cost 3.27" in str(p["reread"])
    assert not t.fouls()
    assert fold(t.ref.events, t.profile) == t.ref.state
    # no SB played before: a pair on a single, possible as a foul, over the budget: it stands
    t2 = e_plays_sb_sb_on_d5(False)
    assert plays(t2)[-1]["legal"] is False and "camera" not in plays(t2)[-1]
    assert [f["kind"] for f in t2.fouls()] == ["illegal_play"]


def test_a_joker_read_as_the_other_with_no_runner_up_is_re_read_by_its_colour() -> None:
    """guyenne-classic 49233 at 2304x1296: the big joker's corner, a small red symbol, was read as
    the small joker with no runner-up but "no card" (4.31 nats). A single SB on the SB led beats
    nothing; the channel gives every joker the other as a runner-up (``JOKER_COLOUR_COST``), so
    the play is re-read as HR, the only single that beats it, and says so."""
    from engine.channel import JOKER_COLOUR_COST

    t = Table()
    start(t)
    t.play("S", "SB")
    t.do("played", seat="E", cards=["SB"], doubts=[doubt("SB", (None, 4.31))])
    p = plays(t)[1]
    assert p["cards"] == ["HR"] and p["legal"] is True and p["camera"] == ["SB"]
    assert f"HR for SB; cost {JOKER_COLOUR_COST:.2f}" in str(p["reread"])
    assert not t.fouls() and t.deal.turn == "N"
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_the_joker_colour_doubt_is_the_camera_s_only_when_it_is_the_camera_s_play() -> None:
    """Readings with no doubts and no camera mark (the simulator's, a referee's typed play) are
    taken as they are: an SB on the SB stays an illegal play."""
    t = Table()
    start(t)
    t.play("S", "SB")
    t.play("E", "SB")
    assert plays(t)[1]["cards"] == ["SB"] and [f["kind"] for f in t.fouls()] == ["illegal_play"]


def test_joker_colours_adds_the_other_joker_per_copy_and_keeps_cheaper_doubts() -> None:
    from engine.cards import parse_cards
    from engine.channel import JOKER_COLOUR_COST, joker_colours

    sb, hr, s3 = parse_card("SB"), parse_card("HR"), parse_card("S3")
    got = joker_colours(list(parse_cards("SB SB HR S3")), [(sb, ((hr, 1.0), (None, 4.0)))])
    assert got == (
        (sb, ((hr, 1.0), (None, 4.0))),  # the camera's own, cheaper: kept
        (sb, ((hr, JOKER_COLOUR_COST),)),
        (hr, ((sb, JOKER_COLOUR_COST),)),
    )
    dear = joker_colours([hr], [(hr, ((None, 2.0), (sb, 6.0)))])
    assert dear == ((hr, ((None, 2.0), (sb, JOKER_COLOUR_COST))),)  # a dearer one: lowered
    assert joker_colours([s3], [(s3, ((None, 2.0),))]) == ((s3, ((None, 2.0),)),)
