"""Deal scenarios written from RULES.md: turn order, 接风, going out on a bomb, tribute (ties
under each rule, anti-tribute, limits), fouls and A attempts."""

from __future__ import annotations

import pytest

from engine.cards import parse_card
from engine.deal import fold
from tests.referee.helpers import Table, play_out


def start(table: Table, leader: str | None = "S", **kw: object) -> None:
    fields: dict[str, object] = dict(kw)
    if leader is not None:
        fields["first_leader"] = leader
    table.do("deal_start", **fields)


def test_turn_order_passes_and_trick_winner_leads() -> None:
    t = Table()
    start(t)
    assert t.deal.turn == "S" and t.deal.counts == {"N": 27, "E": 27, "S": 27, "W": 27}
    t.play("S", "S3")
    assert t.deal.turn == "E"  # S -> E -> N -> W
    t.play("E", "S5")
    assert t.deal.turn == "N"
    t.pass_("N")
    t.pass_("W")
    t.pass_("S")
    assert t.deal.turn == "E" and t.deal.top is None  # trick winner leads
    assert t.deal.counts["S"] == 26 and t.deal.counts["E"] == 26
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_clockwise_direction_profile() -> None:
    from engine.profiles import load_profile, profile_from_toml

    base = load_profile("standard")
    prof = profile_from_toml('extends = "standard"\nname = "cw"\n[play]\ndirection = "clockwise"\n')
    assert base.play.seat_order != prof.play.seat_order
    t = Table(prof)
    start(t)
    t.play("S", "S3")
    assert t.deal.turn == "W"


def test_jiefeng_partner_leads_after_going_out_unanswered() -> None:
    t = Table()
    start(t)
    for bomb in ("S3 S3 H3 H3 C3 C3 D3 D3", "S4 S4 H4 H4 C4 C4 D4 D4", "S5 S5 H5 H5 C5 C5 D5"):
        t.play("S", bomb)
        for s in "ENW":
            t.pass_(s)
        assert t.deal.turn == "S"
    ev = t.play("S", "S6 S6 H6 H6")  # 27th card, out on a bomb
    assert [e.type for e in ev] == ["play", "seat_out"] and ev[1]["place"] == 1
    t.pass_("E")
    assert t.deal.turn == "N"  # N must still answer S's bomb
    t.pass_("N")
    t.pass_("W")
    assert t.deal.turn == "N" and t.deal.top is None  # 接风: partner leads


def test_out_on_bomb_answered_then_trick_goes_to_answerer() -> None:
    t = Table()
    start(t)
    for bomb in ("S3 S3 H3 H3 C3 C3 D3 D3", "S4 S4 H4 H4 C4 C4 D4 D4", "S5 S5 H5 H5 C5 C5 D5"):
        t.play("S", bomb)
        for s in "ENW":
            t.pass_(s)
    t.play("S", "S6 S6 H6 H6")
    t.play("E", "S7 S7 H7 H7 C7")  # 5-card bomb beats the 4-card bomb
    t.pass_("N")
    t.pass_("W")
    assert t.deal.turn == "E"  # S is skipped (out); E won the trick


def test_finished_seats_skipped_and_deal_ends_with_levels() -> None:
    t = Table("standard")
    start(t)
    play_out(t, ["S", "N"])
    ended = t.of("deal_ended")[-1]
    assert ended["order"][:2] == ["S", "N"]
    assert ended["levels"] == {"NS": "5", "EW": "2"}  # 双下: +3
    assert [e["place"] for e in t.of("seat_out")] == [1, 2]
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_jiefeng_chain_partner_then_other_team() -> None:
    t = Table("standard")
    start(t)
    play_out(t, ["S", "E", "N"])
    ended = t.of("deal_ended")[-1]
    assert ended["order"] == ["S", "E", "N", "W"]
    assert ended["levels"]["NS"] == "4"  # partner 3rd: +2


