"""The referee's second look (engine/channel.py ``HINDSIGHT_WINDOW``): a play judged illegal as
read, after which the table plays on as if it had been legal, is read again; the reading that
fits the table's continuation replaces it through a ``correction`` event."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from engine import channel, edits
from engine.cards import parse_card
from engine.deal import effective_events, fold
from engine.events import Event
from engine.observations import Observation
from engine.profiles import load_profile
from engine.referee import HINDSIGHT_WINDOW, Referee
from tests.referee.helpers import Table


def start(t: Table, leader: str = "S") -> None:
    t.do("deal_start", first_leader=leader)


def cam(t: Table, seat: str, cards: str) -> list[Event]:
    """A play as the camera reports it: with a runner-up reading (too dear to matter here)."""
    first = cards.split()[0]
    doubts = [{"card": first, "or": [["SB", 4.9]]}]
    return t.do("played", seat=seat, cards=cards.split(), doubts=doubts)


def in_effect(t: Table, etype: str) -> list[Event]:
    return [e for e in effective_events(t.ref.events) if e.type == etype]


def pair_read_as_single(t: Table) -> None:
    """S leads a pair of tens; E's pair of queens is seen as one HQ; N, W and S pass and E
    leads again."""
    start(t)
    t.play("S", "ST ST")
    cam(t, "E", "HQ")
    for s in "NWS":
        t.pass_(s)
    t.play("E", "C5")


def test_a_pair_read_as_a_single_is_read_again_when_the_table_plays_on() -> None:
    """E's pair of queens is seen as one HQ (the other queen hidden under it): a single does not
    beat a pair of tens. The others pass and E leads the next trick: the table took it as a
    pair. Which queen the camera missed it cannot say: the referee takes one with the fewest
    copies accounted for (none of SQ, CQ, DQ seen yet; SQ first among equals)."""
    t = Table()
    start(t)
    t.play("S", "ST ST")
    cam(t, "E", "HQ")  # the camera missed the other queen
    assert [f["kind"] for f in t.fouls()] == ["illegal_play"]
    t.pass_("N")
    t.pass_("W")
    out = t.pass_("S")  # for the referee as it stood, S won the trick: a leader may not pass
    (corr,) = [e for e in out if e.type == "correction"]
    t.play("E", "C5")  # E leads the next trick
    assert "re-read as SQ HQ" in corr["reason"] and "SQ not seen" in corr["reason"]
    plays = in_effect(t, "play")
    assert [(p["seat"], p["cards"]) for p in plays] == [
        ("S", ["ST", "ST"]),
        ("E", ["SQ", "HQ"]),
        ("E", ["C5"]),
    ]
    assert plays[1]["legal"] is True and plays[1]["camera"] == ["HQ"]
    assert "not a legal play, and the table played on" in plays[1]["reread"]
    assert not [e for e in effective_events(t.ref.events) if e.type == "foul"]
    assert t.deal.counts["E"] == 24 and t.deal.turn == "N"
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_card_seen_that_was_not_there_is_dropped_in_hindsight() -> None:
    t = Table()
    start(t)
    t.play("S", "S3 S3")
    cam(t, "E", "CQ DA HA")  # a ghost CQ beside E's pair of aces
    t.pass_("N")
    t.pass_("W")
    t.pass_("S")
    t.play("E", "D6")
    assert len(t.of("correction")) == 1
    plays = in_effect(t, "play")
    assert sorted(plays[1]["cards"]) == ["DA", "HA"] and plays[1]["legal"] is True
    assert "no card for CQ" in plays[1]["reread"]
    assert t.deal.counts["E"] == 24


def test_a_straight_short_of_a_card_gets_the_card_that_closes_it() -> None:
    t = Table()
    start(t)
    cam(t, "S", "H7 H8 S9 HT")  # SJ not seen (a court card whose index the camera lost)
    t.pass_("E")
    t.pass_("N")
    t.pass_("W")
    t.play("S", "D3")
    assert len(t.of("correction")) == 1
    first = in_effect(t, "play")[0]
    assert first["combo"]["kind"] == "straight" and len(first["cards"]) == 5
    assert t.deal.counts["S"] == 21


def straight_short_of_its_queen(t: Table) -> None:
    """S's straight T J Q K A is read without its queen (DT CJ CK CA, illegal); the others
    pass and S leads D3, so the second look reads the straight again."""
    start(t)
    cam(t, "S", "DT CJ CK CA")
    for s in "ENW":
        t.pass_(s)
    t.play("S", "D3")


def test_an_ace_high_straight_short_of_a_card_gets_its_gap_not_a_wild() -> None:
    """T J K A misses a Q. The ace counted at both ends made every rank "near" the straight, so
    a level card (H2, wild at level 2) was tried before any Q and taken (seed 9602)."""
    t = Table()
    straight_short_of_its_queen(t)
    assert len(t.of("correction")) == 1
    first = in_effect(t, "play")[0]
    assert first["combo"]["kind"] == "straight"
    assert sorted(c[1] for c in first["cards"]) == sorted("TJQKA")


def test_missed_cards_of_a_straight_gap_first_ace_high_or_low() -> None:
    from engine.cards import parse_card, parse_cards
    from engine.channel import _missed_cards

    def after_ranks(cards: str) -> list[str]:
        got = [str(c) for c, _ in _missed_cards(list(parse_cards(cards)))]
        ranks = {c[1] for c in cards.split()}
        return [c for c in got if c[1] not in ranks]

    assert after_ranks("DT CJ CK CA")[:4] == ["SQ", "HQ", "CQ", "DQ"]  # then a 9 below
    assert after_ranks("SA S2 H3 C5")[:4] == ["S4", "H4", "C4", "D4"]  # the ace low
    assert [c[1] for c in after_ranks("H3 H4 H6 H7")] == list("555522228888")
    # the gap's suits too: the fewest copies accounted for first (9602: T J _ K A closed with an
    # HQ whose two copies the deal held elsewhere, the first suit of the order after SQ)
    seen = {parse_card("HQ"): 2, parse_card("SQ"): 1, parse_card("DQ"): 1}
    got = [str(c) for c, _ in _missed_cards(list(parse_cards("DT CJ CK CA")), seen)]
    assert [c for c in got if c[1] == "Q"] == ["CQ", "SQ", "DQ", "HQ"]


def test_a_missed_card_of_the_plays_rank_with_the_fewest_copies_accounted_for_first() -> None:
    """Two decks hold two of each card: a card none of whose copies was seen is likelier than a
    second copy of the card in the play or of one played before (9405: HK DK read DK and
    completed DK DK; 9607: HJ CJ read CJ, completed CJ CJ), except in a bomb."""
    from engine.cards import parse_card, parse_cards
    from engine.channel import _missed_cards

    def first(cards: str, played: str = "") -> list[str]:
        seen = {parse_card(c): played.split().count(c) for c in played.split()}
        got = _missed_cards(list(parse_cards(cards)), seen)
        return [str(c) for c, _ in got][:4]

    assert first("HQ") == ["SQ", "CQ", "DQ", "HQ"]
    assert first("HQ", "SQ SQ CQ") == ["DQ", "HQ", "CQ", "SQ"]
    # but a bomb a card short (three or more of one rank, stacked): a second copy first, for two
    # identical cards stacked show one index (9409 CK SK SK DK read SK CK DK)
    assert first("SK CK DK") == ["SK", "CK", "DK", "HK"]
    assert first("HT DT ST", "HT") == ["HT", "DT", "ST", "CT"]


def test_among_equally_unseen_cards_the_one_the_plays_runner_ups_name_first() -> None:
    """Which of two suits with no copy seen a missed card is: the one the camera's runner-ups
    for the play's own cards name, the cheapest first (9609: E's HK CK DK CJ HJ read without the
    HK, whose DK had HK as runner-up at 1.3 nats, was completed with an SK); without hints, or
    between cards with fewer copies seen, the order is as before."""
    from engine.cards import parse_card, parse_cards
    from engine.channel import _missed_cards

    def first(cards: str, hints: dict[str, float], played: str = "") -> list[str]:
        seen = {parse_card(c): played.split().count(c) for c in played.split()}
        got = _missed_cards(
            list(parse_cards(cards)), seen, {parse_card(c): v for c, v in hints.items()}
        )
        return [str(c) for c, _ in got][:4]

    assert first("CK DK", {}) == ["SK", "HK", "CK", "DK"]
    assert first("CK DK", {"HK": 1.3, "SK": 3.8}) == ["HK", "SK", "CK", "DK"]
    assert first("CK DK", {"SK": 3.8}) == ["SK", "HK", "CK", "DK"]
    # copies first: a hinted card with more copies accounted for comes after unhinted ones
    assert first("CK DK", {"HK": 1.3}, "HK") == ["SK", "HK", "CK", "DK"]  # one copy each
    assert first("CK DK", {"HK": 1.3}, "HK HK") == ["SK", "CK", "DK", "HK"]
    # the costs are unchanged (the order alone moves)
    got = _missed_cards(list(parse_cards("CK DK")), {}, {parse_card("HK"): 1.3})
    assert [round(c, 3) for _, c in got[:2]] == [3.0, 3.001]


def test_the_four_jokers_read_as_one_of_each_are_read_again_as_the_joker_bomb() -> None:
    """The four jokers laid in a heap show two indices (9803, guyenne-classic: SB SB HR HR read
    SB HR, not a combo). Nothing holds one joker of each kind but the joker bomb, so when the
    table plays on as if it beat the trick (the others pass, S leads), the second look takes the
    two jokers not seen; one card not seen would not make a legal play."""
    t = Table()
    start(t, "W")
    t.play("W", "S2 H2 C2 D2")
    cam(t, "S", "SB HR")
    assert [f["kind"] for f in t.fouls()] == ["illegal_play"]
    t.pass_("E")
    t.pass_("N")
    out = t.pass_("W")  # for the referee as it stood, W won the trick: a leader may not pass
    (corr,) = [e for e in out if e.type == "correction"]
    t.play("S", "C3 C3")
    plays = in_effect(t, "play")
    assert [(p["seat"], p["cards"]) for p in plays] == [
        ("W", ["S2", "H2", "C2", "D2"]),
        ("S", ["SB", "SB", "HR", "HR"]),
        ("S", ["C3", "C3"]),
    ]
    assert plays[1]["combo"]["kind"] == "joker_bomb" and plays[1]["camera"] == ["SB", "HR"]
    assert "SB not seen" in corr["reason"] and "HR not seen" in corr["reason"]
    assert not [e for e in effective_events(t.ref.events) if e.type == "foul"]
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_no_joker_bomb_reading_for_other_plays() -> None:
    from engine.cards import parse_cards
    from engine.channel import _joker_bomb_doubts

    ((card, alts),) = _joker_bomb_doubts(list(parse_cards("HR SB")))
    assert card is None and [str(c) for c, _ in alts] == ["SB", "HR"]
    for cards in ("SB SB", "HR HR", "SB HR HR", "SB S3", "HR"):
        assert _joker_bomb_doubts(list(parse_cards(cards))) == [], cards


def test_a_real_illegal_play_stays_a_foul_when_the_table_treats_it_as_one() -> None:
    """S plays two unrelated cards; the others play on the old trick as the rules say (the cards
    stay out, the trick is unchanged): nothing clashes, nothing is corrected."""
    t = Table()
    start(t)
    t.play("S", "S9")
    cam(t, "E", "D2 C5")  # really illegal: not a combo
    t.play("N", "SK")
    t.play("W", "SA")
    t.pass_("S")
    t.pass_("N")
    assert not t.of("correction")
    assert [f["kind"] for f in t.fouls()] == ["illegal_play"]


def test_no_second_look_when_no_reading_fits_or_after_the_window() -> None:
    # a suspect is kept for HINDSIGHT_WINDOW plays and passes, then forgotten
    t = Table()
    start(t)
    t.play("S", "S3")
    cam(t, "E", "D2 C5")  # illegal as read: a suspect
    assert len(t.ref._window(len(t.ref._obs))) == 1
    ranks = "456789TJQKA"
    for i in range(HINDSIGHT_WINDOW):  # E barred: N, W and S play on the old trick
        t.play("NWS"[i % 3], "S" + ranks[i])
    assert len(t.ref._window(len(t.ref._obs))) == 1
    t.play("NWS"[HINDSIGHT_WINDOW % 3], "S" + ranks[HINDSIGHT_WINDOW])
    assert not t.ref._window(len(t.ref._obs)) and not t.of("correction")
    assert [f["kind"] for f in t.fouls()] == ["illegal_play"]
    # with the second look switched off, nothing is ever corrected
    p = load_profile("standard")
    ref = Referee(p, hindsight=False)
    t2 = Table()
    t2.ref = ref
    pair_read_as_single(t2)
    assert not t2.of("correction")
    assert len(t2.fouls()) >= 2  # the illegal single and the clashes after it stay


def test_the_second_look_is_the_same_when_the_log_is_replayed() -> None:
    """The correction comes from the observations alone: a referee fed the same observations
    again (a kiosk restart rebuilds from its observation log) writes the same events."""
    fed: list[Observation] = []
    t = Table()
    feed = t.ref.feed

    def keep(o: Observation) -> list[Event]:
        fed.append(o)
        return feed(o)

    t.ref.feed = keep  # type: ignore[method-assign]
    pair_read_as_single(t)
    assert t.of("correction")
    again = Referee(t.profile)
    for o in fed:
        again.feed(o)
    assert [e.to_json() for e in again.events] == [e.to_json() for e in t.ref.events]
    assert fed[2].cards != t.ref.observations[2].cards  # the referee's own list is corrected


def test_a_play_without_doubts_is_never_read_again() -> None:
    """A person's entry or the simulator gives no doubts: its illegal play stays one."""
    t = Table()
    start(t)
    t.play("S", "ST ST")
    t.play("E", "HQ")
    for s in "NWS":
        t.pass_(s)
    t.play("E", "C5")
    assert not t.of("correction")


