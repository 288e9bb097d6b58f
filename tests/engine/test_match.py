"""MatchState: promotion tables, passing and failing A, overflow, deal points, time and forfeits.

One test per promotion / A rule of RULES.md, then hypothesis properties.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import MatchState, load_profile
from engine.match import LEVELS, draw_level, team_of
from engine.profiles import Profile, describe_profile, list_profiles, profile_from_dict

# Finishing orders (first to last). NS wins with partner 2nd / 3rd / 4th, and EW the same.
NS12, NS13, NS14 = "SNEW", "SENW", "SEWN"
EW12, EW13, EW14 = "EWSN", "ESWN", "ESNW"


def prof(**sections: dict[str, Any]) -> Profile:
    """The huaian profile with some sections overridden."""
    d = describe_profile(load_profile("huaian"))
    for k, v in sections.items():
        d[k] = {**d[k], **v}
    return profile_from_dict(d, source="test")


def play(state: MatchState, *orders: str) -> MatchState:
    for o in orders:
        state = state.after_deal(o)
    return state


def ns_at_a(profile: Profile) -> MatchState:
    """NS reaches A by double downs (123: 2->5->8->J->A); EW still at 2."""
    s = MatchState.new(profile)
    while s.levels["NS"] != "A":
        s = s.after_deal(NS12)
    return s


# ------------------------------------------------------------------ contract basics
def test_new_state_contract() -> None:
    s = MatchState.new(load_profile("huaian"))
    assert s.levels == {"NS": "2", "EW": "2"}
    assert s.winner is None and s.a_failures == {"NS": 0, "EW": 0}
    assert s.deal_level == "2" and s.declarer is None and s.deals_played == 0
    assert s.history == () and s.deal_points == {"NS": 0, "EW": 0}


def test_after_deal_returns_new_state_and_deal_level_follows_winner() -> None:
    s0 = MatchState.new(load_profile("huaian"))
    s1 = s0.after_deal(["S", "E", "N", "W"])
    assert s0.levels == {"NS": "2", "EW": "2"} and s0.deals_played == 0
    assert s1.levels == {"NS": "4", "EW": "2"}
    assert (s1.declarer, s1.deal_level) == ("NS", "4")
    s2 = s1.after_deal(EW14)
    assert s2.levels == {"NS": "4", "EW": "3"}
    assert (s2.declarer, s2.deal_level) == ("EW", "3")
    assert [d.number for d in s2.history] == [1, 2]
    assert s2.history[0].level == "2" and s2.history[1].level == "4"
    assert s2.history[1].to_json()["levels"] == {"NS": "4", "EW": "3"}


def test_levels_dict_is_a_copy() -> None:
    s = MatchState.new(load_profile("huaian"))
    s.levels["NS"] = "A"
    s.a_failures["NS"] = 9
    assert s.levels["NS"] == "2" and s.a_failures["NS"] == 0


# ------------------------------------------------------------------ promotion tables
@pytest.mark.parametrize(
    ("table", "order", "team", "level"),
    [
        ("123", NS12, "NS", "5"),
        ("123", NS13, "NS", "4"),
        ("123", NS14, "NS", "3"),
        ("246", EW12, "EW", "8"),
        ("246", EW13, "EW", "6"),
        ("246", EW14, "EW", "4"),
        ("421", NS12, "NS", "6"),
        ("421", NS13, "NS", "4"),
        ("421", NS14, "NS", "3"),
        ("531", EW12, "EW", "7"),
        ("531", EW13, "EW", "5"),
        ("531", EW14, "EW", "3"),
    ],
)
def test_promotion_table_row(table: str, order: str, team: str, level: str) -> None:
    s = MatchState.new(prof(promotion={"table": table})).after_deal(order)
    assert s.levels[team] == level
    other = "EW" if team == "NS" else "NS"
    assert s.levels[other] == "2"


def test_named_tables_in_named_profiles() -> None:
    assert MatchState.new(load_profile("hefei-qualifier")).after_deal(NS12).levels["NS"] == "8"
    assert MatchState.new(load_profile("swiss-421")).after_deal(NS12).levels["NS"] == "6"
    assert MatchState.new(load_profile("club-531")).after_deal(NS12).levels["NS"] == "7"


def test_levels_cap_at_a_without_overflow() -> None:
    s = play(MatchState.new(prof(promotion={"table": "531"})), NS12, NS12)  # 7, Q
    s = s.after_deal(NS12)  # Q + 5 -> capped at A
    assert s.levels == {"NS": "A", "EW": "2"} and s.history[-1].gained == 2
    assert s.history[-1].penalty == 0


# ------------------------------------------------------------------ overflow (000 篇3)
def test_overflow_takes_levels_off_opponents() -> None:
    p = prof(promotion={"overflow_penalises": True})
    s = play(MatchState.new(p), EW12, EW12)  # EW at 8
    s = play(s, NS12, NS12, NS12, NS13)  # NS 5, 8, J, K
    assert s.levels == {"NS": "K", "EW": "8"}
    s = s.after_deal(NS12)  # K + 3 = A + 2: two levels off EW
    assert s.levels == {"NS": "A", "EW": "6"}
    assert s.history[-1].penalty == 2 and s.history[-1].gained == 1


def test_overflow_stops_at_two() -> None:
    p = prof(promotion={"table": "531", "overflow_penalises": True})
    s = play(MatchState.new(p), EW13, NS12, NS12)  # EW 5; NS 7, Q
    s = s.after_deal(NS12)  # Q + 5 = A + 3 -> EW 5 - 3 = 2
    assert s.levels == {"NS": "A", "EW": "2"}
    s = s.after_deal(EW12)  # EW at 7
    s = s.after_deal(NS12)  # NS at A wins at EW's level: stays A, all 5 steps off EW
    assert s.levels == {"NS": "A", "EW": "2"} and s.winner is None


@pytest.mark.parametrize(("order", "penalty"), [(NS12, 3), (NS13, 2)])
def test_passing_a_takes_3_or_2_off_opponents(order: str, penalty: int) -> None:
    s = play(MatchState.new(load_profile("jiangsu-points")), EW12, EW12)  # EW 8
    s = play(s, NS12, NS12, NS12, NS12)  # NS 5, 8, J, A (J + 3): no overflow
    assert s.levels == {"NS": "A", "EW": "8"}
    s = s.after_deal(order)
    assert s.winner == "NS" and s.history[-1].a_attempt == "passed"
    assert s.levels["EW"] == LEVELS[LEVELS.index("8") - penalty]


def test_passing_a_takes_nothing_without_overflow_option() -> None:
    s = play(MatchState.new(prof()), EW12)
    s = ns_at_a_from(s)
    s = s.after_deal(NS12)
    assert s.winner == "NS" and s.levels["EW"] == "5"


def ns_at_a_from(s: MatchState) -> MatchState:
    while s.levels["NS"] != "A" or s.declarer != "NS":
        s = s.after_deal(NS12)
    return s


# ------------------------------------------------------------------ passing A
@pytest.mark.parametrize(
    ("condition", "order", "passes"),
    [
        ("partner_not_last", NS12, True),
        ("partner_not_last", NS13, True),
        ("partner_not_last", NS14, False),
        ("double_down_only", NS12, True),
        ("double_down_only", NS13, False),
        ("double_down_only", NS14, False),
        ("first_with_second_or_third", NS12, True),
        ("first_with_second_or_third", NS13, True),
        ("first_with_second_or_third", NS14, False),
    ],
)
def test_pass_a_condition(condition: str, order: str, passes: bool) -> None:
    s = ns_at_a(prof(pass_a={"condition": condition}))
    assert s.deal_level == "A" and s.declarer == "NS" and s.is_a_attempt()
    after = s.after_deal(order)
    if passes:
        assert after.winner == "NS" and after.over
        assert after.a_failures == {"NS": 0, "EW": 0}
        with pytest.raises(ValueError, match="match is over"):
            after.after_deal(NS12)
    else:
        assert after.winner is None and not after.over
        assert after.levels["NS"] == "A" and after.a_failures["NS"] == 1
        assert after.history[-1].gained == 0  # a failed attempt gains nothing


def test_named_profiles_pass_a_conditions() -> None:
    assert ns_at_a(load_profile("swiss-421")).after_deal(NS13).winner is None
    assert ns_at_a(load_profile("swiss-421")).after_deal(NS12).winner == "NS"
    assert ns_at_a(load_profile("school-double-down")).after_deal(NS13).winner is None
    assert ns_at_a(load_profile("hefei-final")).after_deal(NS13).winner == "NS"


def test_pass_a_only_in_deal_at_own_level() -> None:
    s = play(MatchState.new(prof()), EW12)  # EW 5, declares next
    s = ns_at_a_from(play(s, NS12, NS12, NS12))  # NS 5, 8, J; then A (declarer NS)
    s = play(MatchState.new(prof()), NS12, NS12, NS12, NS12)  # NS at A, declares
    s = s.after_deal(EW14)  # EW wins the A deal: NS fails once, EW 3 and declares
    assert s.deal_level == "3" and s.declarer == "EW" and s.a_failures["NS"] == 1
    s2 = s.after_deal(NS12)  # NS at A wins double down at EW's level 3: no pass
    assert s2.winner is None and s2.levels["NS"] == "A"
    assert s2.a_failures["NS"] == 1  # not an attempt either
    assert s2.history[-1].a_attempt is None
    assert s2.deal_level == "A" and s2.declarer == "NS"
    s3 = s2.after_deal(NS12)  # now at its own A
    assert s3.winner == "NS"


def test_failed_attempt_counts_whoever_wins() -> None:
    s = ns_at_a(prof())
    s = s.after_deal(EW13)  # EW wins the deal played at NS's A
    assert s.a_failures == {"NS": 1, "EW": 0} and s.history[-1].a_attempt == "failed"
    assert s.levels == {"NS": "A", "EW": "4"}


@pytest.mark.parametrize(
    ("reset_to", "expected"),
    [("2", "2"), ("J", "J"), ("10", "T"), ("never", "A")],
)
def test_three_failures_reset(reset_to: str, expected: str) -> None:
    s = ns_at_a(prof(pass_a={"reset_to": reset_to, "attempts": 3}))
    s = play(s, NS14, NS14)
    assert s.a_failures["NS"] == 2 and s.levels["NS"] == "A"
    s = s.after_deal(NS14)  # third failure
    assert s.a_failures["NS"] == 0  # the count starts again
    assert s.levels["NS"] == expected
    assert s.history[-1].a_attempt == ("failed" if reset_to == "never" else "reset")
    assert s.deal_level == expected and s.declarer == "NS"


def test_failure_count_restarts_after_reset_to_j() -> None:
    s = ns_at_a(load_profile("school-double-down"))
    s = play(s, NS13, NS13, NS13)  # 1-3 is not a pass under double_down_only
    assert s.levels["NS"] == "J" and s.a_failures["NS"] == 0
    s = play(s, NS12)  # J -> A
    s = s.after_deal(EW14)
    assert s.a_failures["NS"] == 1


def test_named_profile_reset_targets() -> None:
    for name, expected in [
        ("huaian", "2"),
        ("jiangsu-points", "2"),
        ("standard", "A"),
        ("school-double-down", "J"),
        ("national", "2"),
    ]:
        s = ns_at_a(load_profile(name))
        s = play(s, NS14, NS14, NS14)  # three failed attempts (1-4 never passes)
        assert s.levels["NS"] == expected, name


def test_both_failure_counts_are_separate() -> None:
    s = ns_at_a(prof())
    s = s.after_deal(EW12)  # NS fails 1; EW 5
    s = play(s, EW12, EW12, EW12)  # EW 8, J, A
    assert s.levels["EW"] == "A" and s.declarer == "EW"
    s = s.after_deal(NS14)  # EW fails 1; NS wins at EW's A: stays A, no attempt of NS
    assert s.a_failures == {"NS": 1, "EW": 1}


# ------------------------------------------------------------------ streak bonus (000 篇7)
def test_three_firsts_in_a_row_bonus() -> None:
    p = prof(streak_bonus={"enabled": True})
    s = play(MatchState.new(p), NS14, NS14)
    assert s.levels["NS"] == "4"
    s = s.after_deal(NS14)  # S first a third time: 1 + 1
    assert s.levels["NS"] == "6" and s.history[-1].bonus == 1
    s = s.after_deal(NS14)  # the run starts again
    assert s.levels["NS"] == "7"


def test_streak_is_by_player_by_default() -> None:
    p = prof(streak_bonus={"enabled": True})
    s = play(MatchState.new(p), NS14, "NSEW", NS14)  # S, N, S: not the same player
    assert s.levels["NS"] == "7" and s.history[-1].bonus == 0  # 2 +1 +3 +1
    pt = prof(streak_bonus={"enabled": True, "by": "team"})
    s = play(MatchState.new(pt), NS14, "NSEW", NS14)
    assert s.levels["NS"] == "8" and s.history[-1].bonus == 1


def test_no_streak_bonus_by_default() -> None:
    s = play(MatchState.new(prof()), NS14, NS14, NS14)
    assert s.levels["NS"] == "5"


# ------------------------------------------------------------------ deal points
def test_six_deal_points_fixed_level() -> None:
    s = MatchState.new(load_profile("six-deal-points"))
    assert s.deal_level == "2"
    s = play(s, NS12, EW13, NS14, EW14, NS13)
    assert s.deal_points == {"NS": 6, "EW": 3}
    assert s.levels == {"NS": "2", "EW": "2"} and s.deal_level == "2"
    assert s.winner is None
    s = s.after_deal(EW12)
    assert s.deal_points == {"NS": 6, "EW": 6} and not s.over  # tie -> one more deal
    s = s.after_deal(EW14)
    assert s.winner == "EW" and s.deals_played == 7


def test_deal_points_tie_draw_option() -> None:
    p = profile_from_dict(
        {
            **describe_profile(load_profile("six-deal-points")),
            "deals": {**describe_profile(load_profile("six-deal-points"))["deals"], "tie": "draw"},
        }
    )
    s = play(MatchState.new(p), NS12, EW12, NS13, EW13, NS14, EW14)
    assert s.over and s.winner is None
    assert s.result().match_points == {"NS": 1, "EW": 1}


def test_random_level_is_seeded_and_explicit() -> None:
    p = load_profile("eight-deal-random-level")
    a = play(MatchState.new(p, seed=7), NS12, EW12, NS13)
    b = play(MatchState.new(p, seed=7), NS12, EW12, NS13)
    assert [d.level for d in a.history] == [d.level for d in b.history]
    assert a.deal_level == b.deal_level
    levels = {
        MatchState.new(p, seed=k).deal_level for k in range(200)
    }  # 200 cuts of a 108-card deck
    assert levels <= set(LEVELS) | {None} and len(levels) >= 10
    s = MatchState.new(p, first_level="10")
    assert s.deal_level == "T" and s.wilds
    s = s.after_deal(NS12, next_level=None)  # a joker cut: no level card, no wilds
    assert s.deal_level is None and not s.wilds
    s = s.after_deal(EW12, next_level="k")
    assert s.deal_level == "K" and s.history[-1].level is None
    with pytest.raises(ValueError, match="not a level"):
        s.after_deal(NS12, next_level="1")
    with pytest.raises(ValueError, match="only for random-level"):
        MatchState.new(load_profile("huaian")).after_deal(NS12, next_level="5")
    with pytest.raises(ValueError, match="only for random-level"):
        MatchState.new(load_profile("huaian"), first_level="5")


def test_draw_level_frequencies() -> None:
    rng = random.Random(1)
    draws = [draw_level(rng) for _ in range(10_800)]
    assert 200 < draws.count(None) < 600  # 4 jokers in 108 cards: about 400
    assert all(400 < draws.count(r) < 1200 for r in LEVELS)  # 8 in 108: about 800


def test_eight_deal_match_ends_after_eight() -> None:
    s = MatchState.new(load_profile("eight-deal-random-level"), seed=1)
    s = play(s, *([NS13, EW14] * 4))
    assert s.deals_played == 8 and s.winner == "NS" and s.deal_points == {"NS": 8, "EW": 4}


# ------------------------------------------------------------------ time called
def test_time_higher_level_wins() -> None:
    s = play(MatchState.new(load_profile("swiss-421")), NS12, EW13)
    r = s.result_at_time()
    assert r.winner == "NS" and r.decided_by == "level" and not r.needs_extra_deal
    assert r.match_points == {"NS": 2, "EW": 0}
    assert r.level_difference == {"NS": 2, "EW": -2}


def test_time_tie_draw_swiss() -> None:
    s = play(MatchState.new(load_profile("swiss-421")), NS13, EW13)
    r = s.result_at_time()
    assert r.winner is None and r.decided_by == "draw"
    assert r.match_points == {"NS": 1, "EW": 1}


def test_time_tie_reached_first() -> None:
    s = play(MatchState.new(load_profile("hefei-final")), NS13, EW13)  # NS 4 first, then EW 4
    r = s.result_at_time()
    assert r.winner == "NS" and r.decided_by == "reached_first"
    s = play(MatchState.new(load_profile("hefei-final")), EW13, NS13)
    assert s.result_at_time().winner == "EW"


def test_time_tie_last_deal_winner() -> None:
    s = play(MatchState.new(load_profile("club-531")), NS13, EW13)  # 5 - 5
    r = s.result_at_time()
    assert r.winner == "EW" and r.decided_by == "last_deal_winner"


def test_time_tie_extra_deal() -> None:
    p = prof(time={"limit_minutes": 40, "tie": "extra_deal"})
    s = play(MatchState.new(p), NS13, EW13)
    r = s.result_at_time()
    assert r.needs_extra_deal and r.winner is None
    s = s.after_deal(NS13)
    assert s.result_at_time(extra_deals_played=1).winner == "NS"


def test_time_no_deal_played_is_a_draw() -> None:
    r = MatchState.new(load_profile("hefei-final")).result_at_time()
    assert r.winner is None and r.decided_by == "draw"


def test_time_after_pass_a_and_national_points() -> None:
    s = ns_at_a(load_profile("national")).after_deal(NS12)
    r = s.result_at_time()
    assert r.winner == "NS" and r.decided_by == "passed_a"
    assert r.match_points == {"NS": 3, "EW": 1}
    assert s.result() == r
    with pytest.raises(ValueError, match="not over"):
        MatchState.new(load_profile("national")).result()


# ------------------------------------------------------------------ forfeits
def test_forfeit_swiss_two_nil_and_ten_levels() -> None:
    s = play(MatchState.new(load_profile("swiss-421")), NS12)
    f = s.after_forfeit("NS")
    assert f.winner == "EW" and f.over and f.forfeited_by == "NS"
    r = f.result()
    assert r.decided_by == "forfeit"
    assert r.match_points == {"EW": 2, "NS": 0}
    assert r.level_difference == {"EW": 10, "NS": -10}
    assert f.history[-1].forfeit


def test_forfeit_standard_three_levels() -> None:
    f = MatchState.new(load_profile("standard")).after_forfeit("EW")
    assert f.winner == "NS" and f.result().level_difference == {"NS": 3, "EW": -3}


def test_forfeit_deal_lost_option() -> None:
    p = prof(fouls={"penalty": "deal_lost", "forfeit_levels": 3})
    s = play(MatchState.new(p), NS13)  # NS 4
    f = s.after_forfeit("NS")
    assert f.levels == {"NS": "4", "EW": "5"} and not f.over
    assert f.declarer == "EW" and f.deal_level == "5" and f.deals_played == 2


def test_forfeit_bad_team() -> None:
    with pytest.raises(ValueError, match="'NS' or 'EW'"):
        MatchState.new(load_profile("huaian")).after_forfeit("N")


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    ("order", "needle"),
    [
        (["S", "E", "N"], "exactly once"),
        (["S", "E", "N", "N"], "exactly once"),
        (["S", "E", "N", "W", "S"], "exactly once"),
        (["S", "E", "N", "X"], "'X' is not a seat"),
        ([1, "E", "N", "W"], "is not a seat"),
        ("SEN", "exactly once"),
    ],
)
def test_bad_order(order: Any, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        MatchState.new(load_profile("huaian")).after_deal(order)


def test_order_accepts_lower_case_and_strings() -> None:
    s = MatchState.new(load_profile("huaian"))
    assert s.after_deal(["s", "e", "n", "w"]) == s.after_deal("S E N W") == s.after_deal("S,E,N,W")


def test_new_needs_a_profile() -> None:
    with pytest.raises(ValueError, match="needs a Profile"):
        MatchState.new("huaian")  # type: ignore[arg-type]


def test_team_of() -> None:
    assert [team_of(s) for s in "NESW"] == ["NS", "EW", "NS", "EW"]
    with pytest.raises(ValueError):
        team_of("X")


# ------------------------------------------------------------------ properties
PROMOTING = [n for n in list_profiles() if load_profile(n).promotes]
SEAT_ORDERS = st.permutations(["N", "E", "S", "W"])


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(list_profiles()),
    overflow=st.booleans(),
    orders=st.lists(SEAT_ORDERS, min_size=1, max_size=40),
)
def test_properties(name: str, overflow: bool, orders: list[list[str]]) -> None:
    base = load_profile(name)
    d = describe_profile(base)
    if base.promotes:
        d["promotion"]["overflow_penalises"] = overflow
        d["promotion"]["pass_a_penalty_double_down"] = 3 if overflow else 0
        d["promotion"]["pass_a_penalty_single_down"] = 2 if overflow else 0
    p = profile_from_dict(d)
    s = MatchState.new(p, seed=len(orders))
    for order in orders:
        if s.over:
            break
        before = copy.deepcopy(s)
        before_json = s.to_json()
        was_attempt = s.is_a_attempt()
        declarer, deal_level = s.declarer, s.deal_level
        nxt = s.after_deal(order)
        # never mutates
        assert s == before and s.to_json() == before_json
        # levels always within 2..A
        assert all(v in LEVELS for v in nxt.levels.values())
        assert all(0 <= v < p.pass_a.attempts for v in nxt.a_failures.values())
        if nxt.winner is not None and p.promotes:
            # set only after a deal the winner played at its own level A
            assert was_attempt and declarer == nxt.winner and deal_level == "A"
            assert s.levels[nxt.winner] == "A" and team_of(order[0]) == nxt.winner
        if not p.promotes:
            assert nxt.levels == {"NS": "2", "EW": "2"}
            assert (
                sum(nxt.deal_points.values())
                == sum(s.deal_points.values()) + ({2: 3, 3: 2, 4: 1}[nxt.history[-1].partner_place])
            )
        else:
            # the next deal is at the winner's level
            assert nxt.declarer == team_of(order[0])
            assert nxt.deal_level == nxt.levels[nxt.declarer]
        assert len(nxt.history) == len(s.history) + 1
        s = nxt


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(PROMOTING), orders=st.lists(SEAT_ORDERS, max_size=30))
def test_time_result_is_consistent(name: str, orders: list[list[str]]) -> None:
    s = MatchState.new(load_profile(name))
    for o in orders:
        if s.over:
            break
        s = s.after_deal(o)
    r = s.result_at_time()
    if r.winner is not None and not s.over:
        other = "EW" if r.winner == "NS" else "NS"
        assert LEVELS.index(s.levels[r.winner]) >= LEVELS.index(s.levels[other])
    assert r.level_difference["NS"] == -r.level_difference["EW"]


# ------------------------------------------------------------------ ending on time, series
def test_after_time_called_settles_the_match() -> None:
    s = play(MatchState.new(load_profile("hefei-final")), NS13, EW12)  # NS 4, EW 5
    done = s.after_time_called()
    assert done.over and done.winner == "EW" and done.decided_by == "level"
    assert done.result().winner == "EW"
    assert not s.over  # unchanged
    with pytest.raises(ValueError, match="match is over"):
        done.after_deal(NS12)


def test_after_time_called_extra_deal_then_settles() -> None:
    p = prof(time={"limit_minutes": 40, "tie": "extra_deal"})
    s = play(MatchState.new(p), NS13, EW13).after_time_called()
    assert not s.over and s.time_called
    s = s.after_deal(EW14).after_time_called()
    assert s.over and s.winner == "EW"


def test_decided_by_and_last_order() -> None:
    s = MatchState.new(load_profile("huaian"))
    assert s.last_order is None
    s = s.after_deal(NS13)
    assert s.last_order == ("S", "E", "N", "W")
    won = ns_at_a(load_profile("huaian")).after_deal(NS12)
    assert won.decided_by == "passed_a"
    six = play(MatchState.new(load_profile("six-deal-points")), *([NS12] * 6))
    assert six.decided_by == "deal_points" and six.winner == "NS"


def test_best_of_three_series() -> None:
    from engine.match import Series

    p = prof(match={"best_of": 3})
    s = Series.new(p)
    game1 = [NS12] * 5  # NS to A and through
    for o in game1:
        s = s.after_deal(o)
    assert s.wins == {"NS": 1, "EW": 0} and not s.over
    assert s.current is not None and s.current.levels == {"NS": "2", "EW": "2"}
    for o in [EW12] * 5:
        s = s.after_deal(o)
    assert s.wins == {"NS": 1, "EW": 1} and s.winner is None
    for o in [NS12] * 5:
        s = s.after_deal(o)
    assert s.over and s.winner == "NS" and len(s.games) == 3
    with pytest.raises(ValueError, match="series is over"):
        s.after_deal(NS12)


def test_series_forfeit_loses_the_round() -> None:
    from engine.match import Series

    s = Series.new(prof(match={"best_of": 3})).after_deal(NS12).after_forfeit("NS")
    assert s.over and s.winner == "EW" and s.forfeited_by == "NS"


def test_reached_first_same_deal_falls_back_to_last_winner() -> None:
    p = prof(promotion={"overflow_penalises": True}, time={"limit_minutes": 60})
    s = play(MatchState.new(p), EW12, EW12, EW13)  # EW 5, 8, T
    s = play(s, NS12, NS12, NS12, NS13)  # NS 5, 8, J, K
    s = s.after_deal(NS12)  # K + 3: NS A, EW T - 2 = 8
    s = play(s, EW13, EW12)  # EW fails NS's A... EW 10, then K
    assert s.levels["EW"] == "K"
    r = s.result_at_time()
    assert r.winner == "NS" and r.decided_by == "level"