def _double_down(profile: str = "standard") -> Table:
    t = Table(profile)
    start(t)
    play_out(t, ["S", "N"])
    order = t.of("deal_ended")[-1]["order"]
    assert order[:2] == ["S", "N"]
    return t


@pytest.mark.parametrize(
    ("profile", "cards", "to_s", "leader"),
    [
        ("standard", {"E": "SA", "W": "SK"}, "E", "E"),  # higher to 上游, its giver leads
        ("standard", {"E": "SK", "W": "SA"}, "W", "W"),
        ("standard", {"E": "SA", "W": "CA"}, "E", "E"),  # tie, clockwise: S's 下家 E
        ("huaian", {"E": "SA", "W": "CA"}, "last", "last"),  # tie, fixed: 末游 -> 头游, leads
    ],
)
def test_double_tribute_and_ties(
    profile: str, cards: dict[str, str], to_s: str, leader: str
) -> None:
    t = _double_down(profile)
    last = t.of("deal_ended")[-1]["order"][3]
    if to_s == "last":
        to_s = leader = last
    t.do("deal_start")
    for seat in ("E", "W"):
        t.do("tribute", seat=seat, card=cards[seat])
    trib = {e["from"]: e["to"] for e in t.of("tribute")}
    assert trib[to_s] == "S"
    started = t.of("deal_started")[-1]
    assert started["leader"] == leader and started["level"] == "5"
    t.do("tribute_return", seat="S", card="S4")
    t.do("tribute_return", seat="N", card="C4")
    assert {(e["from"], e["to"]) for e in t.of("tribute_returned")} == {
        ("S", to_s),
        ("N", "W" if to_s == "E" else "E"),
    }
    assert t.deal.turn == leader and not t.fouls()


def test_double_tie_winner_chooses() -> None:
    from engine.profiles import profile_from_toml

    prof = profile_from_toml(
        'extends = "standard"\nname = "choose"\n[tribute]\ndouble_tie = "winner_chooses"\n'
    )
    t = Table(prof)
    start(t)
    play_out(t, ["S", "N"])
    t.do("deal_start")
    t.do("tribute", seat="E", card="SA", to="N")
    t.do("tribute", seat="W", card="CA", to="S")
    assert t.of("deal_started")[-1]["leader"] == "W"  # 被挑中的一方先出牌
    assert {e["from"]: e["to"] for e in t.of("tribute")} == {"W": "S", "E": "N"}


def test_single_down_tribute_return_limit_and_wild() -> None:
    t = Table("standard")
    start(t)
    play_out(t, ["S", "E", "W"])  # S 1st, N 4th: NS +1, 下游 is S's own partner
    assert t.of("deal_ended")[-1]["order"] == ["S", "E", "W", "N"]
    t.do("deal_start")
    t.do("tribute", seat="N", card="H3")  # level 3: H3 is a wild
    assert t.of("deal_started")[-1]["leader"] == "N"
    assert [f["kind"] for f in t.fouls()] == ["wrong_tribute"]
    t.do("tribute_return", seat="S", card="SK")  # above 10 under standard
    assert [f["kind"] for f in t.fouls()] == ["wrong_tribute", "wrong_tribute"]
    assert t.deal.turn == "N"


def test_return_any_card_under_huaian() -> None:
    t = Table("huaian")
    start(t)
    play_out(t, ["S", "E", "W"])
    t.do("deal_start")
    t.do("tribute", seat="N", card="SA")
    t.do("tribute_return", seat="S", card="SK")
    assert not t.fouls()


def test_wrong_tribute_found_when_payer_plays_higher_card() -> None:
    t = Table("huaian")
    start(t)
    play_out(t, ["S", "E", "W"])
    t.do("deal_start")
    t.do("tribute", seat="N", card="SK")
    t.do("tribute_return", seat="S", card="DA")  # any card may be returned (001)
    t.play("N", "DA")  # received in return: fine
    assert not t.fouls()
    for s in "WSE":
        t.pass_(s)
    t.play("N", "CA")  # a higher card N held: the tribute was wrong
    assert [(f["seat"], f["kind"]) for f in t.fouls()] == [("N", "wrong_tribute")]