def test_a_foul_on_a_camera_reading_counts_only_when_the_referee_marks_it() -> None:
    """The camera sees E play three times while S is on turn: three out-of-turn fouls of E-W as
    read, which would end the match (fouls.limit 3). Each is flagged for review, keeps its
    penalty, and counts only when the floor referee marks it."""
    t = Table()
    start(t)
    limit = t.profile.fouls.limit
    for _ in range(limit):
        cam(t, "E", "D9")
    flagged = t.fouls("out_of_turn")
    assert len(flagged) == limit
    assert all(f.data.get("review") is True for f in flagged)
    assert "taken back" in flagged[0]["penalty"]
    assert "counts when the referee marks it" in flagged[0]["penalty"]
    assert not t.of("match_ended") and t.ref.state.team_fouls["EW"] == 0
    # the same play typed in by a person counts as usual
    t2 = Table()
    start(t2)
    t2.play("E", "D9")
    assert "review" not in t2.fouls()[0].data and t2.ref.state.team_fouls["EW"] == 1
    # the referee confirms one of the flagged fouls: it counts
    t.do("foul", seat="E", kind="out_of_turn", detail="confirmed from the footage")
    assert t.ref.state.team_fouls["EW"] == 1
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_play_the_camera_missed_is_taken_as_a_pass_when_the_table_played_on() -> None:
    """S leads; E's play is never seen (a joker whose corner the camera did not find); N and W
    play on. For the referee E was still on turn: N and W out of turn. Taken as E passing, the
    continuation fits: a correction replaces N's foul with E's pass and N's play."""
    t = Table()
    start(t)
    cam(t, "S", "D9")
    cam(t, "N", "DK")  # E's card went unseen
    assert [f["kind"] for f in t.fouls()] == ["out_of_turn"]
    out = cam(t, "W", "DA")
    (corr,) = [e for e in out if e.type == "correction"]
    assert "E passed" in corr["reason"]
    kinds = [(e.type, e.data.get("seat")) for e in effective_events(t.ref.events)]
    assert kinds[1:] == [("play", "S"), ("pass", "E"), ("play", "N"), ("play", "W")]
    assert not [e for e in effective_events(t.ref.events) if e.type == "foul"]
    assert t.deal.turn == "S" and t.deal.counts["E"] == 27
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_real_play_out_of_turn_is_not_taken_for_a_missed_one() -> None:
    """N plays out of turn for real: taken back, E plays, then N plays again in turn. Nothing
    clashes after the foul, so nothing is corrected."""
    t = Table()
    start(t)
    cam(t, "S", "D9")
    cam(t, "N", "DK")  # out of turn: taken back, N barred this trick
    cam(t, "E", "DT")
    cam(t, "W", "DA")
    for s in "SE":
        t.pass_(s)
    assert not t.of("correction")
    assert [f["kind"] for f in t.fouls()] == ["out_of_turn"]


def leads(t: Table, seat: str, plays: tuple[str, ...], others: str) -> None:
    """``seat`` leads each of ``plays`` (entered by a person) and ``others`` pass each time."""
    for play in plays:
        t.play(seat, play)
        for s in others:
            t.pass_(s)


def e_down_to_eight(t: Table) -> None:
    """E leads three straights and a bomb, the others passing each time: 8 cards left."""
    start(t, leader="E")
    leads(t, "E", ("S3 S4 S5 S6 S7", "D8 C9 HT SJ DQ", "H4 D5 C6 S7 H8", "CK CK DK DK"), "NWS")
    assert t.deal.counts["E"] == 8 and t.deal.turn == "E"


