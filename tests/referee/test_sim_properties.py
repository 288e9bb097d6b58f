"""Property tests over simulated deals: counts, conservation, legality, fold == live state,
every injected foul flagged and none in clean games. Modest counts here; more in bench/sim.py."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as hst

from engine.cards import parse_card
from engine.deal import TableState, apply_event, fold
from engine.events import FOUL_KINDS
from engine.profiles import load_profile, profile_from_toml
from engine.referee import Referee
from engine.sim import simulate

CLEAN = [
    ("huaian", 1),
    ("standard", 2),
    ("national", 3),
    ("swiss-421", 4),
    ("jiangsu-points", 5),
    ("hefei-qualifier", 6),
    ("six-deal-points", 7),
    ("eight-deal-random-level", 8),
    ("club-531", 9),
    ("school-double-down", 10),
]


@pytest.mark.parametrize(("name", "seed"), CLEAN)
def test_clean_games(name: str, seed: int) -> None:
    p = load_profile(name)
    r = simulate(p, deals=30, seed=seed)
    ev = r.events
    assert not [e for e in ev if e.type in ("foul", "warning", "notice")]
    assert all(e["legal"] for e in ev if e.type == "play")
    st = TableState.new(p)
    deal_ix = -1
    played: dict[str, list[str]] = {}
    tribute_in: dict[str, list[str]] = {}
    for e in ev:
        apply_event(st, e.type, e.t, e.data)
        d = st.deal
        if e.type == "deal_started":
            deal_ix += 1
            played = {s: [] for s in "NESW"}
            tribute_in = {s: [] for s in "NESW"}
        if d is None:
            continue
        assert all(0 <= n <= 27 for n in d.counts.values())
        if e.type == "play":
            played[e["seat"]].extend(e["cards"])
            # 108 cards accounted for: in hands (counts) + played
            assert sum(d.counts.values()) + sum(len(v) for v in played.values()) == 108
            assert max(d.played.values()) <= 2
            # every card played came from the seat's dealt hand or was received
            dealt = Counter(str(c) for c in r.hands[deal_ix][e["seat"]])
            dealt.update(tribute_in[e["seat"]])
            assert not Counter(played[e["seat"]]) - dealt
        if e.type in ("tribute", "tribute_returned"):
            tribute_in[e["to"]].append(e["card"])
    assert fold(ev, p) == r.referee.state
    assert r.referee.state.deal_no == 30
    assert parse_card("SA")  # notation intact


def test_every_injected_foul_flagged() -> None:
    kinds: set[str] = set()
    lenient = profile_from_toml('extends = "standard"\nname = "lenient"\n[fouls]\nlimit = 99\n')
    runs = [
        (load_profile("standard"), 11, 0.04),
        (load_profile("huaian"), 12, 0.04),
        (load_profile("national"), 13, 0.04),
        (load_profile("swiss-421"), 14, 0.04),
        (lenient, 15, 0.15),  # no forfeits: tribute deals happen, with mischief in them
        # national without forfeits: hand voided by a wrong tribute, partner lead bans
        (profile_from_toml('extends = "national"\nname = "nl"\n[fouls]\nlimit = 99\n'), 3, 0.15),
    ]
    for p, seed, rate in runs:
        name = p.name
        r = simulate(p, deals=10, seed=seed, mischief=rate)
        got = Counter(
            (e.deal, e["seat"], e["kind"], e.type)
            for e in r.events
            if e.type in ("foul", "warning")
        )
        want = Counter(
            (m.deal, m.seat, m.kind, "foul" if m.outcome == "foul" else "warning") for m in r.truth
        )
        assert got == want, (name, seed)
        kinds |= {m.kind for m in r.truth}
        assert fold(r.events, p) == r.referee.state
    assert kinds == set(FOUL_KINDS)


def test_fold_equals_live_state_at_every_prefix() -> None:
    p = load_profile("standard")
    r = simulate(p, deals=3, seed=21, mischief=0.03)
    ref = Referee(p)
    for i, o in enumerate(r.observations):
        ref.feed(o)
        if i % 25 == 0:
            assert fold(ref.events, p) == ref.state
    assert [e.to_json() for e in ref.events] == [e.to_json() for e in r.events]


def test_time_limited_fixed_deals_and_best_of_three() -> None:
    short = profile_from_toml('extends = "huaian"\nname = "short"\n[time]\nlimit_minutes = 25\n')
    r = simulate(short, deals=10, seed=3)
    ends = [e for e in r.events if e.type == "match_ended"]
    assert any(e.type == "time_called" for e in r.events)
    assert {e["reason"] for e in ends} <= {
        "level",
        "reached_first",
        "last_deal_winner",
        "passed_a",
        "draw",
    }
    six = simulate(load_profile("six-deal-points"), deals=13, seed=4)
    first = next(e for e in six.events if e.type == "match_ended")
    assert first.deal >= 6 and first["reason"] == "deal_points"
    bo3 = profile_from_toml(
        'extends = "standard"\nname = "bo3"\n[match]\nbest_of = 3\n[time]\nlimit_minutes = 15\n'
    )
    r3 = simulate(bo3, deals=12, seed=5)
    series = [e for e in r3.events if e.type == "series_ended"]
    assert series and series[0]["winner"] in ("NS", "EW")
    assert max(series[0]["wins"].values()) == 2


NAMES = [n for n, _ in CLEAN]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=hst.sampled_from(NAMES),
    seed=hst.integers(min_value=0, max_value=2**31),
    rate=hst.sampled_from([0.0, 0.0, 0.02, 0.06]),
)
# found by a CI run (2026-12-05): S and W both played out of turn before N, and the decoder
# took N's play back past both plays (a late report), so the taken-back CA played again later
# was a third copy; a turn is now taken back past at most one other seat's play
@example(name="huaian", seed=17, rate=0.06)
def test_random_seeds_invariants(name: str, seed: int, rate: float) -> None:
    """Many seeded matches (50 examples x 10 deals per run, more in bench/sim.py): fold equals
    the live state, counts stay in 0..27, the truth equals the flags, clean games are clean."""
    p = load_profile(name)
    r = simulate(p, deals=10, seed=seed, mischief=rate)
    assert fold(r.events, p) == r.referee.state
    got = Counter(
        (e.deal, e["seat"], e["kind"], e.type) for e in r.events if e.type in ("foul", "warning")
    )
    want = Counter(
        (m.deal, m.seat, m.kind, "foul" if m.outcome == "foul" else "warning") for m in r.truth
    )
    assert got == want
    assert not [e for e in r.events if e.type == "notice"]
    if rate == 0.0:
        assert not got and all(e["legal"] for e in r.events if e.type == "play")
    for e in r.events:
        if e.type == "play":
            assert 0 <= e["left"] <= 26


def test_a_banned_last_card_lead_moves_the_turn_on() -> None:
    """national 2022: W plays out of turn, so partner E may not lead a single next trick; E's
    last card is a single, leads it anyway (illegal, loses the trick) and is out. The turn must
    move on from E (it stayed there and the simulator asked an empty hand to play; found by the
    property test above, seed 148 at mischief 0.02)."""
    p = load_profile("national")
    r = simulate(p, deals=10, seed=148, mischief=0.02)
    assert fold(r.events, p) == r.referee.state
    banned = [
        e
        for e in r.events
        if e.type == "play" and not e["legal"] and e["left"] == 0 and "may not lead" in e["reason"]
    ]
    assert banned, "the seed no longer reaches a banned last-card lead"
    for i, e in enumerate(r.events):
        if e.type == "seat_out":
            d = fold(r.events[: i + 1], p).deal
            assert d is not None and (d.over or d.turn not in d.order), (i, d.turn, d.order)