def test_anti_tribute_single_and_double() -> None:
    t = Table("standard")
    start(t)
    play_out(t, ["S", "E", "W"])
    t.do("deal_start")
    t.do("shown", seat="N", cards=["HR", "HR"])
    anti = t.of("anti_tribute")
    assert anti and anti[-1]["seats"] == ["N"]
    assert t.of("deal_started")[-1]["leader"] == "S"  # 上游 leads
    assert not t.of("tribute")

    t2 = _double_down()
    t2.do("deal_start")
    t2.do("shown", seat="E", cards=["HR"])
    assert not t2.of("deal_started")[1:]  # one big joker is not enough
    t2.do("shown", seat="W", cards=["HR"])
    assert sorted(t2.of("anti_tribute")[-1]["seats"]) == ["E", "W"]
    assert t2.of("deal_started")[-1]["leader"] == "S"


def test_out_of_turn_does_not_corrupt_turn_order() -> None:
    t = Table()
    start(t)
    t.play("S", "S3")
    ev = t.play("N", "S9")  # E was on turn
    assert [(e.type, e["kind"]) for e in ev] == [("foul", "out_of_turn")]
    assert t.deal.turn == "E" and t.deal.counts["N"] == 27  # taken back
    t.pass_("E")
    assert t.deal.turn == "W"  # N lost the right to play in this trick
    t.pass_("W")
    assert t.deal.turn == "S" and t.deal.top is None
    t.play("S", "S4")
    t.pass_("E")
    assert t.deal.turn == "N"  # the bar lasts one trick


def test_illegal_play_flagged_never_blocks() -> None:
    t = Table()
    start(t)
    t.play("S", "S9")
    ev = t.play("E", "S5")  # does not beat
    assert [e.type for e in ev] == ["play", "foul"] and ev[0]["legal"] is False
    assert t.deal.counts["E"] == 26 and t.deal.top is not None and t.deal.top.key == "9"
    assert t.deal.turn == "N"
    t.play("N", "S4 S6")  # not a combo
    assert t.fouls("illegal_play")[-1]["detail"] == "not a combo"
    assert t.deal.turn == "W"
    t.play("W", "ST")
    assert t.deal.owner == "W"


def test_exposed_card_and_slow_play() -> None:
    t = Table("standard")
    start(t)
    t.play("S", "S3")
    t.do("exposed", seat="E", cards=["HK"])
    assert t.deal.turn == "N"  # E on turn lost the trick
    t.do("played", step=35.0, seat="N", cards=["S4"])  # 30-45 s: warning
    assert t.of("warning")[-1]["kind"] == "slow_play"
    t.do("pass", step=50.0, seat="W")  # > 45 s: foul
    assert [f["kind"] for f in t.fouls()] == ["exposed_card", "slow_play"]


def test_duplicate_card_flagged_not_counted() -> None:
    t = Table()
    start(t)
    t.play("S", "SA")
    t.play("E", "SB")
    t.play("N", "HR")
    t.pass_("W")
    t.pass_("S")
    t.pass_("E")
    t.play("N", "S3")
    t.play("W", "SA")
    t.play("S", "SB")
    t.pass_("E")
    t.pass_("N")
    t.pass_("W")
    t.play("S", "S4")
    t.play("E", "SA")  # a third SA: probable misread
    f = t.fouls()
    assert [x["kind"] for x in f] == ["duplicate_card"] and f[0]["seat"] == "E"
    assert t.ref.state.team_fouls == {"NS": 0, "EW": 0}