def test_a_seat_the_table_plays_on_without_is_taken_as_gone_out_unseen() -> None:
    """E holds 8 cards by the count (some of its plays went unseen at the table) and leads a
    pair the camera reads: 6 left. The others pass, and E's partner W leads (as after E going
    out), S passes. For the referee E was on turn: W out of turn, S's pass ignored. Taken as
    E's last play, the continuation fits: E is out first, the play carries ``unseen``."""
    t = Table()
    e_down_to_eight(t)
    cam(t, "E", "HA HA")
    for s in "NWS":
        t.pass_(s)
    t.play("W", "C3")
    assert [f["kind"] for f in t.fouls()] == ["out_of_turn"]
    out = t.pass_("S")
    (corr,) = [e for e in out if e.type == "correction"]
    assert "E still held 6 cards" in corr["reason"] and "taken as E's last play" in corr["reason"]
    events = effective_events(t.ref.events)
    assert not [e for e in events if e.type == "foul"]
    (last,) = [e for e in events if e.type == "play" and e.data["cards"] == ["HA", "HA"]]
    assert last["unseen"] == 6 and last["left"] == 0 and last["camera"] == ["HA", "HA"]
    assert [e["seat"] for e in events if e.type == "seat_out"] == ["E"]
    assert t.deal.counts["E"] == 0 and t.deal.order == ["E"] and t.deal.turn == "N"
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_seat_is_not_taken_as_gone_out_when_it_holds_many_cards_or_a_person_entered_it() -> None:
    """The same continuation after E's pair, but with E holding 25 cards (a real out-of-turn
    lead by W), or with E's pair entered by a person (no camera reading): no correction."""
    t = Table()
    start(t, leader="E")
    cam(t, "E", "HA HA")
    for s in "NWS":
        t.pass_(s)
    t.play("W", "C3")
    t.pass_("S")
    assert not t.of("correction")
    t = Table()
    e_down_to_eight(t)
    t.play("E", "HA HA")
    for s in "NWS":
        t.pass_(s)
    t.play("W", "C3")
    t.pass_("S")
    assert not t.of("correction") and t.deal.counts["E"] == 6


def w_out_then_e_down_to_eight(t: Table) -> None:
    """W plays all 27 cards (the others passing), then its partner E leads down to 8."""
    start(t, leader="W")
    w_plays = (
        "S3 H4 C5 D6 S7",
        "H3 C4 D5 S6 H7",
        "C8 D9 ST HJ CQ",
        "D8 S9 HT CJ DQ",
        "SK SK HK HK",
        "CK CK DK",
    )
    leads(t, "W", w_plays, "SEN")
    assert t.deal.order == ["W"] and t.deal.turn == "E"
    leads(t, "E", ("S3 H4 C5 D6 S7", "H3 C4 D5 S6 H7", "C8 D9 ST HJ CQ", "DA DA CA CA"), "NS")
    assert t.deal.counts["E"] == 8 and t.deal.turn == "E"


def test_the_table_ending_the_deal_takes_the_last_player_as_gone_out_unseen() -> None:
    """W is out; E holds 8 cards by the count and plays a pair the camera reads; the table
    clears the trick at once, nobody answering: the deal is over at the table. E is taken as
    having gone out with that pair (6 cards never seen), and the deal ends W, E."""
    t = Table()
    w_out_then_e_down_to_eight(t)
    cam(t, "E", "HA HA")
    out = t.do("trick_cleared")
    corr = [e for e in out if e.type == "correction"]
    assert len(corr) == 1 and "the table ended the deal as if E had gone out" in corr[0]["reason"]
    events = effective_events(t.ref.events)
    (ended,) = [e for e in events if e.type == "deal_ended"]
    assert ended["order"][:2] == ["W", "E"]
    assert not [e for e in events if e.type == "notice" and e.data.get("cleared_open")]
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_trick_cleared_after_answers_or_a_persons_entry_is_no_deal_end() -> None:
    """The same, but N and S answered the pair before the clearing (missed lamps would leave
    such traces), or the pair was entered by a person: the referee keeps E in the deal."""
    t = Table()
    w_out_then_e_down_to_eight(t)
    cam(t, "E", "HA HA")
    t.pass_("N")
    t.do("trick_cleared")
    assert not t.of("correction") and not t.of("deal_ended")
    t = Table()
    w_out_then_e_down_to_eight(t)
    t.play("E", "HA HA")
    t.do("trick_cleared")
    assert not t.of("correction") and not t.of("deal_ended") and t.deal.counts["E"] == 6


def e_last_card_glimpsed(t: Table, pair: bool = True, glimpse: str = "HR", by: str = "E") -> float:
    """W is out; E leads down to one card (two with ``pair`` False: a single, not a pair), N wins
    the trick and leads D3, S plays D7 (the camera reads both), and ``by``'s ``glimpse`` is seen
    0.5 s later (a ``glimpse``: no play). When the camera glimpsed it."""
    w_out_then_e_down_to_eight(t)
    leads(t, "E", ("D8 C9 DT CJ HQ",), "NS")
    t.play("E", "H5 H5" if pair else "H5")
    t.play("N", "H9 H9" if pair else "H9")
    t.pass_("S")
    t.pass_("E")
    cam(t, "N", "D3")
    cam(t, "S", "D7")
    t.do("glimpse", step=0.5, seat=by, cards=[glimpse])
    return t.t


@pytest.mark.parametrize("end", ["trick_cleared", "deal_start"])
def test_a_seats_last_card_only_glimpsed_is_its_play_when_the_table_ends_the_deal(end: str) -> None:
    """Tigullio 48831 (issue 41): E's last card, the big joker, is only glimpsed on S's D7; then
    the table clears the trick (or deals again) and nobody plays on: E went out, the deal over
    W, E. The glimpse is put in as E's play, which ends the deal, and no trick is left open. A
    glimpse of a card that does not beat the D7, or by another seat, or of E's last card but one
    (the trick would still be open), is no such end: the record stays as it was."""
    t = Table()
    seen = e_last_card_glimpsed(t)
    fields = {"first_leader": "S"} if end == "deal_start" else {}
    out = t.do(end, step=3.0, **fields)
    (corr,) = [e for e in out if e.type == "correction"]
    assert f"E played HR, which the camera glimpsed there at t={seen:g}" in corr["reason"]
    events = effective_events(t.ref.events)
    plays = [(e["seat"], e["cards"]) for e in events if e.type == "play"]
    assert plays[-2:] == [("S", ["D7"]), ("E", ["HR"])]
    assert [e["order"][:2] for e in events if e.type == "deal_ended"] == [["W", "E"]]
    notices = [e for e in events if e.type == "notice"]
    assert not [e for e in notices if e.data.get("cleared_open") or e.data.get("abandoned")]
    assert not [e for e in events if e.type == "foul"]
    assert fold(t.ref.events, t.profile) == t.ref.state
    for kw in ({"glimpse": "D4"}, {"by": "N"}, {"pair": False}):
        t = Table()
        e_last_card_glimpsed(t, **kw)  # type: ignore[arg-type]
        t.do(end, step=3.0, **fields)
        assert not t.of("correction") and not t.of("deal_ended"), kw