def test_card_count_warning_then_foul_and_alert() -> None:
    t = Table("standard")
    start(t)
    t.do("count_report", seat="E", count=20)
    t.do("count_report", seat="E", count=27)  # right: nothing
    t.do("count_report", seat="E", count=26)
    assert [e.type for e in t.ref.events if e.type in ("warning", "foul")] == ["warning", "foul"]
    for bomb in ("S3 S3 H3 H3 C3 C3 D3 D3", "S4 S4 H4 H4 C4 C4 D4 D4", "S5 S5 H5 H5 C5 C5"):
        t.play("S", bomb)
        for s in "ENW":
            t.pass_(s)
    alert = t.of("count_alert")
    assert alert and alert[0]["seat"] == "S" and alert[0]["count"] == 5  # report at 6


def test_three_fouls_lose_the_match() -> None:
    t = Table("standard")
    start(t)
    t.play("S", "S3")
    t.play("N", "S4")  # out of turn (NS 1)
    t.do("exposed", seat="S", cards=["D9"])  # NS 2
    t.do("exposed", seat="N", cards=["D8"])  # NS 3
    ended = t.of("match_ended")
    assert ended and ended[0]["winner"] == "EW" and ended[0]["reason"] == "fouls"
    assert t.ref.state.match_over
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_a_attempts_pass_and_fail() -> None:
    t = Table("huaian")
    start(t)
    for _ in range(4):  # 2 -> 5 -> 8 -> J -> A by double downs
        play_out(t, ["S", "N"])
        t.do("deal_start")
        t.do("tribute", seat="E", card="SA")
        t.do("tribute", seat="W", card="SK")
        t.do("tribute_return", seat="S", card="S3")
        t.do("tribute_return", seat="N", card="C3")
    assert t.ref.state.match.levels == {"NS": "A", "EW": "2"}
    assert t.of("deal_started")[-1]["level"] == "A"
    for k in range(3):  # 1-4 at A: a failed attempt each time; the third drops NS to 2
        play_out(t, ["S", "E", "W"])
        ended = t.of("deal_ended")[-1]
        assert ended["a_attempt"] == ("failed" if k < 2 else "reset")
        if k < 2:
            t.do("deal_start")
            t.do("tribute", seat="N", card="SA")
            t.do("tribute_return", seat="S", card="S3")
    assert t.ref.state.match.levels["NS"] == "2"
    assert not t.ref.state.match_over


def test_passing_a_ends_the_match() -> None:
    t = Table("standard")
    start(t)
    for _ in range(5):
        if t.ref.state.match_over:
            break
        play_out(t, ["S", "N"])
        if t.ref.state.match_over:
            break
        t.do("deal_start")
        t.do("tribute", seat="E", card="SA")
        t.do("tribute", seat="W", card="SK")
        t.do("tribute_return", seat="S", card="S3")
        t.do("tribute_return", seat="N", card="C3")
    ended = t.of("match_ended")
    assert ended and ended[0]["winner"] == "NS" and ended[0]["reason"] == "passed_a"


def test_first_leader_unknown_anyone_may_lead() -> None:
    t = Table()
    start(t, leader=None)
    assert t.deal.turn is None
    t.play("W", "S3")
    assert t.deal.turn == "S" and not t.fouls()


def test_national_partner_may_not_lead_same_kind_after_out_of_turn() -> None:
    t = Table("national")
    start(t)
    t.play("S", "S3")
    t.play("W", "S9")  # out of turn (E on turn): W's partner E may not lead a single next trick
    assert t.fouls()[-1]["lead_ban"] == {"seat": "E", "kind": "single"}
    t.play("E", "S5")
    t.pass_("N")
    t.pass_("S")  # W is barred: the trick goes back to E
    assert t.deal.turn == "E" and t.deal.top is None
    ev = t.play("E", "S6")
    assert ev[0]["legal"] is False and "may not lead a single" in ev[1]["detail"]
    assert t.deal.turn == "N"
    t.play("N", "S7 S7")  # a pair is fine for anyone else
    assert t.deal.owner == "N"