def test_a_new_deal_started_at_the_table_ends_the_last_one_instead_of_abandoning_it() -> None:
    """Without a clearing seen, the next deal's start is the table's word that the deal is
    over: E's last pair is taken as emptying its hand and the deal ends W, E (no abandoned deal,
    so the levels go up as the table played)."""
    t = Table()
    w_out_then_e_down_to_eight(t)
    cam(t, "E", "HA HA")
    t.do("deal_start", first_leader="S")
    events = effective_events(t.ref.events)
    assert [e["order"][:2] for e in events if e.type == "deal_ended"] == [["W", "E"]]
    assert not [e for e in events if e.type == "notice" and e.data.get("abandoned")]
    assert t.ref.state.match.levels["EW"] != "2"  # W, E won: their level went up
    # the snapshot of the new deal's start (for later second looks) was taken again after the
    # correction of the deal before it: replaying from it gives the referee's state
    replayed = t.ref._core_before(len(t.ref.observations)).st
    replayed.corrections = t.ref.state.corrections  # counted by the referee, not the replay
    assert replayed == t.ref.state
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_deal_ended_at_a_clearing_is_reopened_when_the_table_plays_on() -> None:
    """E's pair is taken as its last at the clearing, but E then leads again: the table had not
    ended the deal (E won the trick; the others' passes went unseen). The pair is read as the
    camera saw it again and E's lead is judged in the deal (out of turn for the referee, who
    saw nobody pass), not ignored as outside a deal."""
    t = Table()
    w_out_then_e_down_to_eight(t)
    cam(t, "E", "HA HA")
    t.do("trick_cleared")
    assert len(t.of("deal_ended")) == 1
    out = t.play("E", "C3")
    (undo,) = [e for e in out if e.type == "correction"]
    assert "E played on: it had not gone out" in undo["reason"]
    events = effective_events(t.ref.events)
    assert not [e for e in events if e.type in ("deal_ended", "seat_out") and e["seat"] == "E"]
    assert not [e for e in events if e.type == "deal_ended"]
    assert [e["cards"] for e in events if e.type == "play"][-1] == ["HA", "HA"]
    assert [(e["kind"], e["cards"]) for e in events if e.type == "foul"] == [
        ("out_of_turn", ["C3"])
    ]
    assert not [e for e in events if e.type == "notice" and e.data.get("outside")]
    assert t.deal.counts["E"] == 6
    t.do("trick_cleared")  # not taken as the end again
    assert len(t.of("correction")) == 2
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_seat_taken_as_gone_out_that_plays_again_is_put_back() -> None:
    """E is taken as gone out unseen (as above), then plays again: it had not gone out. Its
    pair is read as the camera saw it again, and E's new lead is judged with 6 cards in hand."""
    t = Table()
    e_down_to_eight(t)
    cam(t, "E", "HA HA")
    for s in "NWS":
        t.pass_(s)
    t.play("W", "C3")
    t.pass_("S")
    assert len(t.of("correction")) == 1 and t.deal.order == ["E"]
    out = cam(t, "E", "C4")
    (undo,) = [e for e in out if e.type == "correction"]
    assert "E played on: it had not gone out" in undo["reason"]
    events = effective_events(t.ref.events)
    assert not [e for e in events if e.type == "seat_out"]
    assert [e["cards"] for e in events if e.type == "play"][-1] == ["C4"]
    assert t.deal.counts["E"] == 5
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_leader_passing_in_a_deal_the_camera_reads_is_flagged_not_counted() -> None:
    """Who leads is the camera's reading of the trick before: a joker it missed makes a leader
    of a seat that was answering. A pass by "the leader" is then a foul for review (its penalty
    stands, it counts once marked); with no camera reading in the deal it counts at once."""
    t = Table()
    start(t)
    cam(t, "S", "D9")
    for s in "ENW":
        t.pass_(s)
    t.pass_("S")  # S "won" the trick for the referee: the leader must play
    (foul,) = t.fouls()
    assert foul["detail"] == "the leader must play, not pass" and foul["review"] is True
    assert t.ref.state.team_fouls["NS"] == 0
    t = Table()
    start(t)
    t.play("S", "D9")
    for s in "ENW":
        t.pass_(s)
    t.pass_("S")
    (foul,) = t.fouls()
    assert "review" not in foul.data and t.ref.state.team_fouls["NS"] == 1


def cam_or(t: Table, seat: str, cards: str, alt: str, cost: float) -> list[Event]:
    """A camera play whose first card has runner-up ``alt`` at ``cost`` nats."""
    first = cards.split()[0]
    doubts = [{"card": first, "or": [[alt, cost]]}]
    return t.do("played", seat=seat, cards=cards.split(), doubts=doubts)


def s_and_e_lead(
    t: Table, s_lead: Callable[[str], object], e_lead: Callable[[str], object]
) -> None:
    """S leads (``s_lead("S")``), E beats it with S9 and the others pass; E leads
    (``e_lead("E")``), N beats it with SJ and the others pass: N is on turn to lead."""
    start(t)
    s_lead("S")
    t.play("E", "S9")
    for s in "NWS":
        t.pass_(s)
    e_lead("E")
    t.play("N", "SJ")
    for s in "WSE":
        t.pass_(s)


def three_black_sevens(t: Table, costs: tuple[float, float, float]) -> list[Event]:
    """S, E and N each lead a single S7 as the camera reads it (two decks hold two): one of the
    three is a club, each with C7 as its runner-up at ``costs``."""
    s_and_e_lead(
        t,
        lambda seat: cam_or(t, seat, "S7", "C7", costs[0]),
        lambda seat: cam_or(t, seat, "S7", "C7", costs[1]),
    )
    return cam_or(t, "N", "S7", "C7", costs[2])


def test_a_third_copy_re_reads_the_earlier_play_whose_runner_up_is_cheapest() -> None:
    """E's S7 was a club (its C7 runner-up cost 1.0): when N's S7 makes a third, E's play is
    re-read, not N's (whose C7 would cost 3.5, and a card seen that was not there 3.0)."""
    t = Table()
    out = three_black_sevens(t, (4.0, 1.0, 3.5))
    (corr,) = [e for e in out if e.type == "correction"]
    why = "E's S7 (the camera read S7) re-read as C7 (C7 for S7; cost 1.00), against 3.00 here"
    assert why in corr["reason"]
    plays = [(p["seat"], p["cards"]) for p in in_effect(t, "play")]
    assert plays == [("S", ["S7"]), ("E", ["S9"]), ("E", ["C7"]), ("N", ["SJ"]), ("N", ["S7"])]
    assert not [f for f in in_effect(t, "foul") if f["kind"] == "duplicate_card"]
    assert t.deal.played[parse_card("S7")] == 2 and t.deal.played[parse_card("C7")] == 1
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_third_copy_re_reads_the_current_play_when_it_is_the_cheapest() -> None:
    t = Table()
    out = three_black_sevens(t, (4.0, 3.0, 0.4))
    assert not [e for e in out if e.type == "correction"]
    last = in_effect(t, "play")[-1]
    assert last["cards"] == ["C7"] and last["camera"] == ["S7"]


def test_each_third_copy_is_weighed_against_its_own_re_reading_here() -> None:
    """N's straight holds two third copies: its S3 may be a C3 (0.6 nats), its S4 hardly a C4
    (8.0; a card too many, 3.0). S's earlier straight read S4 with C4 at 0.5: that play is
    re-read for the S4, though N's S3 is cheaper to re-read than 0.5 + the margin (seed 9802:
    S's bomb C4 S4 H4 D4 D4, read with C4 twice, stood because N's S2 was cheap to re-read)."""
    t = Table()
    start(t)
    s_doubts = [{"card": "S3", "or": [["C3", 4.0]]}, {"card": "S4", "or": [["C4", 0.5]]}]
    t.do("played", seat="S", cards="S3 S4 D5 D6 D7".split(), doubts=s_doubts)
    t.play("E", "S4 S5 H6 H7 H8")
    for s in "NWS":
        t.pass_(s)
    t.play("E", "S3")
    t.play("N", "SJ")
    for s in "WSE":
        t.pass_(s)
    n_doubts = [{"card": "S3", "or": [["C3", 0.6]]}, {"card": "S4", "or": [["C4", 8.0]]}]
    out = t.do("played", seat="N", cards="S3 S4 C5 C6 C7".split(), doubts=n_doubts)
    (corr,) = [e for e in out if e.type == "correction"]
    assert "S's S3 S4 D5 D6 D7" in corr["reason"] and "(C4 for S4; cost 0.50)" in corr["reason"]
    assert "against 3.00 here" in corr["reason"]
    plays = [(p["seat"], sorted(p["cards"])) for p in in_effect(t, "play")]
    assert plays[0] == ("S", sorted("S3 C4 D5 D6 D7".split()))
    assert plays[-1] == ("N", sorted("C3 S4 C5 C6 C7".split()))
    assert not [f for f in in_effect(t, "foul") if f["kind"] == "duplicate_card"]
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_no_swap_where_this_play_may_hold_a_card_too_many_as_cheaply() -> None:
    """N's S7 makes a third; E's S7 may be a C7 at 2.8 nats. N's has no likely runner-up (9.0),
    but a card seen that was not there costs ``EXTRA_CARD_COST`` (3.0) here too: E's reading is
    not ``SWAP_MARGIN`` cheaper, so it stands and the third copy is flagged (seed 9657: a D5
    taken out of W's bomb at 3.0 nats against 10 here)."""
    t = Table()
    out = three_black_sevens(t, (4.0, 2.8, 9.0))
    assert not [e for e in out if e.type == "correction"]
    assert [f["kind"] for f in t.fouls()] == ["duplicate_card"]
    assert [p["cards"] for p in in_effect(t, "play")][2] == ["S7"]


def test_no_swap_without_a_camera_reading_of_the_earlier_play() -> None:
    """A person's entry (no doubts) is never re-read for a later third copy."""
    t = Table()
    s_and_e_lead(t, lambda seat: t.play(seat, "S7"), lambda seat: t.play(seat, "S7"))
    out = cam_or(t, "N", "S7", "C7", 4.0)
    assert not [e for e in out if e.type == "correction"]
    assert [f["kind"] for f in t.fouls()] == ["duplicate_card"]