def test_national_wrong_tribute_voids_the_hand() -> None:
    t = Table("national")
    start(t)
    play_out(t, ["S", "E", "W"])  # N 4th pays S
    t.do("deal_start")
    t.do("tribute", seat="N", card="SK")
    t.do("tribute_return", seat="S", card="S4")
    t.play("N", "CA")  # N held a higher card: the hand is void, N finishes last
    f = t.fouls()[-1]
    assert f["kind"] == "wrong_tribute" and f["void"] is True
    assert "N" in t.deal.void and t.deal.turn == "W"
    play_out(t, ["E", "W"])
    ended = t.of("deal_ended")[-1]
    assert ended["order"][:2] == ["E", "W"] and ended["order"][-1] == "N"
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_three_fouls_deal_lost_penalty() -> None:
    from engine.profiles import profile_from_toml

    prof = profile_from_toml('extends = "standard"\nname = "dl"\n[fouls]\npenalty = "deal_lost"\n')
    t = Table(prof)
    start(t)
    for seat, card in (("E", "D9"), ("W", "D8"), ("E", "D7")):
        t.do("exposed", seat=seat, cards=[card])
    ended = t.of("deal_ended")[-1]
    assert ended["forfeit"] == "EW" and ended["levels"] == {"NS": "5", "EW": "2"}
    assert not t.ref.state.match_over and t.ref.state.team_fouls["EW"] == 0
    t.play("S", "S3")  # the deal is over: ignored with a notice
    assert t.ref.events[-1].type == "notice"
    t.do("deal_start")
    assert t.of("deal_started")[-1]["level"] == "5"


def test_exposed_by_unknown_seat_is_not_counted() -> None:
    t = Table()
    start(t)
    t.do("exposed", seat=None, cards=["C5"])
    f = t.fouls()[-1]
    assert f["seat"] is None and f["kind"] == "exposed_card"
    assert t.ref.state.team_fouls == {"NS": 0, "EW": 0} and t.deal.turn == "S"


def test_random_level_from_the_cut_and_time_limit_tie() -> None:
    t = Table("eight-deal-random-level")
    t.do("deal_start", first_leader="E", level="joker")
    assert t.of("deal_started")[-1]["level"] is None
    t.play("E", "HA")  # no level: an ordinary single A
    assert t.deal.counts["E"] == 26
    t.do("deal_start", level="9")  # abandoned deal, then a cut 9
    assert t.of("deal_started")[-1]["level"] == "9"


def test_joker_cut_deal_has_no_wilds() -> None:
    """000 篇6 "抽到大小王不带": a joker cut brings no wild, so ♥A is an ordinary A and a play
    that is a combo only with ♥A as a wild is an illegal play."""
    t = Table("eight-deal-random-level")
    t.do("deal_start", first_leader="E", level="joker")
    assert t.of("deal_started")[-1]["level"] is None and t.deal.level is None
    ev = t.play("E", "HA S5")  # a pair only if ♥A were wild
    assert [e.type for e in ev] == ["play", "foul"]
    assert ev[0]["legal"] is False and ev[0]["combo"] is None
    assert ev[1]["kind"] == "illegal_play" and ev[1]["detail"] == "not a combo"
    assert t.deal.top is None and t.deal.turn == "N"
    ev = t.play("N", "SK")
    assert ev[0]["combo"]["level"] is None and ev[0]["combo"]["wilds"] == []
    ev = t.play("W", "HA")  # a plain A beats K
    assert ev[0]["legal"] is not False and ev[0]["combo"]["key"] == "A"
    assert ev[0]["combo"]["level"] is None and ev[0]["combo"]["wilds"] == []
    assert t.deal.top is not None and t.deal.owner == "W"
    assert t.deal.top.value == 14  # no level rank: A is not promoted
    assert fold(t.ref.events, t.profile) == t.ref.state
    t.do("deal_start", first_leader="E", level="joker")  # abandoned; another joker cut
    ev = t.play("E", "HA S5 C5 D5")  # a 5 bomb only if ♥A were wild
    assert ev[0]["legal"] is False and t.fouls()[-1]["kind"] == "illegal_play"
    ev = t.play("N", "HA S2 D2")  # a triple only if ♥A were wild
    assert ev[0]["legal"] is False and t.fouls()[-1]["seat"] == "N"
    assert t.deal.top is None and not t.fouls("duplicate_card")
    assert fold(t.ref.events, t.profile) == t.ref.state
    # a cut rank: its ♥ cards are wild again
    t.do("deal_start", level="9")
    t.play("E", "H9 S5")
    assert t.deal.top is not None and (t.deal.top.kind, t.deal.top.key) == ("pair", "5")
    assert t.deal.top.level == "9"