def test_gone_out_unseen_looks_back_gone_window_plays(monkeypatch: pytest.MonkeyPatch) -> None:
    """The seat's last camera play may lie many plays back (its later plays went unseen: court
    cards without an index), up to ``GONE_WINDOW`` plays and passes; not further."""
    assert channel.GONE_WINDOW > channel.HINDSIGHT_WINDOW
    for window, taken in ((5, True), (4, False)):
        monkeypatch.setattr(edits, "GONE_WINDOW", window)
        t = Table()
        e_down_to_eight(t)
        cam(t, "E", "HA HA")
        for s in "NWS":
            t.pass_(s)
        t.play("W", "C3")
        t.pass_("S")  # five plays and passes after E's pair
        assert bool(t.of("correction")) is taken
        assert t.deal.order == (["E"] if taken else [])


def test_a_pair_read_as_a_third_and_fourth_copy_re_reads_both_cards_of_the_earlier_pair() -> None:
    """E's pair of clubs was read as S9 S9 (runner-ups C9 at 1.0 each); S's real S9 S9 (C9 at
    3.5 each) is a third and fourth copy: E's pair is re-read as C9 C9, S's stands."""
    t = Table()
    start(t, leader="E")
    nines = [{"card": "S9", "or": [["C9", 1.0]]}, {"card": "S9", "or": [["C9", 1.0]]}]
    t.do("played", seat="E", cards=["S9", "S9"], doubts=nines)
    for s in "NWS":
        t.pass_(s)
    t.play("E", "D3")
    t.play("N", "D4")
    t.play("W", "D5")
    t.play("S", "D6")
    for s in "ENW":
        t.pass_(s)
    real = [{"card": "S9", "or": [["C9", 3.5]]}, {"card": "S9", "or": [["C9", 3.5]]}]
    out = t.do("played", seat="S", cards=["S9", "S9"], doubts=real)
    (corr,) = [e for e in out if e.type == "correction"]
    assert "E's S9 S9 (the camera read S9 S9) re-read as C9 C9" in corr["reason"]
    plays = [(p["seat"], p["cards"]) for p in in_effect(t, "play")]
    assert plays[0] == ("E", ["C9", "C9"]) and plays[-1] == ("S", ["S9", "S9"])
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_no_swap_that_leaves_the_play_a_third_copy() -> None:
    """S5 S5 read after two single S5s: two copies too many. Re-reading one single (a cheap C5
    runner-up) would leave the pair a third copy, so no earlier play is re-read (seed 9002)."""
    t = Table()
    s_and_e_lead(
        t,
        lambda seat: cam_or(t, seat, "S5", "C5", 1.0),
        lambda seat: cam_or(t, seat, "S5", "C5", 4.0),
    )
    pair = [{"card": "S5", "or": [["C5", 3.5]]}, {"card": "S5", "or": [["C5", 3.5]]}]
    out = t.do("played", seat="N", cards=["S5", "S5"], doubts=pair)
    assert not [e for e in out if e.type == "correction"]
    assert [f["kind"] for f in t.fouls()] == ["duplicate_card"]


def passed_and_cleared(
    lead: str, leads_next: str, camera: bool = True, glimpse: dict[str, object] | None = None
) -> Table:
    """S leads ``lead``; E (on turn) is never seen (``glimpse``: a ``glimpse`` observation
    0.5 s later); N, W and S pass; the table clears the trick and ``leads_next`` leads D3 (read
    by the camera, or entered by a person)."""
    t = Table()
    start(t)
    cam(t, "S", lead)
    if glimpse is not None:
        t.do("glimpse", step=0.5, **glimpse)
    for s in "NWS":
        t.pass_(s)
    t.do("trick_cleared")
    if camera:
        cam(t, leads_next, "D3")
    else:
        t.play(leads_next, "D3")
    return t


def test_a_big_joker_the_camera_missed_is_inferred_when_its_player_leads_next() -> None:
    """S leads the small joker; E answers with the big one, which the camera never sees. N, W
    and S pass (ignored: E is on turn for the referee), the table clears the trick and E leads.
    The big joker is the only answer short of a bomb, so E played it: a correction inserts it
    (``camera`` empty) and the rest fits. A lead by anyone else leaves the record alone."""
    t = passed_and_cleared("SB", "E")
    (corr,) = t.of("correction")
    assert "E played HR, the only answer short of a bomb" in corr["reason"]
    plays = in_effect(t, "play")
    assert [(p["seat"], p["cards"]) for p in plays] == [
        ("S", ["SB"]),
        ("E", ["HR"]),
        ("E", ["D3"]),
    ]
    assert plays[1]["camera"] == [] and plays[1]["legal"] is True
    assert not [e for e in effective_events(t.ref.events) if e.type == "foul"]
    assert t.deal.counts["E"] == 25 and t.deal.turn == "N"
    assert fold(t.ref.events, t.profile) == t.ref.state
    # N leads after the clearing (E did not win), the lead was an ace (other cards beat it),
    # or E's lead is a person's entry: nothing is inferred
    for lead, leads_next, camera in (("SB", "N", True), ("SA", "E", True), ("SB", "E", False)):
        again = passed_and_cleared(lead, leads_next, camera)
        assert not any(
            "the only answer" in str(e.data.get("reason")) for e in again.of("correction")
        )


def answered_unseen_after_passes(
    answer: str, lead: str = "SB", leads_next: str | None = None
) -> tuple[Table, float]:
    """N leads ``lead``; the seats before ``answer`` pass, ``answer`` plays unseen, the other
    three pass; the table clears the trick and ``leads_next`` (``answer`` if None) leads D3.
    The table, and when the first pass after ``answer``'s turn was seen."""
    order = "NWSE"
    n = order.index(answer)
    t = Table()
    start(t, "N")
    cam(t, "N", lead)
    for s in order[1:n]:
        t.pass_(s)
    seen = t.t + 2.0
    for s in (order + order)[n + 1 : n + 4]:
        t.pass_(s)
    t.do("trick_cleared")
    cam(t, leads_next or answer, "D3")
    return t, seen


@pytest.mark.parametrize("answer", ["W", "S", "E"])
def test_a_big_joker_the_camera_missed_after_passes_is_put_where_its_player_was_on_turn(
    answer: str,
) -> None:
    """Issue 41 (game 47804 without its glimpse): N leads the small joker, W and S pass, E
    answers with the big joker unseen, N, W and S pass, the table clears the trick and E leads.
    E's HR goes where E was on turn, after S's pass (each pass seen in the trick is a place
    the search weighs), not right after N's SB as W's play; with W (next after the top) the
    answer, that old place still wins. A lead by a seat not on turn, on a trick many cards beat
    or on one nothing short of a bomb beats (the big joker) puts nothing in."""
    t, seen = answered_unseen_after_passes(answer)
    (corr,) = t.of("correction")
    assert f"{answer} played HR, the only answer short of a bomb" in corr["reason"]
    plays = in_effect(t, "play")
    assert [(p["seat"], p["cards"]) for p in plays] == [
        ("N", ["SB"]),
        (answer, ["HR"]),
        (answer, ["D3"]),
    ]
    assert plays[1].t == seen and plays[1]["camera"] == [] and plays[1]["legal"] is True
    order = "NWSE"
    n = order.index(answer)
    passes = [*order[1:n], *(order + order)[n + 1 : n + 4]]
    assert [p["seat"] for p in in_effect(t, "pass")] == passes
    assert not [e for e in effective_events(t.ref.events) if e.type == "foul"]
    assert not [e for e in in_effect(t, "notice") if e.data.get("ignored")]
    assert t.deal.counts[answer] == 25 and t.deal.turn == order[(n + 1) % 4]
    assert fold(t.ref.events, t.profile) == t.ref.state
    for lead, leads_next in (("SB", "N"), ("SA", answer), ("HR", answer)):
        again, _ = answered_unseen_after_passes(answer, lead, leads_next)
        assert not any(
            "the only answer" in str(e.data.get("reason")) for e in again.of("correction")
        ), (lead, leads_next)


def test_a_joker_the_camera_glimpsed_is_taken_when_its_player_leads_next() -> None:
    """S leads an ace; E answers with the big joker, which the camera sees by one faint corner
    only (a ``glimpse``: no play). N, W and S pass (ignored: E is on turn), the table clears the
    trick and E leads. Many cards beat an ace, so nothing is inferred without the glimpse (the
    test above); with it, E played the glimpsed HR (seed 9909: W's HR on a level card). A
    glimpse by another seat, before the trick's last play, or of a card that does not beat it
    is not taken."""

    t = passed_and_cleared("SA", "E", glimpse={"seat": "E", "cards": ["HR"]})
    (corr,) = t.of("correction")
    lead = in_effect(t, "play")[0]
    seen = lead.t + 0.5
    assert f"E played HR, which the camera glimpsed there at t={seen:g}" in corr["reason"]
    plays = in_effect(t, "play")
    assert [(p["seat"], p["cards"], p.t) for p in plays[:2]] == [
        ("S", ["SA"], lead.t),
        ("E", ["HR"], seen),  # played when the camera glimpsed it
    ]
    assert [(p["seat"], p["cards"]) for p in plays[2:]] == [("E", ["D3"])]
    assert not [e for e in effective_events(t.ref.events) if e.type == "foul"]
    assert fold(t.ref.events, t.profile) == t.ref.state
    for other in ({"seat": "N", "cards": ["HR"]}, {"seat": "E", "cards": ["S4"]}, None):
        assert not passed_and_cleared("SA", "E", glimpse=other).of("correction")
    # a glimpse before the trick's last play is no answer to it
    t = Table()
    start(t)
    t.do("glimpse", seat="E", cards=["HR"])
    cam(t, "S", "SA")
    for s in "NWS":
        t.pass_(s)
    t.do("trick_cleared")
    cam(t, "E", "D3")
    assert not t.of("correction")


def glimpsed_then_bombed(lead: str, glimpse: str) -> tuple[Table, float, list[Event]]:
    """S leads ``lead``; E is glimpsed with ``glimpse`` 0.5 s later (no play); N bombs and W
    bombs higher (out of turn for the referee, E being on turn). The table, when E was
    glimpsed, and the events of W's bomb."""
    t = Table()
    start(t)
    cam(t, "S", lead)
    t.do("glimpse", step=0.5, seat="E", cards=[glimpse])
    seen = t.t
    cam(t, "N", "C8 C8 D8 D8")
    return t, seen, cam(t, "W", "CA CA DA DA")


def test_a_glimpsed_play_is_taken_when_the_table_played_on() -> None:
    """S leads the small joker; E answers with the big one, glimpsed by one faint corner (no
    play); N bombs it and W bombs higher, both out of turn for the referee. With E taken as
    passing, N's bomb would beat the small joker just the same, but E played what the camera
    glimpsed: a correction puts E's HR before N's bomb (seed 9901, where it had been a pass)."""
    t, seen, out = glimpsed_then_bombed("SB", "HR")
    (corr,) = [e for e in out if e.type == "correction"]
    assert f"E played HR, which the camera glimpsed there at t={seen:g}" in corr["reason"]
    plays = in_effect(t, "play")
    assert [(p["seat"], p["cards"]) for p in plays] == [
        ("S", ["SB"]),
        ("E", ["HR"]),
        ("N", ["C8", "C8", "D8", "D8"]),
        ("W", ["CA", "CA", "DA", "DA"]),
    ]
    assert plays[1].t == seen and plays[1]["camera"] == []
    assert not [e for e in effective_events(t.ref.events) if e.type == "foul"]
    assert t.deal.counts["E"] == 26
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_one_joker_glimpsed_on_a_pair_is_the_pair_of_jokers() -> None:
    """Seed 9506: S leads a pair of aces; E answers with the pair of big jokers, glimpsed as
    one HR by one faint corner; N and W bomb, out of turn for the referee. One HR does not beat
    a pair, but the only pair that holds it does: E played HR HR. A glimpsed small joker on a
    pair of big ones beats nothing and is no play."""
    t, seen, out = glimpsed_then_bombed("SA SA", "HR")
    (corr,) = [e for e in out if e.type == "correction"]
    assert f"E played HR HR, which the camera glimpsed there at t={seen:g}" in corr["reason"]
    plays = in_effect(t, "play")
    assert [(p["seat"], p["cards"]) for p in plays][1] == ("E", ["HR", "HR"])
    assert not [e for e in effective_events(t.ref.events) if e.type == "foul"]
    assert t.deal.counts["E"] == 25
    assert fold(t.ref.events, t.profile) == t.ref.state
    t, _, _ = glimpsed_then_bombed("HR HR", "SB")
    assert not any("glimpsed" in str(e.data.get("reason")) for e in t.of("correction"))


def glimpsed_then_passed(lead: str, glimpse: str | None, seat: str = "E") -> Table:
    """S leads ``lead``; ``seat`` is glimpsed with ``glimpse`` 0.5 s later (no play; none with
    None); N, W and S pass (out of turn for the referee, E being on turn)."""
    t = Table()
    start(t)
    cam(t, "S", lead)
    if glimpse is not None:
        t.do("glimpse", step=0.5, seat=seat, cards=[glimpse])
    for s in "NWS":
        t.pass_(s)
    return t


def test_a_joker_glimpsed_as_the_other_joker_is_taken_when_the_table_played_on() -> None:
    """Game 47804 (paris): S leads the small joker; E answers with the big one, glimpsed by one
    weak corner as the small joker (no play). N, W and S pass, out of turn for the referee, E
    being on turn. SB beats no SB, but a glimpsed joker may be the other one
    (``GLIMPSE_JOKER_COST``): E played HR there, the only answer short of a bomb, and the
    passes are in turn. With no glimpse, a glimpse of another seat, or on a big joker (which
    neither joker beats), nothing is put in: the passes stay out of turn."""
    t = glimpsed_then_passed("SB", "SB")
    (corr,) = t.of("correction")
    seen = in_effect(t, "play")[0].t + 0.5
    assert (
        f"E played HR, the only answer short of a bomb, which the camera glimpsed there at "
        f"t={seen:g} as SB" in corr["reason"]
    )
    plays = in_effect(t, "play")
    assert [(p["seat"], p["cards"]) for p in plays] == [("S", ["SB"]), ("E", ["HR"])]
    assert plays[1]["camera"] == [] and plays[1]["legal"] is True
    assert [p["seat"] for p in in_effect(t, "pass")] == ["N", "W", "S"]
    assert not [e for e in in_effect(t, "notice") if e.data.get("ignored")]
    assert t.deal.counts["E"] == 26 and t.deal.turn == "E" and t.deal.top is None
    assert fold(t.ref.events, t.profile) == t.ref.state
    for lead, glimpse, seat in (("SB", None, "E"), ("SB", "SB", "N"), ("HR", "SB", "E")):
        again = glimpsed_then_passed(lead, glimpse, seat)
        assert not again.of("correction"), (lead, glimpse, seat)
        assert len([e for e in again.of("notice") if e.data.get("ignored")]) == 3


def test_a_glimpsed_joker_is_read_as_the_other_only_when_as_glimpsed_it_beats_nothing() -> None:
    """The other joker is a reading of a glimpse (``_glimpsed``) after the glimpse as seen,
    each the latest first, at ``GLIMPSE_JOKER_COST``; the camera's reading kept in ``extra``."""
    t = glimpsed_then_passed("SB", "SB")
    core = t.ref._core_before(2)  # after S's lead
    d = core._live_deal()
    assert d is not None
    got = t.ref._glimpsed(core, d, 0.0, 100.0)
    assert got is not None
    g, cost = got
    assert [str(c) for c in g.cards] == ["HR"] and g.extra["glimpsed"] == ["SB"]
    assert cost == channel.GLIMPSE_JOKER_COST > 0
    # on an ace the small joker glimpsed is itself, free
    t = glimpsed_then_passed("SA", "SB")
    core = t.ref._core_before(2)  # after S's lead
    d = core._live_deal()
    assert d is not None
    got = t.ref._glimpsed(core, d, 0.0, 100.0)
    assert got is not None and [str(c) for c in got[0].cards] == ["SB"] and got[1] == 0.0


def bomb_of_2s_with_an_s2_not_seen(t: Table) -> None:
    """S bombs with H2 H2 D2 D2 and leads DA DA; E's pair of 2s is read S2 C2 C2 (a trio,
    illegal), the table plays on, and the second look takes it as a bomb with an S2 not seen;
    E leads D6, N and W answer."""
    start(t)
    t.play("S", "H2 H2 D2 D2")
    for s in "ENW":
        t.pass_(s)
    t.play("S", "DA DA")
    cam(t, "E", "S2 C2 C2")
    for s in "NWS":
        t.pass_(s)
    t.play("E", "D6")
    t.play("N", "D9")
    t.play("W", "DT")