def test_conservation_counts_cards_known_in_hands() -> None:
    t = Table("huaian")
    start(t)
    play_out(t, ["S", "E", "W"])  # N pays S
    t.do("deal_start")
    t.do("tribute", seat="N", card="HR")
    t.do("tribute_return", seat="S", card="D9")
    assert t.deal.known == {"S": [parse_card("HR")], "N": [parse_card("D9")]}
    t.play("N", "S3")
    t.play("W", "HR")  # one HR is known in S's hand: this is the second copy, fine
    assert not t.fouls()
    t.pass_("S")
    t.pass_("E")
    t.pass_("N")
    t.play("W", "HR")  # a third copy: probable misread
    assert [f["kind"] for f in t.fouls()] == ["duplicate_card"]
    t.do("exposed", seat="E", cards=["D9"])  # D9 is known in N's hand; E shows the second
    assert [f["kind"] for f in t.fouls()] == ["duplicate_card", "exposed_card"]
    t.do("exposed", seat="W", cards=["D9"])  # a third D9
    assert [f["kind"] for f in t.fouls()][-2:] == ["duplicate_card", "exposed_card"]
    assert fold(t.ref.events, t.profile) == t.ref.state


def test_slow_play_without_warning_and_first_play_limit() -> None:
    t = Table("jiangsu-points")  # 000 篇3: first play 40 s, later 20 s, no warning
    start(t)
    t.do("played", step=35.0, seat="S", cards=["S3"])
    assert not t.fouls() and not t.of("warning")
    t.do("played", step=25.0, seat="E", cards=["S4"])
    assert [f["kind"] for f in t.fouls()] == ["slow_play"]


def test_time_called_then_deal_finished_then_result() -> None:
    from engine.profiles import profile_from_toml

    prof = profile_from_toml('extends = "huaian"\nname = "1min"\n[time]\nlimit_minutes = 1\n')
    t = Table(prof)
    start(t)
    t.play("S", "S3", step=70.0)
    assert t.of("time_called") and not t.ref.state.match_over
    play_out(t, ["E", "W"])
    ended = t.of("match_ended")[-1]
    assert ended["winner"] == "EW" and ended["reason"] == "level"


def test_correction_inserts_a_missed_pass() -> None:
    t = Table()
    start(t)
    t.play("S", "S3")
    ev = t.play("N", "S9")  # E's pass was missed by the camera: flagged out of turn
    assert ev[0]["kind"] == "out_of_turn"
    fix = [{"type": "pass", "seat": "E"}, {"type": "played", "seat": "N", "cards": ["S9"]}]
    out = t.do("correction", replaces=ev[0].id, **{"with": fix})
    assert [e.type for e in out] == ["correction", "pass", "play"]
    assert not [e for e in t.ref.events[-2:] if e.type == "foul"]
    assert t.ref.state.team_fouls == {"NS": 0, "EW": 0} and t.deal.owner == "N"
    assert t.deal.turn == "W"
    assert fold(t.ref.events, t.profile) == t.ref.state