def test_a_third_copy_undoes_a_card_the_second_look_added() -> None:
    """E's pair of 2s (the level) over a pair of aces is read S2 C2 C2: a trio, illegal. The
    table plays on as if it beat the aces, and the second look finds two readings at one cost,
    a C2 too many or an S2 not seen (a bomb of 2s), and takes the bomb. When a third S2 comes
    later, the S2 the camera never saw is the likelier error: E's play is read again without
    it (S2 C2) and the later S2 stands. (S bombs with H2 H2 D2 D2 first, so that the 2 not
    seen can only be an S2: the second look takes the card with the fewest copies accounted
    for.)"""
    t = Table()
    bomb_of_2s_with_an_s2_not_seen(t)
    (first,) = t.of("correction")
    assert "S2 not seen" in first["reason"]  # the bomb, as on bench game 9602
    out = cam(t, "S", "S2")
    (corr,) = [e for e in out if e.type == "correction"]
    assert "S2 seen a third time" in corr["reason"]
    assert "E's S2 S2 C2 C2 (the camera read S2 C2 C2) re-read as S2 C2" in corr["reason"]
    plays = [(p["seat"], sorted(p["cards"])) for p in in_effect(t, "play")]
    assert plays == [
        ("S", ["D2", "D2", "H2", "H2"]),
        ("S", ["DA", "DA"]),
        ("E", ["C2", "S2"]),
        ("E", ["D6"]),
        ("N", ["D9"]),
        ("W", ["DT"]),
        ("S", ["S2"]),
    ]
    assert not [f for f in in_effect(t, "foul") if f["kind"] == "duplicate_card"]
    assert t.deal.counts["E"] == 24 and t.deal.counts["S"] == 20
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_play_still_illegal_after_a_third_copy_undo_stays_a_suspect() -> None:
    """As above, but S's third S2 comes with a ghost C3 beside it: not a combo. The third copy
    undoes the S2 the second look added to E's play, and S's play stays illegal as read; when
    the table then plays on as if S had played the single S2 (the others pass, S leads), it is
    read again without the C3 (it was dropped from the suspects after the undo: bench game 9808,
    E's SQ with a ghost DQ)."""
    t = Table()
    bomb_of_2s_with_an_s2_not_seen(t)
    out = cam(t, "S", "S2 C3")
    assert [e.type for e in out if e.type == "correction"] == ["correction"]
    for s in "ENW":
        t.pass_(s)
    t.play("S", "H5")
    plays = [(p["seat"], sorted(p["cards"])) for p in in_effect(t, "play")]
    assert plays[-2:] == [("S", ["S2"]), ("S", ["H5"])]
    assert "no card for C3" in in_effect(t, "play")[-2]["reread"]
    assert not [f for f in in_effect(t, "foul") if f["kind"] == "illegal_play"]
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_plays_and_passes_after_the_deal_ended_by_the_count_are_clashes() -> None:
    """W is out. E answers S's single with a queen and a ghost DQ beside it: a pair on a single,
    illegal, and too dear to drop at once (4.72 nats), so E is counted one card short. Nothing
    else clashes until E's next-to-last card empties its hand by the count and ends the deal;
    then N passes outside the deal. That is a clash too: E's pair is read again as the single
    SQ, and E goes out with its last card after S's pass (bench game 9808: E's HR was ignored
    as outside the deal)."""
    t = Table()
    w_out_then_e_down_to_eight(t)
    leads(t, "E", ("S8 S8",), "NS")
    t.play("E", "H9 H9")
    t.pass_("N")
    t.play("S", "SJ SJ")
    t.pass_("E")
    t.pass_("N")
    t.play("S", "C6")
    ghost = [{"card": "DQ", "or": [["SQ", 1.28], [None, 4.72]]}, {"card": "SQ", "or": [[None, 8]]}]
    t.do("played", seat="E", cards=["SQ", "DQ"], doubts=ghost)
    assert [f["kind"] for f in t.fouls()] == ["illegal_play"]
    t.pass_("N")
    t.play("S", "SA")
    t.play("E", "S2")
    t.pass_("N")
    t.pass_("S")
    t.play("E", "DK")
    assert len(t.of("deal_ended")) == 1  # E out by the count, one card early
    out = t.pass_("N")  # the illegal pair and this pass: two clashes
    (corr,) = [e for e in out if e.type == "correction"]
    assert "re-read as SQ (no card for DQ" in corr["reason"]
    t.pass_("S")
    t.play("E", "HR")
    events = effective_events(t.ref.events)
    assert [e["cards"] for e in events if e.type == "play"][-1] == ["HR"]
    assert [e["order"][:2] for e in events if e.type == "deal_ended"] == [["W", "E"]]
    assert not [e for e in events if e.type == "notice" and e.data.get("outside")]
    assert not [e for e in events if e.type == "foul"]
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_third_copy_undoes_a_swap_by_reading_the_play_as_the_camera_did() -> None:
    """N's full house S3 S3 H3 S7 S7 is read right. S's later S3 C3 S9 H9 D9 holds a third S3,
    and the swap re-reads N's S3 with its cheap runner-up C3 (2.44 nats against 3.07 for S's).
    When a third C3 then comes, the C3 that N's play holds only by the swap is the likelier
    error: N's play is read as the camera read it, not changed in another card (seed 9406:
    it became S3 S3 H3 S7 H7, "no card for S7, H7 not seen", at 6 nats)."""
    t = Table()
    start(t, leader="N")
    doubts = [{"card": "S3", "or": [["C3", 2.44]]}, {"card": "S7", "or": [["D7", 4.0]]}]
    t.do("played", seat="N", cards="S3 S3 H3 S7 S7".split(), doubts=doubts)
    for s in "WSE":
        t.pass_(s)
    t.play("N", "D4")
    t.pass_("W")
    t.play("S", "D5")
    for s in "ENW":
        t.pass_(s)
    third = [{"card": "S3", "or": [["C3", 3.07]]}]
    t.do("played", seat="S", cards="S3 C3 S9 H9 D9".split(), doubts=third)
    assert sorted(in_effect(t, "play")[0]["cards"]) == ["C3", "H3", "S3", "S7", "S7"]  # swapped
    for s in "ENW":
        t.pass_(s)
    t.do("played", seat="S", cards=["C3"], doubts=[{"card": "C3", "or": [["S3", 4.5]]}])
    first = in_effect(t, "play")[0]
    assert sorted(first["cards"]) == ["H3", "S3", "S3", "S7", "S7"]
    assert "as the camera read it" in first["reread"]
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_guessed_card_undone_is_replaced_by_one_the_rest_of_the_deal_leaves_unaccounted() -> None:
    """S's straight T J K A is read without its queen; the second look takes an SQ (no queen
    seen yet). Later W plays HQ HQ and N two SQs: the third SQ undoes the guess, and the queen
    is now the one with the fewest copies in the whole deal (CQ), not the next in the suits'
    order (HQ, both of whose copies W played; bench game 9602)."""
    t = Table()
    straight_short_of_its_queen(t)
    assert "SQ" in in_effect(t, "play")[0]["cards"]
    t.play("E", "D5")
    t.play("N", "D6")
    t.play("W", "D7")
    for s in "SEN":
        t.pass_(s)
    t.play("W", "HQ HQ")
    for s in "SEN":
        t.pass_(s)
    t.play("W", "H4")
    t.pass_("S")
    t.pass_("E")
    t.play("N", "SQ")
    for s in "WSE":
        t.pass_(s)
    cam(t, "N", "SQ")
    first = in_effect(t, "play")[0]
    assert sorted(first["cards"]) == ["CA", "CJ", "CK", "CQ", "DT"]
    assert "CQ not seen" in first["reread"]
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_trick_top_read_a_card_short_is_read_again_when_the_next_plays_did_not_beat_it() -> None:
    """E's pair of sevens is read as one S7 (the other seven's index under the floor), legal
    as read. N's pair of jacks and W's pair of kings do not beat a single 7, and the table plays
    on as if they did: the top of the trick is read again, a seven more, and both pairs stand
    (seed 9408: the second look had dropped a jack from N's pair, then a king from W's)."""
    t = Table()
    start(t, leader="E")
    cam(t, "E", "S7")  # E leads S7 S7; one seven not seen
    cam(t, "N", "HJ DJ")
    cam(t, "W", "HK CK")
    t.pass_("S")
    t.pass_("E")
    t.pass_("N")
    t.play("W", "C5")  # W won the trick and leads
    plays = [(p["seat"], p["cards"]) for p in in_effect(t, "play")]
    assert plays == [
        ("E", ["S7", "H7"]),
        ("N", ["HJ", "DJ"]),
        ("W", ["HK", "CK"]),
        ("W", ["C5"]),
    ], plays
    top = in_effect(t, "play")[-4]
    assert top["camera"] == ["S7"] and "did not beat it as read" in top["reread"]
    assert not [e for e in effective_events(t.ref.events) if e.type == "foul"]
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_trick_top_with_a_card_the_camera_may_have_missed_is_an_illegal_play() -> None:
    """Game 47602 (plastic): N's D8 SQ, not a combo, was read D8, SQ a card that may lie there
    (1.40 nats). As read it was a legal top; S's S8 did not beat it, and the referee judged the
    next ten plays out of turn. The table played on as if N's play did not count: the top is
    read again with the card the camera may have missed, an illegal play (N's foul, the
    camera's: it counts when the floor referee marks it), and the plays after it stand."""
    t = Table()
    start(t, leader="W")
    cam(t, "W", "H4")
    cam(t, "S", "H5")
    cam(t, "E", "D7")
    missed = [{"card": None, "or": [["SQ", 1.4], ["CQ", 2.34]]}]
    t.do("played", seat="N", cards=["D8"], doubts=missed)
    t.pass_("W")
    cam(t, "S", "S8")
    cam(t, "E", "C9")
    t.pass_("W")
    cam(t, "S", "HT")
    cam(t, "E", "CJ")
    plays = in_effect(t, "play")
    assert [(p["seat"], p["cards"], p["legal"]) for p in plays[3:]] == [
        ("N", ["D8", "SQ"], False),
        ("S", ["S8"], True),
        ("E", ["C9"], True),
        ("S", ["HT"], True),
        ("E", ["CJ"], True),
    ], plays
    assert plays[3]["camera"] == ["D8"] and "SQ a card it may have missed" in plays[3]["reread"]
    fouls = [e for e in effective_events(t.ref.events) if e.type == "foul"]
    assert [(f["seat"], f["kind"], f.get("review")) for f in fouls] == [("N", "illegal_play", True)]
    assert fold(t.ref.events, t.profile) == t.ref.state
    # the same top the table did treat as one (S beat it with a nine): no second look
    t2 = Table()
    start(t2, leader="W")
    for seat, cards in (("W", "H4"), ("S", "H5"), ("E", "D7")):
        t2.play(seat, cards)
    t2.do("played", seat="N", cards=["D8"], doubts=missed)
    t2.pass_("W")
    cam(t2, "S", "S9")
    assert not t2.of("correction")
    assert [p["cards"] for p in in_effect(t2, "play")][3:] == [["D8"], ["S9"]]


def e_single_on_a_pair() -> Table:
    """S leads S9 H9; E's play is seen as SK alone (illegal: a single on a pair); N plays HA HA,
    W and S pass: E, barred for its illegal play as the referee stands, is next at the table."""
    t = Table()
    start(t)
    t.play("S", "S9 H9")
    t.do("played", seat="E", cards=["SK"], doubts=[{"card": "SK", "or": [["CK", 4.1]]}])
    t.play("N", "HA HA")
    t.pass_("W")
    t.pass_("S")
    return t


def test_a_card_of_a_pair_seen_only_with_the_seats_next_play_joins_the_pair() -> None:
    """Seed 9902: E's CK SK was seen as SK alone (the CK's index under the SK), a single on
    S's pair of nines; N's pair of aces, W and S pass. E's H2 C2 (twos are the level: they beat
    aces) was seen with both kings: the hand moved the CK into view and the SK was reported
    again. The kings go to E's first play, the SK seen again is no card, and both plays stand
    legal."""
    t = e_single_on_a_pair()
    doubts = [
        {"card": "SK", "or": [[None, 1.0], ["CK", 1.7]]},
        {"card": "CK", "or": [[None, 3.7], ["SK", 4.2]]},
        {"card": "H2", "or": [["D2", 3.1]]},
    ]
    out = t.do("played", seat="E", cards="H2 C2 SK CK".split(), doubts=doubts)
    assert [e.type for e in out].count("correction") == 1  # both plays, one correction
    plays = in_effect(t, "play")
    assert [(p["seat"], sorted(p["cards"])) for p in plays] == [
        ("S", ["H9", "S9"]),
        ("E", ["CK", "SK"]),
        ("N", ["HA", "HA"]),
        ("E", ["C2", "H2"]),
    ]
    assert all(p["legal"] for p in plays)
    assert plays[1]["camera"] == ["SK"] and "CK seen only with E's next play" in plays[1]["reread"]
    assert "no card for SK" in plays[3]["reread"]
    assert not [e for e in effective_events(t.ref.events) if e.type == "foul"]
    assert t.deal.counts["E"] == 23 and t.deal.turn == "N"
    assert fold(t.ref.events, t.profile) == t.ref.state


@pytest.mark.parametrize("back", ["HJ", "SJ"])
def test_of_two_cards_either_of_which_joins_the_last_play_the_one_seen_coming_back_goes(
    back: str,
) -> None:
    """Proc-serif 48845: S's straight D8 D9 DT HJ DQ is seen without its HJ (not a combination);
    E answers with a straight, N passes, and S's next straight HT SJ HQ CK CA is seen with the HJ
    too (it lay under the new cards and came back into view; the tracker gives it "no card" as
    a runner-up). A jack joins the first straight: either jack leaves both plays legal, and the
    one the camera doubted in the later play goes, not the other (the old order took the SJ)."""
    t = Table()
    start(t)
    cam(t, "W", "CK")  # out of turn (taken back): W is barred from the trick, as in 48845
    cam(t, "S", "D8 D9 DT DQ")
    cam(t, "E", "H9 ST CJ CQ HK")
    t.pass_("N")
    cards = "HT SJ HJ HQ CK CA".split()
    doubts = [{"card": c, "or": [[None, 2.4]] if c == back else [["HA", 4.5]]} for c in cards]
    out = t.do("played", seat="S", cards=cards, doubts=doubts)
    assert [e.type for e in out].count("correction") == 1
    plays = [sorted(p["cards"]) for p in in_effect(t, "play")]
    stays = "SJ" if back == "HJ" else "HJ"
    assert plays == [
        sorted(["D8", "D9", "DT", back, "DQ"]),
        sorted("H9 ST CJ CQ HK".split()),
        sorted(["HT", stays, "HQ", "CK", "CA"]),
    ]
    fouls = [(e["seat"], e["kind"]) for e in effective_events(t.ref.events) if e.type == "foul"]
    assert fouls == [("W", "out_of_turn")]
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_seats_next_play_gives_no_card_to_its_last_one_without_a_gain() -> None:
    """E's single SK on a pair is illegal and stays so when E's next play of the trick holds a
    king but its other card, a single three, is no legal play on the aces in any reading: the
    kings are not split across the two plays."""
    t = e_single_on_a_pair()
    out = cam(t, "E", "CK C3")
    assert "correction" not in [e.type for e in out]
    assert [p["cards"] for p in in_effect(t, "play")][1] == ["SK"]


def test_a_last_card_glimpsed_is_taken_before_the_seat_is_taken_as_gone_out_unseen() -> None:
    """Seed 9501: E, with one card left, answers N's HK with its last card, the big joker,
    which the camera glimpses by one faint corner only. N and W pass (ignored: E on turn). The
    glimpse says E played HR there, and E goes out with it: the trick goes on to S, and W, E's
    partner, leads after the clearing. (Without it, W's lead is out of turn here and E never
    out; on seed 9501 the referee took S as gone out with the play before, HJ, and the deal's
    finishing order was wrong.)"""
    t = Table()
    e_down_to_eight(t)
    leads(t, "E", ("H3 H3 D3 S9 S9", "SA"), "NWS")
    cam(t, "E", "D4")
    cam(t, "N", "HK")
    t.pass_("W")
    t.pass_("S")
    t.do("glimpse", step=0.5, seat="E", cards=["HR"])
    seen = t.t
    t.pass_("N")
    out = t.pass_("W")
    (corr,) = [e for e in out if e.type == "correction"]
    assert f"E played HR, which the camera glimpsed there at t={seen:g}" in corr["reason"]
    t.pass_("S")
    t.do("trick_cleared")
    cam(t, "W", "C5")
    events = effective_events(t.ref.events)
    assert not [e for e in events if e.type == "foul"]
    (joker,) = [e for e in events if e.type == "play" and e.data["cards"] == ["HR"]]
    assert joker.t == seen and joker["camera"] == [] and joker["left"] == 0
    assert t.deal.order == ["E"] and t.deal.counts["E"] == 0
    assert [p["seat"] for p in in_effect(t, "play")][-1] == "W"
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_play_re_read_as_it_came_is_an_illegal_play_when_the_table_played_on_so() -> None:
    """Seed 9303: E's DJ S6 (two singles: a real illegal play) was re-read as it came as S6, no
    card for DJ at 2.98 nats, and every later play was judged against a single 6. When the
    table plays on as if E's play had been illegal (N's C6 beats S's S5, N leads the next
    trick, W answers), the search takes E's play as the camera read it: one illegal play for
    review, no other foul."""
    t = Table()
    start(t)
    t.play("S", "S5")
    doubts = [{"card": "DJ", "or": [[None, 2.98]]}, {"card": "S6", "or": [["SB", 4.9]]}]
    out = t.do("played", seat="E", cards=["DJ", "S6"], doubts=doubts)
    assert [e["cards"] for e in out if e.type == "play"] == [["S6"]]  # re-read as it came
    cam(t, "N", "C6")
    t.pass_("W")
    t.pass_("S")
    t.play("N", "D9")
    cam(t, "W", "DT")
    plays = [(p["seat"], p["cards"], p["legal"]) for p in in_effect(t, "play")]
    assert plays == [
        ("S", ["S5"], True),
        ("E", ["DJ", "S6"], False),
        ("N", ["C6"], True),
        ("N", ["D9"], True),
        ("W", ["DT"], True),
    ], plays
    fouls = [(f["seat"], f["kind"], f.get("review")) for f in in_effect(t, "foul")]
    assert fouls == [("E", "illegal_play", True)], fouls
    corr = t.of("correction")[-1]
    assert "taken as the camera read it" in corr["reason"]
    assert fold(t.ref.events, t.profile) == t.ref.state
